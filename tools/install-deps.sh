#!/usr/bin/env bash
# Installs the Debian packages blobrt builds and tests with (as root; a no-op when all are
# there). Used by ci/deps.sh (the CI stage every other one runs first) and tools/gpu-bundle.sh;
# extra package names may be given.
set -euo pipefail

packages=(
  g++ meson ninja-build pkg-config python3 python3-dev python3-pip python3-venv binutils cmake
  libprotobuf-dev protobuf-compiler
  libboost-dev libboost-filesystem-dev
  libblis-dev
  ocl-icd-opencl-dev opencl-headers libclblast-dev pocl-opencl-icd clinfo
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
  libgoogle-glog-dev libgflags-dev
  libcli11-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin
  "$@"
)
missing=()
for p in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "$0: run as root (or install these first): ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python: nanobind builds the extension, numpy and pytest test it, mypy and basedpyright (it
# bundles pyright) type-check the examples and tests (tests/typing/typing_test.py), jsonschema checks
# `blobrt info --json` against docs/blobrt-info.schema.json (PyPI). meson-python is
# not installed here: `pip install .` fetches it into an isolated build environment, and
# its meson must not shadow Debian's for the other builds.
python_packages=(nanobind numpy pytest mypy basedpyright jsonschema)
if ! python3 -c 'import nanobind, numpy, pytest, mypy, basedpyright, jsonschema' 2>/dev/null; then
  echo "== installing from PyPI: ${python_packages[*]}"
  python3 -m pip install -q "${python_packages[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${python_packages[@]}"
fi

