#!/usr/bin/env bash
# Stage suite: the whole meson test suite on every backend found (host, blis, opencl on
# PoCL, cuda where a GPU is), libblobrt-dist's under mpirun, the Python package's pytest.
source "$(dirname "$0")/lib.sh"
needs build
echo "== test suite (every backend found: host, blis, opencl on PoCL, cuda where a GPU is)"
status=0
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" || status=1
keep_junit "$build/meson-logs/testlog.junit.xml" suite
stage_summary "$status" suite
