#!/usr/bin/env bash
# One command from a fresh Debian 12 machine (as root) to a working blobrt:
#   tools/build.sh demo   install dependencies, build, show `blobrt info`, run the Caffe demo
#   tools/build.sh test   the same, then the whole test suite (what CI runs)
# BUILD_DIR (default: build) and MESON_ARGS (extra `meson setup` options) may be set.
set -euo pipefail

mode="${1:-demo}"
case "$mode" in
  demo|test) ;;
  *) echo "usage: tools/build.sh demo|test" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-build}"
cd "$root"

packages=(
  g++ meson ninja-build pkg-config python3 binutils
  libprotobuf-dev protobuf-compiler
  libboost-dev libboost-filesystem-dev
  libblis-dev
  ocl-icd-opencl-dev opencl-headers libclblast-dev pocl-opencl-icd clinfo
  libgtest-dev libgmock-dev libbenchmark-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "tools/build.sh: run as root (or install these first): ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The CUDA toolkit is not a Debian package here; meson finds it in /usr/local/cuda.
if [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
  export CUDA_PATH="${CUDA_PATH:-/usr/local/cuda}"
fi

echo "== configuring $build"
if [ -f "$build/build.ninja" ]; then
  meson setup --reconfigure "$build" -Dtests=enabled ${MESON_ARGS:-} >/dev/null
else
  meson setup "$build" -Dtests=enabled ${MESON_ARGS:-} >/dev/null
fi
echo "== building"
ninja -C "$build" >/dev/null

echo "== blobrt info"
meson devenv -C "$build" blobrt info
echo "== Caffe demo (the seeds' example, only its include changed)"
demo_dir="$(mktemp -d)"
meson devenv -C "$build" -w "$demo_dir" blobrt-caffe-demo | sed -n '1,3p;/ASUM/,/SUMSQ/p'
rm -rf "$demo_dir"

if [ "$mode" = test ]; then
  echo "== test suite"
  status=0
  meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" || status=$?
  python3 "$root/tools/test_summary.py" "$build/meson-logs/testlog.junit.xml"
  exit "$status"
fi
