#!/usr/bin/env bash
# Stage gpu-bundle: the GPU bundle (tools/gpu-bundle.sh) built, size-checked, moved, and
# run here on the CPU backends (docs/cuda.md).
source "$(dirname "$0")/lib.sh"
needs deps
echo "== GPU bundle: built, size-checked, moved, and run here on the CPU backends (docs/cuda.md)"
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "skipped: no CUDA toolkit in /usr/local/cuda, so no CUDA plugin to bundle"
  exit 0
fi
status=0
bundle_work="$build-gpu-bundle-test"
BUNDLE_BUILD_DIR="$build-gpu-bundle" tests/cuda/gpu_bundle_test.sh "$bundle_work" || status=1
names=()
for f in "$bundle_work"/junit/*.junit.xml; do
  [ -f "$f" ] || continue
  name="gpu-bundle-$(basename "$f" .junit.xml)"
  keep_junit "$f" "$name"
  names+=("$name")
done
stage_summary "$status" "${names[@]}"
