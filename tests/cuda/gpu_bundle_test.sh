#!/usr/bin/env bash
# The GPU bundle, checked where there is no GPU (CI): it builds, stays under its size limit,
# holds no NVIDIA library, still runs after being moved elsewhere, passes on the CPU
# backends and reports why CUDA cannot run here.
#   tests/cuda/gpu_bundle_test.sh WORKDIR     (the JUnit files of the bundle's run end up in WORKDIR/junit)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$1"
rm -rf "$work"
mkdir -p "$work"
work="$(cd "$work" && pwd)"  # absolute: some checks run from inside it
fail() { echo "gpu_bundle_test: FAILED: $*" >&2; exit 1; }

start=$SECONDS
"$root/tools/gpu-bundle.sh" "$work/built"
# The bundle's build, as the stage's compile time in CI's table of stage times (ci/lib.sh).
[ -z "${BLOBRT_CI_COMPILE_LOG:-}" ] || echo "gpu-bundle $((SECONDS - start))" >> "$BLOBRT_CI_COMPILE_LOG"
# Relocated: nothing may depend on where it was built.
mv "$work/built" "$work/moved"
bundle="$work/moved"

nvidia=$(find "$bundle" -name 'libcuda.so*' -o -name 'libcudart.so*' -o -name 'libcublas*.so*' -o -name 'libnvidia-*')
[ -z "$nvidia" ] || fail "the bundle holds NVIDIA libraries the GPU node provides: $nvidia"
for f in bin/blobrt bin/blobrt-conformance bin/blobrt-bench bin/blobrt-bench-cuda bin/blobrt-caffe-demo \
         libexec/blobrt-plugin-scanner libexec/blobrt/bench_report.py libexec/blobrt/tests/test_large_blob \
         lib/blobrt/plugins.d/libblobrt-cuda.so lib/blobrt/plugins.d/cuda.plugin lib/blobrt/plugins.d/blis.plugin \
         lib/blobrt/plugins.d/opencl.plugin libexec/blobrt/tests/test_blob run-on-gpu.sh env.sh BUNDLE.txt; do
  [ -e "$bundle/$f" ] || fail "missing $f"
done
# sm_90 machine code and compute_90 PTX in the CUDA plugin.
if command -v /usr/local/cuda/bin/cuobjdump >/dev/null; then
  elf=$(/usr/local/cuda/bin/cuobjdump --list-elf "$bundle/lib/blobrt/plugins.d/libblobrt-cuda.so" 2>&1 || true)
  ptx=$(/usr/local/cuda/bin/cuobjdump --list-ptx "$bundle/lib/blobrt/plugins.d/libblobrt-cuda.so" 2>&1 || true)
  grep -q "sm_90" <<<"$elf" || fail "no sm_90 code in the CUDA plugin: $elf"
  grep -q "sm_90" <<<"$ptx" || fail "no compute_90 PTX in the CUDA plugin: $ptx"
fi

out="$work/out"
status=0
env -u BLOBRT_PLUGIN_PATH -u BLOBRT_PLUGIN_SCANNER -u LD_LIBRARY_PATH \
  "$bundle/run-on-gpu.sh" --bench smoke --cpu-bench "$out" || status=$?
mkdir -p "$work/junit"
tar -C "$work/junit" -xzf "$out/logs.tar.gz" --wildcards '*.junit.xml'
[ "$status" -eq 0 ] || fail "run-on-gpu.sh exited $status; summary:$(printf '\n'; cat "$out/summary.txt")"

for f in summary.txt info.txt info.json bench.json logs.tar.gz; do
  [ -s "$out/$f" ] || fail "run-on-gpu.sh wrote no $f"
done
n=$(find "$out" -type f | wc -l)
[ "$n" -le 8 ] || fail "run-on-gpu.sh wrote $n files; a GPU lending tool brings back 8"
grep -q "^PASSED   test_blob " "$out/summary.txt" || fail "test_blob did not pass in the bundle"
grep -q "^PASSED   conformance " "$out/summary.txt" || fail "conformance did not pass in the bundle"
[ "$(grep -c "^PASSED   test_large_blob " "$out/summary.txt")" -eq 1 ] || fail "test_large_blob did not run exactly once"
grep -q "^PASSED   benchmarks-smoke " "$out/summary.txt" || fail "the benchmarks did not run"
# The Python extension is built by the node's Python against the moved bundle (here, this
# machine's Python, which has nanobind and numpy), and the package's tests pass with it.
grep -q "^PASSED   python-build " "$out/summary.txt" || fail "the Python extension was not built against the bundle"
grep -q "^PASSED   python-tests " "$out/summary.txt" || fail "the Python tests did not pass against the bundle"
# CI's bundle holds no Caffe build: both Caffe steps say so.
grep -q "^SKIPPED  caffe-lenet-gpu: the bundle holds no Caffe build" "$out/summary.txt" ||
  fail "the CUDA build's Caffe step is not skipped with its reason"
grep -q "^SKIPPED  caffe-lenet-portable: the bundle holds no portable Caffe build .*CAFFE_PORTABLE_BUILD" \
  "$out/summary.txt" || fail "the portable Caffe step is not skipped with its reason"
grep -q "^SKIPPED  caffe-lenet-opencl: the bundle holds no portable Caffe build" "$out/summary.txt" ||
  fail "the OpenCL Caffe step is not skipped with its reason"
# The Caffe step's own usage errors (the layers plugin is the cuda backend's).
for usage_error in "caffe|$work/lenet|--backend" "caffe|$work/lenet|--layer-plugin|--backend|opencl" \
                   "caffe|$work/lenet|--gpu" "caffe"; do
  IFS='|' read -r -a args <<<"$usage_error"
  rc=0
  "$bundle/libexec/blobrt/caffe-lenet-gpu.sh" "${args[@]}" > /dev/null 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "caffe-lenet-gpu.sh ${args[*]} exited $rc, not 2 (a usage error)"
done
[ ! -e "$work/lenet" ] || fail "a usage error of caffe-lenet-gpu.sh wrote $work/lenet"
if ! command -v nvidia-smi >/dev/null; then
  grep -q "^SKIPPED  selftest-cuda: the CUDA backend is not usable here: .*cudaErrorInsufficientDriver" "$out/summary.txt" \
    || fail "CUDA's no-driver reason is not reported: $(cat "$out/summary.txt")"
  grep -q "^SKIPPED  compute-sanitizer: no usable CUDA device" "$out/summary.txt" \
    || fail "compute-sanitizer's skip is not reported"
  grep -q "^SKIPPED  python-dlpack: no device here says it is CUDA memory" "$out/summary.txt" \
    || fail "the DLPack check's skip is not reported"
  grep -q "^SKIPPED  benchmarks-cuda-smoke: no usable device holds CUDA memory (.*cudaErrorInsufficientDriver" \
    "$out/summary.txt" || fail "blobrt-bench-cuda's skip is not reported: $(grep benchmarks-cuda "$out/summary.txt")"
  [ ! -e "$out/bench-cuda.json" ] || fail "a skipped blobrt-bench-cuda left bench-cuda.json"
fi

# The second call of docs/cuda.md: the benchmarks alone, with the 2^31 + 8 floats test.
out2="$work/out-bench"
status=0
env -u BLOBRT_PLUGIN_PATH -u BLOBRT_PLUGIN_SCANNER -u LD_LIBRARY_PATH \
  "$bundle/run-on-gpu.sh" --bench-only --bench smoke "$out2" || status=$?
[ "$status" -eq 0 ] || fail "run-on-gpu.sh --bench-only exited $status; summary:$(printf '\n'; cat "$out2/summary.txt")"
grep -q "^PASSED   test_large_blob " "$out2/summary.txt" || fail "--bench-only did not run test_large_blob"
! grep -qE "^(PASSED|FAILED|SKIPPED) +(test_blob |conformance|python)" "$out2/summary.txt" \
  || fail "--bench-only ran the suites: $(cat "$out2/summary.txt")"
grep -q "^         test_large_blob devices: ran .*; skipped " "$out2/summary.txt" \
  || fail "no line says on which devices test_large_blob ran: $(cat "$out2/summary.txt")"
[ "$(find "$out2" -type f | wc -l)" -le 8 ] || fail "run-on-gpu.sh --bench-only wrote more than 8 files"
# Usage errors end the script before it writes anything (an option alone is not an OUTDIR).
before=$(cd "$work" && find . | sort)
for usage_error in "--no-such-option|$out2" "--bench-only" "--bench" "$out2|$out" "--bench|fast|$out2"; do
  IFS='|' read -r -a args <<<"$usage_error"
  rc=0
  (cd "$work" && "$bundle/run-on-gpu.sh" "${args[@]}" > /dev/null 2>&1) || rc=$?
  [ "$rc" -eq 2 ] || fail "run-on-gpu.sh ${args[*]} exited $rc, not 2 (a usage error)"
done
[ "$(cd "$work" && find . | sort)" = "$before" ] || fail "a usage error wrote into $work"
# A reused OUTDIR: an earlier run's benchmark results are not reported as this run's.
echo '{"benchmarks": []}' > "$out2/bench-cuda.json"
"$bundle/run-on-gpu.sh" --bench-only --bench none "$out2" > /dev/null 2>&1 || fail "--bench-only --bench none failed"
[ ! -e "$out2/bench-cuda.json" ] || fail "a stale bench-cuda.json survived a new run"
python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); assert b["benchmarks"], "no benchmark rows"' "$out/bench.json"
echo "gpu_bundle_test: passed ($(du -sh "$bundle" | cut -f1) bundle; $(tail -n 2 "$out/summary.txt" | sed -n 1p))"
