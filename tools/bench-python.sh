#!/usr/bin/env bash
# The Python package's figures (benchmarks/bench_python.py) on every backend of the build,
# each beside the C++ benchmark of the same Blob call in the same run.
#   tools/bench-python.sh        # run it on an idle machine
set -euo pipefail
source "$(dirname "$0")/bench-env.sh"
for backend in host blis opencl; do
  BLOBRT_BACKEND="$backend" BLOBRT_PLUGIN_PATH="$plugin_path" BLOBRT_PLUGIN_SYSTEM_PATH="" \
    PYTHONPATH="$root/$build/python" \
    python3 benchmarks/bench_python.py --cpp-bench "$build/benchmarks/blobrt-bench"
done
