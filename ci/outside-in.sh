#!/usr/bin/env bash
# Stage outside-in: blobrt configured with a fresh prefix, installed there, and used by
# small pkg-config, meson and CMake projects (and a tree laid out as Caffe's CMake build)
# on every backend (tests/outside/outside_in_test.py).
source "$(dirname "$0")/lib.sh"
needs deps
echo "== outside-in: installed into a fresh prefix, used by pkg-config, meson and CMake projects"
status=0
outside="$(realpath -m "$build-outside")"
mkdir -p "$outside"
python3 "$root/tests/outside/outside_in_test.py" "$root" "$outside" "$junit_dir/outside-in.junit.xml" || status=1
stage_summary "$status" outside-in
