#!/usr/bin/env bash
# Runs everything the bundle holds on this node and writes the results to OUTDIR:
#   run-on-gpu.sh [--bench full|smoke|none] [--bench-filter REGEX] [--bench-only] [--cpu-bench] OUTDIR
# Steps: blobrt info, blobrt selftest (auto and cuda), every GoogleTest suite,
# blobrt-conformance on every device (cuda:0 and any OpenCL device included), the
# conformance suite on cuda under compute-sanitizer memcheck, BVLC Caffe's LeNet in GPU
# mode where the bundle holds a Caffe build, Python, and the benchmarks:
# blobrt-bench-cuda (the CUDA device against its yardsticks in one run, then
# tools/bench_report.py --cuda), and with --cpu-bench blobrt-bench (every device at the CPU
# sizes). --bench-only: info, test_large_blob (2^31 + 8 floats) and the benchmarks alone.
# OUTDIR gets summary.txt, info.txt, info.json, logs.tar.gz (every log and JUnit file),
# bench-cuda.json + performance-results-cuda.md/.json where a GPU ran them, bench.json with
# --cpu-bench: at most 8 files, as a GPU lending tool may bring back only that many.
# Exit status 0 only if every step that could run here passed; a step that cannot run
# (no GPU, no compute-sanitizer) is reported as skipped with the reason.
set -uo pipefail

usage="usage: run-on-gpu.sh [--bench full|smoke|none] [--bench-filter REGEX] [--bench-only] [--cpu-bench] OUTDIR"
bench=full
bench_filter=""
bench_only=0
cpu_bench=0
outdir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bench|--bench-filter)
      [ $# -ge 2 ] || { echo "run-on-gpu.sh: $1 needs a value" >&2; echo "$usage" >&2; exit 2; }
      if [ "$1" = --bench ]; then bench="$2"; else bench_filter="$2"; fi
      shift 2 ;;
    --bench-only) bench_only=1; shift ;;
    --cpu-bench) cpu_bench=1; shift ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) echo "run-on-gpu.sh: unknown option $1" >&2; echo "$usage" >&2; exit 2 ;;
    *)
      [ -z "$outdir" ] || { echo "run-on-gpu.sh: one OUTDIR only ($outdir, then $1)" >&2; echo "$usage" >&2; exit 2; }
      outdir="$1"; shift ;;
  esac
done
[ -n "$outdir" ] || { echo "run-on-gpu.sh: no OUTDIR" >&2; echo "$usage" >&2; exit 2; }
case "$bench" in full|smoke|none) ;; *) echo "run-on-gpu.sh: --bench full|smoke|none" >&2; exit 2 ;; esac

here="$(CDPATH='' cd "$(dirname "$0")" && pwd)"
mkdir -p -- "$outdir" && out="$(CDPATH='' cd -- "$outdir" && pwd)" || { echo "run-on-gpu.sh: cannot use $outdir as OUTDIR" >&2; exit 2; }
# A reused OUTDIR: nothing of an earlier run may pass for this one's.
rm -f "$out"/summary.txt "$out"/info.txt "$out"/info.json "$out"/logs.tar.gz "$out"/bench.json \
  "$out"/bench-cuda.json "$out"/performance-results-cuda.md "$out"/performance-results-cuda.json
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
# shellcheck source=env.sh
. "$here/env.sh"
tests="$here/libexec/blobrt/tests"
summary="$out/summary.txt"
: > "$summary"
failed=0

note() { echo "$*" | tee -a "$summary"; }
# record NAME STATUS START: the summary line of a finished step (with its log's tail when
# it failed).
record() {
  local name="$1" rc="$2" start="$3"
  local junit="$logs/$name.junit.xml" skipped=""
  # A suite whose cases skipped (no GPU, memory short) says how many: PASSED alone would
  # read as "ran and passed" on a node whose driver is broken.
  if [ -f "$junit" ]; then
    local cases skips
    # Counted by element, not by line (pytest writes its file on one line).
    cases=$(grep -o '<testcase ' "$junit" | wc -l)
    skips=$(grep -o '<skipped' "$junit" | wc -l)
    [ "$skips" -gt 0 ] && skipped=", $skips of $cases cases skipped"
  fi
  if [ "$rc" -eq 0 ]; then
    note "PASSED   $name ($((SECONDS - start)) s$skipped)"
  else
    note "FAILED   $name (exit $rc, $((SECONDS - start)) s): last lines of $name.log:"
    tail -n 15 "$logs/$name.log" | sed 's/^/           /' | tee -a "$summary"
    failed=1
  fi
}
# step NAME COMMAND...: runs it with its output in NAME.log, records passed/FAILED.
step() {
  local name="$1"; shift
  local rc=0 start=$SECONDS
  "$@" > "$logs/$name.log" 2>&1 || rc=$?
  record "$name" "$rc" "$start"
}
skip() { note "SKIPPED  $1: $2"; }
# step_or_skip NAME COMMAND...: as step, but exit status 77 (automake's "skipped") is
# recorded as SKIPPED with the command's last line as the reason.
step_or_skip() {
  local name="$1"; shift
  local rc=0 start=$SECONDS
  "$@" > "$logs/$name.log" 2>&1 || rc=$?
  # The reason without the program's own "NAME: skipped: " prefix.
  if [ "$rc" -eq 77 ]; then skip "$name" "$(tail -n 1 "$logs/$name.log" | sed -E 's/^([^ ]*: )?skipped: //')"; return; fi
  record "$name" "$rc" "$start"
}

note "blobrt GPU bundle run, $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
sed -n '1,4p' "$here/BUNDLE.txt" | sed 's/^/  /' | tee -a "$summary"
if command -v nvidia-smi >/dev/null; then
  note "  GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed -n 1p)"
else
  note "  GPU: nvidia-smi not found"
fi
note "  library path: $LD_LIBRARY_PATH"
# NVIDIA's OpenCL driver (libnvidia-opencl) comes with the GPU driver, but a container
# that mounts the driver's libraries often lacks the ICD file (/etc/OpenCL/vendors/nvidia.icd)
# through which the OpenCL loader finds it. Then this run names it in a vendors folder of
# its own (OCL_ICD_VENDORS, read by the bundled ocl-icd loader), so the opencl backend's
# kernels run on the GPU itself; the node's other ICDs are listed there too.
# Only on a node with NVIDIA's driver (x86-64: the bundle's own architecture).
if [ -e /proc/driver/nvidia ] || command -v nvidia-smi >/dev/null; then nvidia_node=1; else nvidia_node=""; fi
if [ -n "$nvidia_node" ] && [ -z "${OCL_ICD_VENDORS:-}" ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  nvidia_ocl=$(ldconfig -p 2>/dev/null | awk '$1 == "libnvidia-opencl.so.1" && /x86-64/ && !seen {print $NF; seen = 1}')
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
    [ -z "$nvidia_ocl" ] && [ -e "$d/libnvidia-opencl.so.1" ] && nvidia_ocl="$d/libnvidia-opencl.so.1"
  done
  if [ -n "$nvidia_ocl" ]; then
    mkdir -p "$logs/icd"
    cp /etc/OpenCL/vendors/*.icd "$logs/icd/" 2>/dev/null || true
    echo "$nvidia_ocl" > "$logs/icd/nvidia.icd"
    export OCL_ICD_VENDORS="$logs/icd"
    note "  OpenCL: NVIDIA's driver $nvidia_ocl, named in OCL_ICD_VENDORS (no ICD file for it in /etc/OpenCL/vendors)"
  else
    note "  OpenCL: no ICD file names NVIDIA's driver and no libnvidia-opencl.so.1 was found"
  fi
fi

# This script's own blobrt calls probe every plugin afresh: no verdict cache of the node
# user's, and none of this run's, which the trap deletes (the suites keep theirs, below).
step info env BLOBRT_PLUGIN_CACHE=off blobrt info
cp "$logs/info.log" "$out/info.txt"
BLOBRT_PLUGIN_CACHE=off blobrt info --json > "$out/info.json" 2> "$logs/info-json.log" || true
cuda_reason=""
BLOBRT_PLUGIN_CACHE=off BLOBRT_BACKEND=cuda blobrt info > "$logs/cuda-check.log" 2>&1 ||
  cuda_reason=$(grep -m 1 -o "cannot be used: .*" "$logs/cuda-check.log" | sed "s/^cannot be used: //" || tail -n 1 "$logs/cuda-check.log")

# The suites see the bundle's plugins plus simgpu, and nothing installed on the node.
suite_env=(
  BLOBRT_PLUGIN_PATH="$here/lib/blobrt/plugins.d:$tests/simgpu"
  BLOBRT_PLUGIN_SYSTEM_PATH=
  BLOBRT_LOG=off
  XDG_CACHE_HOME="$logs/cache"  # plugin verdicts of this run only, never the node user's
  BLOBRT_TEST_DATA_DIR="$tests/data"
  BLOBRT_TEST_PLUGINS_DIR="$tests/plugins"
  BLOBRT_TOOL="$here/bin/blobrt"
  BLOBRT_DEMO="$here/bin/blobrt-caffe-demo"
  BLOBRT_CUDA_PLUGIN="$here/lib/blobrt/plugins.d/libblobrt-cuda.so"
  BLOBRT_DIST_NCCL="$here/lib/blobrt/libblobrt-dist-nccl.so"  # test_nccl_part
  BLOBRT_THREAD_LIMIT_PROBE="$tests/thread_limit_probe"
  BLOBRT_EXIT_ORDER_PROBE="$tests/exit_order_probe"
)
# Everything but the benchmarks: the self-tests, every suite, conformance (and under
# compute-sanitizer), Python.
checks() {
  step selftest-auto blobrt selftest
  if [ -z "$cuda_reason" ]; then
    step selftest-cuda env BLOBRT_BACKEND=cuda blobrt selftest
  else
    skip selftest-cuda "the CUDA backend is not usable here: $cuda_reason"
  fi
  opencl_gpus=$(python3 -c 'import json, sys; info = json.load(open(sys.argv[1])); print(" ".join(
    d["id"] + " (" + d["name"] + ")" for p in info["plugins"] if p["name"] == "opencl"
    for d in p.get("devices", []) if d["type"] == "GPU"))' "$out/info.json" 2>/dev/null)
  if [ -n "$opencl_gpus" ]; then
    note "         OpenCL GPU devices: $opencl_gpus (the suites and conformance cover them)"
  else
    skip opencl-gpu "no OpenCL GPU device here (ICDs in /etc/OpenCL/vendors: $(ls /etc/OpenCL/vendors 2>/dev/null | xargs))"
  fi

  for exe in "$tests"/test_*; do
    name=$(basename "$exe")
    [ "$name" = test_large_blob ] && continue  # with the benchmarks, below
    step "$name" env "${suite_env[@]}" "$exe" --gtest_output="xml:$logs/$name.junit.xml"
  done
  step conformance env "${suite_env[@]}" "$here/bin/blobrt-conformance" \
    --gtest_output="xml:$logs/conformance.junit.xml"

  if [ -n "$cuda_reason" ]; then
    skip compute-sanitizer "no usable CUDA device: $cuda_reason"
  elif ! command -v compute-sanitizer >/dev/null; then
    skip compute-sanitizer "compute-sanitizer is not on PATH"
  else
    step compute-sanitizer compute-sanitizer --tool memcheck --error-exitcode 99 \
      --log-file "$logs/compute-sanitizer.txt" \
      env "${suite_env[@]}" "$here/bin/blobrt-conformance" --gtest_filter='*cuda*' \
      --gtest_output="xml:$logs/compute-sanitizer.junit.xml"
    grep -h "ERROR SUMMARY" "$logs/compute-sanitizer.txt" | tail -n 1 | sed 's/^/         /' | tee -a "$summary"
  fi

  # BVLC Caffe's `caffe` tool built for CUDA on blobrt, where the bundle holds one: LeNet in
  # GPU mode (Caffe's .cu layers on blobrt's CUDA memory) against the CPU run, caffe time.
  if [ -x "$here/caffe/caffe" ]; then
    step_or_skip caffe-lenet-gpu env "${suite_env[@]}" "$here/libexec/blobrt/caffe-lenet-gpu.sh" \
      "$here/caffe/caffe" "$logs/caffe-lenet"
  else
    skip caffe-lenet-gpu "the bundle holds no Caffe build (tools/gpu-bundle.sh with CAFFE_CUDA_BUILD)"
  fi
  # The same Caffe built the portable way (no CUDA library in libcaffe), its layers' kernels
  # from the Caffe-layers CUDA plugin beside its libcaffe; then its `caffe time` against the
  # CUDA build's (issue 45's target: within 5 %).
  if [ -x "$here/caffe-portable/caffe" ]; then
    step_or_skip caffe-lenet-portable env "${suite_env[@]}" LD_LIBRARY_PATH="$here/caffe-portable/lib:$LD_LIBRARY_PATH" \
      "$here/libexec/blobrt/caffe-lenet-gpu.sh" "$here/caffe-portable/caffe" "$logs/caffe-portable" --layer-plugin
    direct="$logs/caffe-lenet/time-gpu.txt"
    portable="$logs/caffe-portable/time-gpu.txt"
    if [ -s "$direct" ] && [ -s "$portable" ]; then
      python3 - "$direct" "$portable" <<'PY' | sed 's/^/         /' | tee -a "$summary"
import re, sys
def forward_backward(path):
    for line in open(path):
        if "Forward-Backward" in line:
            return float(re.search(r"([0-9.]+) ms", line).group(1))
direct, portable = forward_backward(sys.argv[1]), forward_backward(sys.argv[2])
if direct and portable:
    verdict = "met" if portable <= 1.05 * direct else "MISSED"
    print(f"caffe time --gpu=0 LeNet forward-backward: portable build + plugin {portable} ms, "
          f"CUDA build {direct} ms, ratio {portable / direct:.3f} (target 1.05: {verdict})")
else:
    print(f"caffe time --gpu=0 LeNet forward-backward: portable {portable}, CUDA build {direct}: not compared")
PY
    fi
  else
    skip caffe-lenet-portable "the bundle holds no portable Caffe build (tools/gpu-bundle.sh with CAFFE_PORTABLE_BUILD)"
  fi
  # The same portable build in GPU mode on the GPU's own OpenCL (issue 45: no Caffe layer
  # bound to CUDA): blobrt-caffe's layer kernels through the opencl backend.
  if [ ! -x "$here/caffe-portable/caffe" ]; then
    skip caffe-lenet-opencl "the bundle holds no portable Caffe build (tools/gpu-bundle.sh with CAFFE_PORTABLE_BUILD)"
  elif [ -z "$opencl_gpus" ]; then
    skip caffe-lenet-opencl "no OpenCL GPU device here"
  elif [ "${opencl_gpus%% *}" != opencl:0 ]; then
    # Caffe's --gpu=0 is the backend's device 0, whatever its kind: the ICD loader's order.
    skip caffe-lenet-opencl "opencl:0 is not a GPU here (the GPUs: $opencl_gpus)"
  else
    step_or_skip caffe-lenet-opencl env "${suite_env[@]}" LD_LIBRARY_PATH="$here/caffe-portable/lib:$LD_LIBRARY_PATH" \
      "$here/libexec/blobrt/caffe-lenet-gpu.sh" "$here/caffe-portable/caffe" "$logs/caffe-opencl" --backend opencl
    [ -s "$logs/caffe-opencl/time-gpu.txt" ] &&
      sed 's/^/         caffe time --gpu=0 LeNet on opencl: /' "$logs/caffe-opencl/time-gpu.txt" | tee -a "$summary"
  fi

  # Python on this node (issue 27, step 4): the extension built here against the bundle
  # (the node's Python is not the build machine's), the package's tests where pytest is, and
  # Blob memory handed to torch and cupy through DLPack on every CUDA device.
  pybuild="$logs/python-build"
  if ! python3 -c 'import nanobind, numpy' >/dev/null 2>&1; then
    skip python "$(command -v python3 || echo python3) lacks nanobind or numpy"
  elif ! command -v meson >/dev/null || ! command -v ninja >/dev/null; then
    skip python "meson or ninja is not on PATH"
  else
    step python-build sh -c 'meson setup "$1" "$2/python-build" -Dbundle="$2" && ninja -C "$1"' _ "$pybuild" "$here"
    if [ -d "$pybuild/blobrt" ]; then
      # The Python steps put python3's pip NVIDIA libraries (nvidia/cu13/lib, where torch,
      # JAX and CuPy for CUDA 13 load theirs) ahead of the toolkit's, so that blobrt's CUDA
      # plugin uses the copy they use: one process should hold one libcudart and libcublas.
      # On an H200 (2026-11-27) with the toolkit's CUDA 13.0 libraries first, `import blobrt`
      # then `import torch` aborted ("free(): invalid pointer"); torch first passed. The C++
      # steps keep the toolkit's libraries, which the results page names.
      pip_cuda=$(python3 -c 'import os, nvidia
for root in nvidia.__path__:
    if os.path.isfile(os.path.join(root, "cu13", "lib", "libcudart.so.13")): print(os.path.join(root, "cu13", "lib"))' 2>/dev/null | sed -n 1p || true)
      py_env=("${suite_env[@]}" PYTHONPATH="$pybuild")
      [ -n "$pip_cuda" ] && py_env+=(LD_LIBRARY_PATH="$pip_cuda:$LD_LIBRARY_PATH")
      note "         Python steps: NVIDIA libraries from ${pip_cuda:-the same place as the C++ steps (no pip nvidia/cu13/lib for python3)}"
      if python3 -c 'import pytest' >/dev/null 2>&1; then
        # Not the stub check: it compares the source tree's _blobrt.pyi with what this node's
        # nanobind would generate, a check of the build machine's tree (CI runs it there).
        step python-tests env "${py_env[@]}" python3 -m pytest -q -p no:cacheprovider \
          -k "not test_type_stubs_are_current" --junitxml="$logs/python-tests.junit.xml" "$here/python-build/tests"
      else
        skip python-tests "pytest is not installed for $(command -v python3)"
      fi
      step_or_skip python-dlpack env "${py_env[@]}" python3 "$here/python-build/tests/gpu_dlpack_check.py"
    fi
  fi
}

[ "$bench_only" -eq 1 ] || checks

# The Blob of 2^31 + 8 floats on every device (issue 27, step 2), with the benchmarks'
# figures; the line under it says on which devices its cases ran (a case skipped for lack
# of memory passes too), which tools/bench_report.py --cuda needs for its verdict.
if [ "$bench" != none ]; then
  step test_large_blob env "${suite_env[@]}" "$tests/test_large_blob" --gtest_output="xml:$logs/test_large_blob.junit.xml"
  python3 -c 'import sys, xml.etree.ElementTree as ET
cases = [(c.get("value_param", "?").strip("\""), c.get("result")) for c in ET.parse(sys.argv[1]).iter("testcase")]
ran = [d for d, result in cases if result == "completed"]
skipped = [d for d, result in cases if result == "skipped"]
# GoogleTest writes "FILE:LINE" then the message: the message.
why = [s.get("message", "").strip().split("\n")[-1] for s in ET.parse(sys.argv[1]).iter("skipped")][:1]
print("         test_large_blob devices: ran %s; skipped %s%s (the reference device is not a case)"
      % (" ".join(ran) or "none", " ".join(skipped) or "none", " (first: %s)" % why[0] if why else ""))' \
    "$logs/test_large_blob.junit.xml" 2>&1 | tee -a "$summary"
fi

case "$bench" in
  none) skip benchmarks "--bench none" ;;
  *)
    bench_args=(--benchmark_out_format=json)
    if [ "$bench" = smoke ]; then bench_args+=(--blobrt_smoke --benchmark_min_time=0.001)
    else bench_args+=(--benchmark_min_time=0.1); fi
    [ -n "$bench_filter" ] && bench_args+=(--benchmark_filter="$bench_filter")
    bench_env=(BLOBRT_PLUGIN_PATH="$here/lib/blobrt/plugins.d" BLOBRT_PLUGIN_SYSTEM_PATH= BLOBRT_PLUGIN_CACHE=off)
    # The GPU against its yardsticks in one run (exit 77 without one), then the report of
    # issue 27's targets (the plot is drawn where gnuplot is: tools/bench_report.py again).
    step_or_skip "benchmarks-cuda-$bench" env "${bench_env[@]}" "$here/bin/blobrt-bench-cuda" "${bench_args[@]}" \
      --benchmark_out="$out/bench-cuda.json"
    [ -s "$out/bench-cuda.json" ] || rm -f "$out/bench-cuda.json"  # a skipped run may leave it empty
    if [ -f "$out/bench-cuda.json" ]; then
      step cuda-report python3 "$here/libexec/blobrt/bench_report.py" --cuda "$out/bench-cuda.json" \
        "$out/performance-results-cuda.md" --summary "$summary"
      [ -f "$out/performance-results-cuda.json" ] && python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]
print("         CUDA targets: %d met, %d missed, %d not measured (performance-results-cuda.md)"
      % (s["met"], s["missed"], s["not_measured"]))' "$out/performance-results-cuda.json" 2>&1 | tee -a "$summary"
    fi
    if [ "$cpu_bench" -eq 1 ]; then
      step "benchmarks-$bench" env "${bench_env[@]}" "$here/bin/blobrt-bench" "${bench_args[@]}" \
        --benchmark_out="$out/bench.json"
    else
      skip benchmarks-cpu "blobrt-bench (every device at the CPU sizes) runs with --cpu-bench"
    fi
    ;;
esac

junits=("$logs"/*.junit.xml)
if [ -e "${junits[0]}" ]; then
  python3 "$here/libexec/blobrt/test_summary.py" "${junits[@]}" 2>&1 | tee -a "$summary" || failed=1
else
  note "tests: none ran"
fi
tar -C "$logs" -czf "$out/logs.tar.gz" .
if [ "$failed" -eq 0 ]; then note "run-on-gpu: every step that could run here passed"
else note "run-on-gpu: FAILED (see above and logs.tar.gz)"; fi
exit "$failed"
