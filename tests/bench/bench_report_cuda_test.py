#!/usr/bin/env python3
"""tools/bench_report.py --cuda on a fabricated blobrt-bench-cuda run whose answers the test
knows: each target's figure and verdict in OUT.json (a ratio the wrong way round or a wrong
threshold fails), a note for a MISSED target, "not measured" for a missing benchmark,
test_large_blob's line from the summary, the context in OUT.md, --strict's exit status, the
plot where gnuplot is installed; and the CPU mode's positional usage still working.

usage: bench_report_cuda_test.py tools/bench_report.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOOL = sys.argv[1]
SIZES = [1, 1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26, 1 << 28]
LARGE = 1 << 26
DTYPES = ("float", "double")
# The median is this much slower than the fastest repetition: the report must divide best
# rates (probes spread more than the rest, so dividing medians gives other figures).
SPREAD = {"probe": 0.5}
DEFAULT_SPREAD = 0.9

benchmarks = []


def add(base, best_bps=0.0, ns=1000.0, unit="ns", **counters):
    """A benchmark as tools/bench.sh's repetitions write it: mean (wrong on purpose: it is
    not to be read), median and min aggregates. `ns` is the median time in `unit`."""
    spread = SPREAD.get(base.split("/")[0], DEFAULT_SPREAD)
    for agg, time, bps in (("mean", ns * 3, best_bps * 7), ("median", ns, best_bps * spread),
                           ("min", ns * spread, best_bps / 3)):
        entry = {"name": f"{base}/repeats:5/real_time_{agg}", "run_name": f"{base}/repeats:5/real_time",
                 "run_type": "aggregate", "aggregate_name": agg, "repetitions": 5, "iterations": 5,
                 "real_time": time, "cpu_time": time, "time_unit": unit, **counters}
        if best_bps:
            entry["bytes_per_second"] = bps
        benchmarks.append(entry)


# Ceilings: plain kernels and cudaMemcpy d2d, which beats the copy kernel by 10 %.
PROBE = {"fill": 3000e9, "copy": 2800e9, "scale": 2700e9, "triad": 2900e9, "sum": 3100e9, "dot": 3050e9}


def kernel(pattern, n):
    return PROBE[pattern] * min(1.0, n / (1 << 24) + 0.01)


def ceiling(pattern, n):
    return kernel(pattern, n) * (1.1 if pattern == "copy" else 1.0)


PATTERN = {"memset": "fill", "d2d": "copy", "axpy": "triad", "dot": "dot", "asum": "sum", "scal": "scale"}
EW_PATTERN = {"set": "fill", "add_scalar": "scale", "scale": "copy", "axpby": "triad", "add": "triad",
              "sub": "triad", "mul": "triad", "div": "triad", "powx": "copy", "sqr": "copy", "sqrt": "copy",
              "exp": "copy", "log": "copy", "abs": "copy", "sign": "copy", "sgnbit": "copy"}
RAW_NS = {"axpy": 5000, "dot": 6000, "asum": 5500, "scal": 4500}  # raw cuBLAS at n = 1, float
# Blob's operations: (access pattern, the raw cuBLAS call its n = 1 time is held to, ns over it).
BLOB = {"Update": ("triad", "axpy", 1500), "asum_data": ("sum", "asum", 100), "sumsq_data": ("dot", "dot", 1900),
        "scale_data": ("scale", "scal", 100)}


def raw_ns(op, dtype):
    """Raw cuBLAS at n = 1 (memset and d2d have none: a made-up base for their n = 1 time)."""
    return RAW_NS.get(op, 4000) + (100 if dtype == "double" else 0)


def dispatch_ns(op, dtype):
    """What Device::op adds at n = 1: 800 ns, but 2500 ns (MISSED) for dot double."""
    return 2500 if (op, dtype) == ("dot", "double") else 800


def level1_fraction(op, dtype, n):
    """Device::op's fraction of its ceiling: 0.95, but for the cases the test checks."""
    if (op, dtype, n) == ("axpy", "double", 1 << 28):
        return 0.85  # worst of the large n: MISSED
    if (op, dtype, n) == ("memset", "float", 1 << 24):
        return 0.5   # below 2^26: not held to the target
    if (op, dtype) == ("d2d", "double"):
        return 0.88  # of cudaMemcpy; 0.97 of the copy kernel: MISSED only against the best ceiling
    return 0.95


def fabricate():
    for dtype in DTYPES:
        for n in SIZES:
            for pattern in PROBE:
                add(f"probe/cuda_kernel/{pattern}/{dtype}/{n}", kernel(pattern, n))
            add(f"probe/cuda_memcpy/copy/{dtype}/{n}", ceiling("copy", n))
            for op, pattern in PATTERN.items():
                add(f"device/cuda:0/{op}/{dtype}/{n}", level1_fraction(op, dtype, n) * ceiling(pattern, n),
                    ns=raw_ns(op, dtype) + dispatch_ns(op, dtype) if n == 1 else 1000.0)
            for op, pattern in RAW_NS.items():
                add(f"raw/cublas/{op}/{dtype}/{n}", 0.96 * ceiling(PATTERN[op], n), ns=raw_ns(op, dtype))
            for op in ("h2d", "d2h"):
                raw = 25e9 * min(1.0, n / (1 << 22) + 0.01)
                fraction = 0.3 if n == 1 << 20 else 0.8 if (op, dtype, n) == ("d2h", "double", 1 << 24) else 0.97
                add(f"raw/cudamemcpy/{op}/{dtype}/{n}", raw)
                add(f"device/cuda:0/{op}/{dtype}/{n}", fraction * raw)
    for n in SIZES:
        for op, (pattern, raw_op, overhead) in BLOB.items():
            add(f"blob/cuda:0/{op}/float/{n}", 0.93 * ceiling(pattern, n),
                ns=raw_ns(raw_op, "float") + overhead if n == 1 else 1000.0)
    add("blob/cuda:0/round_trip/float/1", ns=30000)
    add("raw/cudamemcpy/round_trip/float/1", ns=20000)
    # gemm in ms: blobrt at 0.97 of cuBLAS's speed in float, 0.9 in double.
    for dtype, raw_ms, fraction in (("float", 2.0, 0.97), ("double", 4.0, 0.9)):
        routine = "gemm_4096x4096x4096"
        add(f"raw/cublas/{routine}/{dtype}/4096", ns=raw_ms, unit="ms", GFLOPS=137.4 / raw_ms * 1000)
        add(f"math/cuda:0/{routine}/{dtype}/4096", ns=raw_ms / fraction, unit="ms",
            GFLOPS=137.4 / raw_ms * 1000 * fraction)
    for trans in "NT":
        for dtype in DTYPES:
            routine = f"gemv_{trans}_4096x4096"
            add(f"raw/cublas/{routine}/{dtype}/4096", ns=49000)
            if (trans, dtype) != ("T", "double"):  # the missing benchmark
                add(f"math/cuda:0/{routine}/{dtype}/4096", ns=50000)
    for dtype in DTYPES:
        for op, pattern in EW_PATTERN.items():
            fraction = 0.5 if (op, dtype) == ("exp", "double") else 0.93
            label = pattern + (" heavy" if op in ("powx", "exp", "log") else "")  # as blobrt-bench labels them
            add(f"math/cuda:0/ew_{op}/{dtype}/{LARGE}", fraction * ceiling(pattern, LARGE), label=label)
            add(f"math/cuda:0/ew_{op}/{dtype}/1", 1.0, ns=raw_ns("scal", dtype) + dispatch_ns("scal", dtype) + 300,
                label=label)
    return {"context": {"date": "2026-11-30T10:00:00+00:00", "host_name": "gpu-node-7", "num_cpus": 16,
                        "gpu_name": "NVIDIA H100 80GB HBM3", "gpu_compute_capability": "9.0",
                        "gpu_memory_bytes": "85520809984", "gpu_sm_count": "132", "cuda_driver": "12.4",
                        "cuda_runtime": "12.4", "nccl": "2.21.5", "blobrt_version": "1.0.0"},
            "benchmarks": benchmarks}


# key -> (figure, verdict); None: a text figure, checked apart.
EXPECTED = {
    "bandwidth/axpy/float": (0.95, "met"),
    "bandwidth/axpy/double": (0.85, "MISSED"),
    "bandwidth/memset/float": (0.95, "met"),
    "bandwidth/d2d/float": (0.95, "met"),
    "bandwidth/d2d/double": (0.88, "MISSED"),
    "copy/h2d/float": (0.97, "met"),
    "copy/d2h/double": (0.8, "MISSED"),
    "dispatch/device/axpy/float": (800, "met"),
    "dispatch/device/dot/double": (2500, "MISSED"),
    "dispatch/blob/Update/float": (1500, "met"),
    "dispatch/blob/sumsq_data/float": (1900, "met"),
    "round_trip": (1.5, "met"),
    "gemm/float": (0.97, "met"),
    "gemm/double": (0.9, "MISSED"),
    "gemv/N/float": (49 / 50, "met"),
    "gemv/T/double": (None, "not measured"),
    "ew/scale/float": (0.93, "met"),
    "ew/exp/double": (0.5, "MISSED"),
    "ew/axpby/double": (0.93, "met"),
}
NOTE = "exp is compute-bound in double on this GPU (fabricated note)"
LARGE_BLOB_LINE = "PASSED   test_large_blob (12 s)"
LARGE_BLOB_DEVICES = "test_large_blob devices: ran host:0 opencl:0 cuda:0; skipped simgpu:0"
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, timeout=60)


def check_targets(report):
    targets = {t["key"]: t for t in report["targets"]}
    for key, (figure, verdict) in EXPECTED.items():
        t = targets.get(key)
        if t is None:
            check(False, f"{key}: no such target in OUT.json")
            continue
        check(t["verdict"] == verdict, f"{key}: verdict {t['verdict']!r}, expected {verdict!r}")
        if figure is None:
            check(t["figure"] is None, f"{key}: figure {t['figure']!r}, expected none")
        else:
            check(isinstance(t["figure"], (int, float)) and abs(t["figure"] - figure) < 1e-6 * max(1, figure),
                  f"{key}: figure {t['figure']!r}, expected {figure}")
    check(targets.get("ew/exp/double", {}).get("why") == NOTE, "ew/exp/double: the note is not its why")
    check(targets.get("gemm/double", {}).get("why") == "not yet explained", "gemm/double: why without a note")
    check(targets.get("gemm/float", {}).get("why") is None, "gemm/float is met, yet has a why")
    check(all(t.get("comparison") in (">=", "<=", "==") for t in report["targets"]), "a comparison is not >=, <=, ==")
    # 12 bandwidth + 4 copy + 12 dispatch + round trip + 6 gemm/gemv + 32 element-wise + large Blob
    check(len(report["targets"]) == 68, f"{len(report['targets'])} targets, expected 68")
    check(report["summary"] == {"met": 61, "missed": 6, "not_measured": 1}, f"summary {report['summary']}")
    check(report.get("source") == "bench.json", f"source {report.get('source')!r}")
    check(report["context"].get("cublas") == "?", "context: a missing key is not '?'")
    return targets


def main():
    tmp = tempfile.mkdtemp(prefix="bench_report_cuda_")
    try:
        bench, md, png = (os.path.join(tmp, f) for f in ("bench.json", "report.md", "report.png"))
        with open(bench, "w") as f:
            json.dump(fabricate(), f)
        summary, notes = os.path.join(tmp, "summary.txt"), os.path.join(tmp, "notes.json")
        with open(summary, "w") as f:
            f.write("blobrt GPU bundle run\nPASSED   info (0 s)\nFAILED   test_blob (exit 1, 0 s): last lines of "
                    f"test_blob.log:\n           see test_large_blob too\n{LARGE_BLOB_LINE}\n"
                    f"         {LARGE_BLOB_DEVICES}\n"
                    "tests: 2 passed, 1 failed, 0 skipped\n")
        with open(notes, "w") as f:
            json.dump({"ew/exp/double": NOTE}, f)

        p = run("--cuda", bench, md, png, "--summary", summary, "--notes", notes)
        check(p.returncode == 0, f"--cuda exits {p.returncode} without --strict: {p.stderr}")
        with open(os.path.join(tmp, "report.json")) as f:
            targets = check_targets(json.load(f))
        large = targets.get("large_blob", {})
        check(large.get("verdict") == "met" and large.get("figure") == f"{LARGE_BLOB_LINE}; {LARGE_BLOB_DEVICES}",
              f"large_blob: {large.get('verdict')!r}, {large.get('figure')!r}")
        with open(md) as f:
            text = f.read()
        for needle in ("NVIDIA H100 80GB HBM3", "2.21.5", NOTE, "not measured", "gpu-node-7", "`gemv/T/double`",
                       "| cuBLAS | ? |", "--cuda", "| float | +300 |"):
            check(needle in text, f"OUT.md lacks {needle!r}")
        if shutil.which("gnuplot"):
            with open(png, "rb") as f:
                check(f.read(8) == b"\x89PNG\r\n\x1a\n", "OUT.png is not a PNG")
        else:
            print("gnuplot not installed: the plot is not checked")
            check(not os.path.exists(png) and "gnuplot" in p.stderr, "without gnuplot: a png or no note")

        p = run("--cuda", bench, md, "--strict")
        check(p.returncode == 1, f"--strict with MISSED targets exits {p.returncode}: {p.stderr}")
        with open(os.path.join(tmp, "report.json")) as f:
            large = {t["key"]: t for t in json.load(f)["targets"]}["large_blob"]
        check(large["verdict"] == "not measured" and large["figure"] == "not given",
              f"large_blob without --summary: {large['verdict']!r}, {large['figure']!r}")

        # Passed, but the CUDA case was skipped (memory short): nothing was shown on the GPU.
        with open(summary, "w") as f:
            f.write(f"{LARGE_BLOB_LINE}\n         test_large_blob devices: ran host:0; skipped cuda:0 opencl:0\n")
        run("--cuda", bench, md, "--summary", summary)
        with open(os.path.join(tmp, "report.json")) as f:
            large = {t["key"]: t for t in json.load(f)["targets"]}["large_blob"]
        check(large["verdict"] == "not measured" and "cuda:0 is not among" in large["figure"],
              f"large_blob with cuda:0 skipped: {large['verdict']!r}, {large['figure']!r}")

        with open(summary, "w") as f:
            f.write("FAILED   test_large_blob (exit 1, 30 s): last lines of test_large_blob.log:\n           ...\n")
        run("--cuda", bench, md, "--summary", summary)
        with open(os.path.join(tmp, "report.json")) as f:
            large = {t["key"]: t for t in json.load(f)["targets"]}["large_blob"]
        check(large["verdict"] == "MISSED", f"large_blob FAILED in the summary: {large['verdict']!r}")

        # Inputs it cannot report on: a clear one-line refusal, no traceback, no page.
        cpu_like = os.path.join(tmp, "cpu-run.json")
        with open(cpu_like, "w") as f:
            json.dump({"context": {"host_name": "vm"}, "benchmarks": []}, f)
        not_a_run = os.path.join(tmp, "list.json")
        with open(not_a_run, "w") as f:
            json.dump([1, 2], f)
        for bad, needle in ((cpu_like, "is not a blobrt-bench-cuda run"),
                            (os.path.join(tmp, "missing.json"), "No such file"), (summary, "is not JSON"),
                            (not_a_run, "is not Google Benchmark's JSON")):
            out = os.path.join(tmp, "refused.md")
            p = run("--cuda", bad, out)
            check(p.returncode != 0 and needle in p.stderr and "Traceback" not in p.stderr
                  and not os.path.exists(out), f"--cuda on {os.path.basename(bad)}: {p.returncode} {p.stderr!r}")

        # A filtered run (run-on-gpu.sh --bench-filter): reported, what it lacks not measured.
        filtered = os.path.join(tmp, "filtered.json")
        with open(filtered, "w") as f:
            json.dump({"context": {"host_name": "gpu-node-7", "gpu_name": "NVIDIA H100 80GB HBM3"}, "benchmarks": [
                {"name": "raw/cublas/axpy/float/1/real_time", "run_type": "iteration", "real_time": 5.0,
                 "time_unit": "us"}]}, f)
        p = run("--cuda", filtered, os.path.join(tmp, "filtered-page.md"))
        check(p.returncode == 0, f"a filtered run is refused: {p.returncode} {p.stderr!r}")
        if p.returncode == 0:
            with open(os.path.join(tmp, "filtered-page.json")) as f:
                counts = json.load(f)["summary"]
            check(counts["met"] == 0 and counts["missed"] == 0, f"a filtered run's verdicts: {counts}")

        # The CPU mode, positional as tools/bench.sh calls it.
        cpu = os.path.join(tmp, "cpu.json")
        with open(cpu, "w") as f:
            json.dump({"context": {"host_name": "vm", "num_cpus": 2}, "benchmarks": [
                {"name": f"{g}/{n}/real_time", "run_type": "iteration", "real_time": 10.0, "time_unit": "ns",
                 "bytes_per_second": 1e9}
                for g in ("probe/stream/triad/float", "device/host:0/axpy/float") for n in (1, 1 << 22)]}, f)
        p = run(cpu, os.path.join(tmp, "cpu.md"))
        check(p.returncode == 0 and os.path.exists(os.path.join(tmp, "cpu.md")),
              f"CPU mode exits {p.returncode}: {p.stderr}")
    finally:
        shutil.rmtree(tmp)
    print(f"bench_report_cuda: {len(failures)} failure(s)" if failures else "bench_report_cuda: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
