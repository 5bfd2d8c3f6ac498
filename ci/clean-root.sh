#!/usr/bin/env bash
# Stage clean-root: the README's demo command (`tools/build.sh demo`) in a clean Debian 12
# root made with mmdebstrap, which holds only minbase and python3, then the one Caffe build
# (a Caffe-layout tree, portable) on it in that root with no CUDA file
# (tests/outside/clean_root_test.py).
source "$(dirname "$0")/lib.sh"
needs deps
echo "== clean root: tools/build.sh demo in a fresh Debian 12 (mmdebstrap minbase + python3)"
status=0
python3 "$root/tests/outside/clean_root_test.py" "$root" "$(realpath -m "$build-clean-root")" \
  "$junit_dir/clean-root.junit.xml" || status=1
stage_summary "$status" clean-root
