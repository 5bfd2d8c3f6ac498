#!/usr/bin/env python3
"""blobrt-bench-cuda from the outside: its command line, and either the clean skip where no
CUDA device is usable (exit 77, one line naming every unusable plugin's reason) or, on a GPU,
a smoke run whose JSON holds the device, its yardsticks and the versions, and which
tools/bench_report.py --cuda turns into the results page.

usage: bench_cuda_test.py BLOBRT_BENCH_CUDA BENCH_REPORT_PY
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

bench, report = sys.argv[1], sys.argv[2]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def run(*args):
    return subprocess.run([bench, *args], capture_output=True, text=True, timeout=600)


r = run("--help")
check(r.returncode == 0 and "exit 77 when no CUDA device is usable" in r.stdout and "Exit code 77: " in r.stdout,
      f"--help: {r.returncode} {r.stdout[:300]}")
r = run("--no-such-option")
check(r.returncode == 2 and "--no-such-option" in r.stderr, f"a bad option: exit {r.returncode}, {r.stderr!r}")

with tempfile.TemporaryDirectory() as tmp:
    # The names a run would have (listed even without a GPU) are the names the report reads:
    # a run made of them, every rate equal and every time equal, meets every target but the
    # 2^31 + 8 test's (no summary given). A renamed benchmark would be "not measured".
    r = run("--benchmark_list_tests=true")
    names = [line.strip() for line in r.stdout.splitlines() if line.strip()]
    check(r.returncode == 0 and len(names) > 300, f"listing: exit {r.returncode}, {len(names)} names, {r.stderr[-500:]}")
    # Google Benchmark's other spellings of "list" list too; "=off" runs (here: the skip).
    for spelling in ("--benchmark_list_tests", "--benchmark_list_tests=on", "--benchmark_list_tests=Y"):
        r2 = run(spelling, "--benchmark_filter=^raw/cudamemcpy/h2d/float/1/")
        check(r2.returncode == 0 and r2.stdout.split() == ["raw/cudamemcpy/h2d/float/1/repeats:5/real_time"],
              f"{spelling}: exit {r2.returncode}, {r2.stdout!r} {r2.stderr[-300:]!r}")
    listed = os.path.join(tmp, "listed-run.json")
    with open(listed, "w") as f:
        json.dump({"context": {"host_name": "listed", "gpu_name": "none (listing)"},
                   "benchmarks": [{"name": n, "run_type": "iteration", "real_time": 1000.0, "time_unit": "ns",
                                   "bytes_per_second": 1e11, "GFLOPS": 1.0} for n in names]}, f)
    rr = subprocess.run([sys.executable, report, "--cuda", listed, os.path.join(tmp, "listed.md")],
                        capture_output=True, text=True)
    check(rr.returncode == 0, f"the report on the listed names: {rr.returncode} {rr.stderr[-1000:]}")
    if rr.returncode == 0:
        with open(os.path.join(tmp, "listed.json")) as f:
            targets = json.load(f)["targets"]
        unmeasured = [t["key"] for t in targets if t["verdict"] != "met" and t["key"] != "large_blob"]
        check(not unmeasured, f"targets the listed benchmarks do not meet (a name mismatch?): {unmeasured}")
    out = os.path.join(tmp, "bench-cuda.json")
    r = run("--blobrt_smoke", "--benchmark_min_time=0.001", f"--benchmark_out={out}", "--benchmark_out_format=json")
    if r.returncode == 77:
        last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
        check(last.startswith("blobrt-bench-cuda: skipped: no usable device holds CUDA memory ("),
              f"the skip's last line: {last!r}")
        if shutil.which("nvidia-smi") is None and os.path.exists("/usr/local/cuda"):
            # This machine: the toolkit without a driver, so the CUDA plugin's own reason.
            check("cudaErrorInsufficientDriver" in last, f"the CUDA plugin's reason is not named: {last!r}")
        check(not os.path.exists(out) or os.path.getsize(out) == 0, "a skipped run wrote results")
    else:
        check(r.returncode == 0, f"smoke run: exit {r.returncode}: {r.stderr[-2000:]}")
        data = json.load(open(out))
        names = [b["name"] for b in data["benchmarks"]]
        device = data["context"].get("blobrt_device", "?")
        for prefix in ("probe/cuda_kernel/triad/float/", "probe/cuda_memcpy/copy/", "raw/cublas/axpy/float/1",
                       "raw/cudamemcpy/round_trip/float/1", f"device/{device}/axpy/float/", f"blob/{device}/Update/",
                       f"math/{device}/gemm_", f"math/{device}/ew_exp/double/"):
            check(any(n.startswith(prefix) for n in names), f"no benchmark {prefix}*")
        errors = [f'{b["name"]}: {b.get("error_message")}' for b in data["benchmarks"] if b.get("error_occurred")]
        check(not errors, f"benchmarks that failed: {errors[:5]}")
        for key in ("gpu_name", "cuda_driver", "cuda_runtime", "cublas", "nccl"):
            check(key in data["context"], f"context lacks {key}")
        md = os.path.join(tmp, "results.md")
        rr = subprocess.run([sys.executable, report, "--cuda", out, md], capture_output=True, text=True)
        check(rr.returncode == 0 and os.path.getsize(md) > 0, f"the report: {rr.returncode} {rr.stderr[-1000:]}")

if failures:
    print("bench_cuda: FAILED\n  " + "\n  ".join(failures))
    sys.exit(1)
print("bench_cuda: passed")
