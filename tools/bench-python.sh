#!/usr/bin/env bash
# The Python package's figures (benchmarks/bench_python.py) on every backend of the build,
# each beside the C++ benchmark of the same Blob call in the same run.
#   tools/bench-python.sh        # run it on an idle machine
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-build}"
cd "$root"
[ -f "$build/build.ninja" ] || tools/build.sh demo
ninja -C "$build" >/dev/null
plugin_path="$(meson devenv -C "$build" --dump | sed -n "s/^BLOBRT_PLUGIN_PATH=[\"']\{0,1\}\([^\"']*\).*/\1/p")"
for backend in host blis opencl; do
  BLOBRT_BACKEND="$backend" BLOBRT_PLUGIN_PATH="$plugin_path" BLOBRT_PLUGIN_SYSTEM_PATH="" \
    PYTHONPATH="$root/$build/python" \
    python3 benchmarks/bench_python.py --cpp-bench "$build/benchmarks/blobrt-bench"
done
