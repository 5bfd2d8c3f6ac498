#!/usr/bin/env python3
"""Turns one blobrt-bench JSON run into the ratio tables and the plot of
docs/performance.md: every figure is divided by references measured in the same run.
With --cuda, turns one blobrt-bench-cuda run into issue 27's targets, each met or MISSED.

usage: bench_report.py RESULTS.json OUT.md [OUT.png]
       bench_report.py --cuda BENCH.json OUT.md [OUT.png] [--summary SUMMARY.txt]
                       [--notes NOTES.json] [--strict]
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict

# BVLC Caffe (CPU_ONLY, OpenBLAS on 2 threads) on this machine, Blob<float> of 16 Mi
# elements, median of 5 (issue 5).
CAFFE_MS = {"Update": 6.4, "asum_data": 3.6, "sumsq_data": 7.3, "scale_data": 6.5}
CAFFE_SAVE_MS = 177 + 90   # ToProto + WriteProtoToBinaryFile
CAFFE_LOAD_MS = 181 + 62   # ReadProtoFromBinaryFile + FromProto

# Which probe pattern bounds which operation.
PATTERN = {"memset": "fill", "h2d": "copy", "d2h": "copy", "d2d": "copy", "axpy": "triad",
           "dot": "dot", "asum": "sum", "scal": "scale"}
TO_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


KEEP_MARKER = "<!-- libblobrt-dist results: tools/bench-dist.sh -->"


def read_json(path):
    """A JSON file's content; exits with one line naming the file when it cannot be read or
    is not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        sys.exit(f"bench_report.py: cannot read {path}: {e.strerror}")
    except ValueError as e:
        sys.exit(f"bench_report.py: {path} is not JSON: {e}")


def load(path):
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        sys.exit(f"bench_report.py: {path} is not Google Benchmark's JSON (no \"benchmarks\" list)")
    results = {}
    fastest = {}  # base name -> the fastest repetition's time ("min" aggregate, bench_common.hpp)
    for b in data["benchmarks"]:
        parts = b["name"].split("/")
        base = "/".join(p for p in parts
                        if not p.startswith(("repeats:", "iterations:", "min_time:", "real_time")))
        ns = b["real_time"] * TO_NS[b.get("time_unit", "ns")]
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "min":
            fastest[base] = ns
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        results[base] = {
            "ns": ns,
            "bps": b.get("bytes_per_second", 0.0),
            "counters": {k: v for k, v in b.items() if isinstance(v, (int, float))},
        }
    # The ratio tables divide best rates: the same bytes in the fastest repetition's time
    # (a "min" of bytes_per_second would be the slowest repetition's rate).
    for base, e in results.items():
        e["best_bps"] = e["bps"] * e["ns"] / fastest[base] if base in fastest and e["bps"] else e["bps"]
    return data.get("context", {}), results


def parse(name):
    group, subject, op, dtype, n = name.split("/")
    return group, subject, op, dtype, int(n)


def gbps(x):
    return x / 1e9


def fmt(x, digits=2):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


# Element-wise operation -> the probe pattern of its access (bench_math.cpp).
EW_PATTERN = {"set": "fill", "add_scalar": "scale", "scale": "copy", "axpby": "triad", "add": "triad",
              "sub": "triad", "mul": "triad", "div": "triad", "powx": "copy", "sqr": "copy", "sqrt": "copy",
              "exp": "copy", "log": "copy", "abs": "copy", "sign": "copy", "sgnbit": "copy"}
TRANSCENDENTAL = {"powx", "exp", "log"}


def math_tables(r, w):
    """gemm/gemv against raw BLIS, element-wise against the probe and the level-1 dispatch."""
    keys = [k for k in r if k.startswith("math/") and k.count("/") == 4]
    if not keys:
        return
    w("### Caffe's math beyond level 1: gemm and gemv against raw BLIS (same buffers, same run)\n")
    w("Time of `bli_?gemm`/`bli_?gemv` ÷ time through `Device` (1.00 = nothing added; above 1 for "
      "gemv, which the plugin splits across cores and BLIS runs on one thread). "
      "host:0 is the built-in kernels against the same BLIS call.\n")
    w("| routine | dtype | blis:0 (ms) | raw BLIS (ms) | blis:0 ÷ raw | host:0 (ms) | host ÷ raw | GFLOPS blis:0 |")
    w("|---|---|---|---|---|---|---|---|")
    routines = sorted({k.split("/")[2] for k in keys if k.split("/")[2].startswith(("gemm", "gemv"))})
    for routine in routines:
        for dtype in ("float", "double"):
            base = [k for k in keys if k.split("/")[2] == routine and k.split("/")[3] == dtype]
            if not base:
                continue
            n = base[0].split("/")[4]
            t = lambda key: r.get(key, {}).get("ns")
            mine, raw, host = t(f"math/blis:0/{routine}/{dtype}/{n}"), t(f"raw/blis/{routine}/{dtype}/{n}"), \
                t(f"math/host:0/{routine}/{dtype}/{n}")
            gf = r.get(f"math/blis:0/{routine}/{dtype}/{n}", {}).get("counters", {}).get("GFLOPS")
            ms = lambda x: fmt(x / 1e6, 3) if x else "–"
            w(f"| {routine} | {dtype} | {ms(mine)} | {ms(raw)} | {fmt(raw / mine) if mine and raw else '–'} | "
              f"{ms(host)} | {fmt(raw / host) if host and raw else '–'} | {fmt(gf, 1) if gf else '–'} |")
    w("")
    w("### Element-wise operations at n = 2^24: fraction of the probe of the same access pattern\n")
    w("powx, exp and log are compute-bound (glibc's scalar calls per element), not held to the probe.\n")
    ew_ops = list(EW_PATTERN)
    devices = sorted({k.split("/")[1] for k in keys})
    w("| device | dtype | " + " | ".join(f"{op}{'*' if op in TRANSCENDENTAL else ''}" for op in ew_ops) + " |")
    w("|---|---|" + "---|" * len(ew_ops))
    n = 1 << 24
    for dev in devices:
        for dtype in ("float", "double"):
            cells = []
            for op in ew_ops:
                got = r.get(f"math/{dev}/ew_{op}/{dtype}/{n}", {}).get("best_bps")
                ref = r.get(f"probe/stream/{EW_PATTERN[op]}/{dtype}/{n}", {}).get("best_bps")
                cells.append(fmt(got / ref) if got and ref else "–")
            w(f"| {dev} | {dtype} | " + " | ".join(cells) + " |")
    w("")
    w("### Element-wise at n = 1 against the level-1 dispatch (Device::scal, ns, same run)\n")
    w("| device | dtype | " + " | ".join(ew_ops) + " | scal |")
    w("|---|---|" + "---|" * (len(ew_ops) + 1))
    for dev in devices:
        for dtype in ("float", "double"):
            scal = r.get(f"device/{dev}/scal/{dtype}/1", {}).get("ns")
            cells = []
            for op in ew_ops:
                ns = r.get(f"math/{dev}/ew_{op}/{dtype}/1", {}).get("ns")
                cells.append(f"{ns - scal:+.0f}" if ns and scal else "–")
            w(f"| {dev} | {dtype} | " + " | ".join(cells) + f" | {fmt(scal, 1) if scal else '–'} |")
    w("")


def cpu_report(results_json, out_md, out_png):
    """The CPU tables of docs/performance.md (blobrt-bench's run)."""
    context, r = load(results_json)
    # group/subject/op/dtype/n; gemm's and gemv's sizes ("16x16x16") have their own table
    names = [parse(k) + (k,) for k in r if k.count("/") == 4 and k.rsplit("/", 1)[1].isdigit()]
    devices = sorted({s for g, s, *_ in names if g == "device"}, key=lambda d: (d != "host:0", d))
    sizes = sorted({n for g, s, o, d, n, k in names if g == "probe"})
    large = [n for n in sizes if n >= 1 << 22]
    probe = lambda pat, dtype, n: r.get(f"probe/stream/{pat}/{dtype}/{n}", {}).get("best_bps")
    lines = []
    w = lines.append
    w(f"Generated by `tools/bench_report.py` from one `blobrt-bench` run on {context.get('host_name', '?')}, "
      f"{context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz, "
      f"{context.get('date', '')}.\n")

    # 1. Fraction of the streaming limit, large n.
    w("### Level-1 operations: fraction of the streaming probe (same pattern, size, run)\n")
    w("Minimum over n = " + ", ".join(f"2^{int(math.log2(n))}" for n in large) +
      " (each cell: min … max). 1.00 = the bandwidth plain OpenMP loops reach on all cores. "
      "Each figure is the best of the repetitions `tools/bench.sh` runs in random order, for the "
      "probe and the operation alike.\n")
    ops = ["memset", "d2d", "h2d", "d2h", "axpy", "dot", "asum", "scal"]
    w("| device | dtype | " + " | ".join(ops) + " |")
    w("|---|---|" + "---|" * len(ops))
    for dev in devices:
        for dtype in ("float", "double"):
            cells = []
            for op in ops:
                vals = []
                for n in large:
                    got = r.get(f"device/{dev}/{op}/{dtype}/{n}", {}).get("best_bps")
                    ref = probe(PATTERN[op], dtype, n)
                    if got and ref:
                        vals.append(got / ref)
                cells.append(f"{min(vals):.2f} … {max(vals):.2f}" if vals else "–")
            w(f"| {dev} | {dtype} | " + " | ".join(cells) + " |")
    w("")

    # 1b. Blob's own operations against the same probe.
    w("### Blob operations: fraction of the streaming probe (float, same sizes and run)\n")
    blob_ops = [("Update", "triad"), ("asum_data", "sum"), ("sumsq_data", "sum"), ("scale_data", "scale")]
    w("| device | " + " | ".join(f"{op} ({pat})" for op, pat in blob_ops) + " |")
    w("|---|" + "---|" * len(blob_ops))
    for dev in devices:
        cells = []
        for op, pat in blob_ops:
            vals = [got / ref for n in large
                    for got, ref in [(r.get(f"blob/{dev}/{op}/float/{n}", {}).get("best_bps"), probe(pat, "float", n))]
                    if got and ref]
            cells.append(f"{min(vals):.2f} … {max(vals):.2f}" if vals else "–")
        w(f"| {dev} | " + " | ".join(cells) + " |")
    w("")

    # 2. Dispatch overhead at n = 1.
    w("### Dispatch overhead at n = 1 (ns over the raw library call, same run)\n")
    w("| path | blobrt | raw | overhead |")
    w("|---|---|---|---|")
    # (label, blobrt benchmark, the raw BLIS call it is compared with), on the BLIS device.
    paths = [(f"Device::{op}", f"device/blis:0/{op}", op) for op in ("axpy", "dot", "scal")]
    paths += [(f"Blob::{op} (1 element)", f"blob/blis:0/{op}", raw_op)
              for op, raw_op in (("scale_data", "scal"), ("asum_data", "asum"), ("Update", "axpy"))]
    for label, mine_key, raw_op in paths:
        mine = r.get(f"{mine_key}/float/1", {}).get("ns")
        raw = r.get(f"raw/blis/{raw_op}/float/1", {}).get("ns")
        if mine and raw:
            w(f"| {label} on blis:0 vs bli_s{raw_op}v | {mine:.1f} | {raw:.1f} | {mine - raw:+.1f} |")
    w("")

    # 2b. OpenCL at n = 1: the same calls against CLBlast on its own queue (each waits for
    # completion), where PoCL's launch latency is the cost to beat.
    w("### OpenCL at n = 1 (ns, each call complete; raw = CLBlast on its own queue, same run)\n")
    w("| path | blobrt opencl:0 | raw CLBlast | blobrt/raw |")
    w("|---|---|---|---|")
    cl_paths = [(f"Device::{op}", f"device/opencl:0/{op}", op) for op in ("axpy", "dot", "asum", "scal")]
    cl_paths += [(f"Blob::{op} (1 element)", f"blob/opencl:0/{op}", raw_op)
                 for op, raw_op in (("Update", "axpy"), ("asum_data", "asum"), ("scale_data", "scal"))]
    for label, mine_key, raw_op in cl_paths:
        mine = r.get(f"{mine_key}/float/1", {}).get("ns")
        raw = r.get(f"raw/clblast/{raw_op}/float/1", {}).get("ns")
        if mine and raw:
            w(f"| {label} vs clblast::{raw_op.capitalize()} | {mine:.1f} | {raw:.1f} | {mine / raw:.4f} |")
    w("")

    # 3. Against the raw libraries at large n.
    w("### Against the raw libraries, n = 2^24 (blobrt GB/s ÷ library GB/s)\n")
    w("| op | dtype | blobrt blis | raw BLIS (1 thread) | blobrt/BLIS | OpenBLAS cblas | blobrt/OpenBLAS | blobrt opencl | raw CLBlast | opencl/CLBlast |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    n = 1 << 24
    for op in ("axpy", "dot", "asum", "scal"):
        for dtype in ("float", "double"):
            mine = r.get(f"device/blis:0/{op}/{dtype}/{n}", {}).get("bps")
            blis = r.get(f"raw/blis/{op}/{dtype}/{n}", {}).get("bps")
            ob = r.get(f"raw/openblas/{op}/{dtype}/{n}", {}).get("bps")
            cl = r.get(f"device/opencl:0/{op}/{dtype}/{n}", {}).get("bps")
            clb = r.get(f"raw/clblast/{op}/{dtype}/{n}", {}).get("bps")
            ratio = lambda a, b: fmt(a / b) if a and b else "–"
            g = lambda x: fmt(gbps(x), 1) if x else "–"
            w(f"| {op} | {dtype} | {g(mine)} | {g(blis)} | {ratio(mine, blis)} | {g(ob)} | {ratio(mine, ob)} | "
              f"{g(cl)} | {g(clb)} | {ratio(cl, clb)} |")
    w("")

    math_tables(r, w)

    # 4. The Caffe anchor.
    w("### The Caffe anchor: Blob<float> of 16 Mi elements, median of 5 (ms)\n")
    w("| operation | BVLC Caffe (OpenBLAS, 2 threads) | " + " | ".join(f"blobrt {d}" for d in devices) + " |")
    w("|---|---|" + "---|" * len(devices))
    for op, caffe in CAFFE_MS.items():
        cells = []
        for dev in devices:
            ns = r.get(f"anchor/{dev}/{op}/float/{1 << 24}", {}).get("ns")
            cells.append(f"{ns / 1e6:.2f} ({caffe / (ns / 1e6):.1f}×)" if ns else "–")
        w(f"| {op} | {caffe} | " + " | ".join(cells) + " |")
    w("")

    # 5. Serialisation.
    w("### Serialisation of 16 Mi floats (64 MiB), median of 5\n")
    w("| step | ms | GB/s | reference | speed-up |")
    w("|---|---|---|---|---|")
    n24 = 1 << 24
    P = lambda op: r.get(f"proto/host/{op}/float/{n24}")
    rows = [
        ("ToProto (bulk)", "to_proto", "per-element add_data() loop", lambda: P("to_proto_add_data_loop")["ns"] / 1e6),
        ("FromProto (bulk)", "from_proto", "per-element data(i) loop", lambda: P("from_proto_element_loop")["ns"] / 1e6),
        ("ToProto + SerializeToString", "to_bytes", None, None),
        ("ParseFromString + FromProto", "from_bytes", None, None),
        ("save: ToProto + WriteProtoToBinaryFile", "save", f"BVLC Caffe {CAFFE_SAVE_MS} ms", lambda: CAFFE_SAVE_MS),
        ("load: ReadProtoFromBinaryFile + FromProto", "load", f"BVLC Caffe {CAFFE_LOAD_MS} ms", lambda: CAFFE_LOAD_MS),
    ]
    for label, op, ref_label, ref in rows:
        e = P(op)
        if not e:
            continue
        ms = e["ns"] / 1e6
        try:
            speedup = f"{ref() / ms:.1f}×" if ref else "–"
        except (TypeError, KeyError):
            speedup = "–"
        w(f"| {label} | {ms:.1f} | {gbps(e['bps']):.2f} | {ref_label or '–'} | {speedup} |")
    w("")

    # 6. Copies and memory.
    w("### Head round trip and resident memory\n")
    w("| device | bytes copied per round trip (n = 2^24) | round trip at n = 1 (ns) | RSS per element, data only | RSS per element, data + diff |")
    w("|---|---|---|---|---|")
    for dev in devices:
        rt = r.get(f"blob/{dev}/round_trip/float/{1 << 24}", {}).get("counters", {}).get("bytes_copied_per_iter")
        rt1 = r.get(f"blob/{dev}/round_trip/float/1", {}).get("ns")
        mem = r.get(f"memory/{dev}/rss/float/{1 << 24}", {}).get("counters", {})
        w(f"| {dev} | {fmt(rt, 0)} | {fmt(rt1, 0)} | {fmt(mem.get('rss_bytes_per_element_data'))} | "
          f"{fmt(mem.get('rss_bytes_per_element_data_diff'))} |")
    w("")

    # Sections written by other runs (tools/bench-dist.sh) are kept as they are.
    kept = ""
    if os.path.exists(out_md):
        with open(out_md) as f:
            old = f.read()
        if KEEP_MARKER in old:
            kept = "\n" + old[old.index(KEEP_MARKER):]
    with open(out_md, "w") as f:
        f.write("\n".join(lines) + "\n" + kept)

    if out_png:
        plot(r, devices, sizes, out_png)


PROBE_STYLE = "lw 3 dt 2 lc rgb 'black'"  # the ceiling: dashed black, the first series of a panel


def plot(r, devices, sizes, out_png):
    """Throughput vs n for axpy/dot/asum/scal (float), the probe as the ceiling."""
    panels = [("axpy", "triad"), ("dot", "dot"), ("asum", "sum"), ("scal", "scale")]
    series = [("probe (all cores)", lambda op, pat, n: r.get(f"probe/stream/{pat}/float/{n}", {}).get("bps"))]
    for dev in devices:
        series.append((f"blobrt {dev}", lambda op, pat, n, d=dev: r.get(f"device/{d}/{op}/float/{n}", {}).get("bps")))
    for lib in ("blis", "openblas", "clblast"):
        series.append((f"raw {lib}", lambda op, pat, n, l=lib: r.get(f"raw/{l}/{op}/float/{n}", {}).get("bps")))
    drawn = [(op, [(label, PROBE_STYLE if i == 0 else "lw 2",
                    [(n, v / 1e9) for n in sizes for v in [get(op, pat, n)] if v])
                   for i, (label, get) in enumerate(series)])
             for op, pat in panels]
    gnuplot(out_png, "blobrt level-1 throughput, float (GB/s vs n)", "2,2", "1400,1000", drawn)


def gnuplot(out_png, title, layout, size, panels):
    """Draws panels [(title, [(label, style, [(n, GB/s), ...]), ...]), ...] as a log-log
    multiplot; series without points are left out, and so are panels without any."""
    with tempfile.TemporaryDirectory() as tmp:
        script = [f"set terminal pngcairo size {size} font ',10'", f"set output '{out_png}'",
                  f"set multiplot layout {layout} title '{title}'",
                  "set logscale x 2", "set logscale y 10", "set format x '2^{%L}'",
                  "set grid", "set xlabel 'n (elements)'", "set ylabel 'GB/s moved'", "set format y '%g'", "set key right bottom"]
        for p, (panel, series) in enumerate(panels):
            plots = []
            for i, (label, style, points) in enumerate(series):
                if not points:
                    continue
                path = os.path.join(tmp, f"{p}_{i}.dat")
                with open(path, "w") as f:
                    f.write("\n".join(f"{n} {v}" for n, v in points) + "\n")
                plots.append(f"'{path}' using 1:2 with linespoints {style} title '{label}'")
            if plots:
                script.append(f"set title '{panel}'")
                script.append("plot " + ", ".join(plots))
        script.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)


# --cuda: issue 27's targets for one blobrt-bench-cuda run. Every figure divides blobrt's
# result by a reference measured in the same run on the same GPU.

CUDA = "cuda:0"        # blobrt's id of the measured device: the run's context says which (cuda_report)
DTYPES = ("float", "double")
LARGE_N = 1 << 26      # the bandwidth targets hold from here up
COPY_N = 1 << 24       # h2d/d2h are held to raw cudaMemcpy from here up
DISPATCH_NS = 2000     # the most a call at n = 1 may add to the raw cuBLAS call
LEVEL1 = ("axpy", "scal", "dot", "asum", "memset", "d2d")
CUBLAS_OPS = ("axpy", "dot", "asum", "scal")
BLOB_RAW = {"Update": "axpy", "asum_data": "asum", "scale_data": "scal", "sumsq_data": "dot"}
# Target key -> the routine blobrt-bench-cuda times through cuda:0 and raw (n = 4096 in the name).
BLAS = {"gemm": "gemm_4096x4096x4096", "gemv/N": "gemv_N_4096x4096", "gemv/T": "gemv_T_4096x4096"}
GPU_CONTEXT = [("gpu_name", "GPU"), ("gpu_compute_capability", "compute capability"), ("gpu_sm_count", "SMs"),
               ("gpu_memory_bytes", "memory"), ("cuda_driver", "CUDA driver"), ("cuda_runtime", "CUDA runtime"),
               ("cublas", "cuBLAS"), ("nccl", "NCCL"), ("blobrt_version", "blobrt")]
SECTIONS = {
    "bandwidth": ("Level-1 operations on cuda:0: fraction of the bandwidth ceiling",
                  "Best rate of the `Device` call ÷ the ceiling of its access pattern: the best of the plain CUDA "
                  "kernel and, for copies, `cudaMemcpy` device to device (same size, dtype and run); minimum "
                  "over n ≥ 2^26."),
    "copy": ("Host↔device copies: fraction of raw cudaMemcpy",
             "Best rate of `Device::h2d`/`d2h` ÷ raw `cudaMemcpy` from/to the same pinned buffers; minimum over "
             "n ≥ 2^24."),
    "dispatch": ("Dispatch overhead at n = 1",
                 "Median ns of the blobrt call (synchronised) minus the raw cuBLAS call + stream "
                 "synchronisation it wraps."),
    "round_trip": ("Head round trip at n = 1",
                   "`Blob` head to cuda:0 and back ÷ two raw 4-byte `cudaMemcpy` calls (h2d then d2h, pinned)."),
    "blas": ("gemm and gemv against raw cuBLAS",
             "Raw cuBLAS time ÷ blobrt's time on the same buffers: blobrt's speed as a fraction of cuBLAS. "
             "Issue 27 sets the gemm target; the gemv target is this project's own (the issue names none)."),
    "ew": ("Element-wise operations at n = 2^26: fraction of the ceiling",
           "Best rate ÷ the ceiling of the operation's access pattern (the same probes as level 1)."),
    "large_blob": ("A Blob of 2^31 + 8 floats",
                   "GoogleTest `test_large_blob`, run by `run-on-gpu.sh`: its lines of `summary.txt`; met when it "
                   "passed and its case on the CUDA device ran (a case skipped for lack of memory also passes)."),
}
JSON_FIELDS = ("key", "what", "figure", "target", "comparison", "unit", "verdict", "why", "detail")


def best(r, key):
    return r.get(key, {}).get("best_bps")


def median_ns(r, key):
    return r.get(key, {}).get("ns")


def pow2(n):
    return "1" if n == 1 else f"2^{int(math.log2(n))}" if n & (n - 1) == 0 else str(n)


def ceiling(r, pattern, dtype, n):
    """The GPU memory's bandwidth for an access pattern: the best of the plain kernel and,
    for copies, cudaMemcpy (whichever the GPU runs faster)."""
    rates = [best(r, f"probe/cuda_kernel/{pattern}/{dtype}/{n}")]
    if pattern == "copy":
        rates.append(best(r, f"probe/cuda_memcpy/copy/{dtype}/{n}"))
    rates = [x for x in rates if x]
    return max(rates) if rates else None


def sizes_of(r, prefix):
    """The n measured for benchmarks named PREFIX/n."""
    return sorted(int(n) for p, _, n in (k.rpartition("/") for k in r) if p == prefix and n.isdigit())


def worst_fraction(r, prefix, reference, min_n):
    """(min over measured n >= min_n of best rate(PREFIX/n) ÷ reference(n), that n), or (None, None)."""
    pairs = [(best(r, f"{prefix}/{n}") / reference(n), n) for n in sizes_of(r, prefix)
             if n >= min_n and best(r, f"{prefix}/{n}") and reference(n)]
    return min(pairs) if pairs else (None, None)


def target(section, key, what, figure, goal, comparison, unit, detail=""):
    """One row: its verdict follows from the figure (None: a benchmark is missing)."""
    if figure is None:
        verdict = "not measured"
    else:
        verdict = "met" if (figure >= goal if comparison == ">=" else figure <= goal) else "MISSED"
    return {"section": section, "key": key, "what": what, "figure": figure, "target": goal,
            "comparison": comparison, "unit": unit, "verdict": verdict, "detail": detail}


def cublas_name(op, dtype):
    return f"cublas{'S' if dtype == 'float' else 'D'}{op}"


def bandwidth_targets(r):
    for op in LEVEL1:
        for dtype in DTYPES:
            figure, n = worst_fraction(r, f"device/{CUDA}/{op}/{dtype}",
                                       lambda n: ceiling(r, PATTERN[op], dtype, n), LARGE_N)
            yield target("bandwidth", f"bandwidth/{op}/{dtype}", f"Device::{op} {dtype} ÷ {PATTERN[op]} ceiling",
                         figure, 0.9, ">=", "fraction", f"worst at n = {pow2(n)}" if n else "")


def copy_targets(r):
    for op in ("h2d", "d2h"):
        for dtype in DTYPES:
            figure, n = worst_fraction(r, f"device/{CUDA}/{op}/{dtype}",
                                       lambda n: best(r, f"raw/cudamemcpy/{op}/{dtype}/{n}"), COPY_N)
            yield target("copy", f"copy/{op}/{dtype}", f"Device::{op} {dtype} ÷ cudaMemcpy {op}",
                         figure, 0.9, ">=", "fraction", f"worst at n = {pow2(n)}" if n else "")


def dispatch_targets(r):
    calls = [(f"dispatch/device/{op}/{dtype}", f"Device::{op} {dtype}", f"device/{CUDA}/{op}/{dtype}/1", op, dtype)
             for op in CUBLAS_OPS for dtype in DTYPES]
    calls += [(f"dispatch/blob/{op}/float", f"Blob::{op} float", f"blob/{CUDA}/{op}/float/1", raw_op, "float")
              for op, raw_op in BLOB_RAW.items()]
    for key, label, mine_key, raw_op, dtype in calls:
        mine, raw = median_ns(r, mine_key), median_ns(r, f"raw/cublas/{raw_op}/{dtype}/1")
        figure = mine - raw if mine and raw else None
        yield target("dispatch", key, f"{label} − {cublas_name(raw_op, dtype)}, n = 1", figure, DISPATCH_NS, "<=",
                     "ns", f"{mine:.0f} ns vs {raw:.0f} ns" if figure is not None else "")


def round_trip_target(r):
    mine, raw = median_ns(r, f"blob/{CUDA}/round_trip/float/1"), median_ns(r, "raw/cudamemcpy/round_trip/float/1")
    figure = mine / raw if mine and raw else None
    return target("round_trip", "round_trip", "Blob<float> round trip ÷ 2 raw cudaMemcpy, n = 1", figure, 2.0, "<=",
                  "×", f"{mine:.0f} ns vs {raw:.0f} ns" if figure is not None else "")


def blas_targets(r):
    for key, routine in BLAS.items():
        for dtype in DTYPES:
            mine_key, raw_key = f"math/{CUDA}/{routine}/{dtype}/4096", f"raw/cublas/{routine}/{dtype}/4096"
            mine, raw = median_ns(r, mine_key), median_ns(r, raw_key)
            figure = raw / mine if mine and raw else None
            gflops = [r.get(k, {}).get("counters", {}).get("GFLOPS") for k in (mine_key, raw_key)]
            detail = f"GFLOPS: blobrt {fmt(gflops[0], 1)}, cuBLAS {fmt(gflops[1], 1)}" if key == "gemm" else ""
            yield target("blas", f"{key}/{dtype}", f"{routine} {dtype}: cuBLAS time ÷ blobrt time", figure, 0.95, ">=",
                         "fraction", detail)


def ew_targets(r):
    for op, pattern in EW_PATTERN.items():
        for dtype in DTYPES:
            got, ref = best(r, f"math/{CUDA}/ew_{op}/{dtype}/{LARGE_N}"), ceiling(r, pattern, dtype, LARGE_N)
            yield target("ew", f"ew/{op}/{dtype}", f"ew_{op} {dtype} ÷ {pattern} ceiling, n = 2^26",
                         got / ref if got and ref else None, 0.9, ">=", "fraction")


def large_blob_target(summary_path):
    """From run-on-gpu.sh's summary.txt: its test_large_blob line, and the line under it that
    says on which devices the cases ran (`test_large_blob devices: ran A B; skipped C`). A
    failure misses; met needs the CUDA device among those that ran (a case skipped for
    memory also passes); anything else is not measured."""
    lines, ran = [], []
    if summary_path:
        try:
            with open(summary_path) as f:
                summary = f.readlines()
        except OSError as e:
            sys.exit(f"bench_report.py: cannot read {summary_path}: {e.strerror}")
        for line in summary:
            if line.startswith(("PASSED", "FAILED", "SKIPPED")) and "test_large_blob" in line:
                lines.append(line.strip())
            elif line.strip().startswith("test_large_blob devices:"):
                lines.append(line.strip())
                found = re.search(r"devices: ran ([^;]*)", line)
                ran = found.group(1).split() if found else []
    figure = "; ".join(lines) or ("no test_large_blob line in the summary" if summary_path else "not given")
    if any(l.startswith("FAILED") for l in lines):
        verdict = "MISSED"
    elif any(l.startswith("PASSED") for l in lines) and CUDA in ran:
        verdict = "met"
    else:
        verdict = "not measured"
        if any(l.startswith("PASSED") for l in lines):
            figure += f" ({CUDA} is not among the devices it ran on)"
    return {"section": "large_blob", "key": "large_blob", "what": "test_large_blob (2^31 + 8 floats)",
            "figure": figure, "target": "PASSED", "comparison": "==", "unit": "", "verdict": verdict, "detail": ""}


def cuda_targets(r, summary_path, notes):
    """Every target of issue 27, in the order of the report, each with its "why" when MISSED."""
    targets = [*bandwidth_targets(r), *copy_targets(r), *dispatch_targets(r), round_trip_target(r),
               *blas_targets(r), *ew_targets(r), large_blob_target(summary_path)]
    for t in targets:
        t["why"] = notes.get(t["key"], "not yet explained") if t["verdict"] == "MISSED" else None
    return targets


def gpu_context(context):
    """The GPU and library versions the driver wrote into the JSON context ("?" when absent)."""
    shown = {key: str(context.get(key, "?")) for key, _ in GPU_CONTEXT}
    try:
        shown["gpu_memory_bytes"] = f"{int(float(shown['gpu_memory_bytes'])) / 2**30:.1f} GiB"
    except ValueError:
        pass  # "?" or a text the driver wrote, shown as it is
    return shown


def shown_figure(t):
    if not isinstance(t["figure"], (int, float)):
        return fmt(t["figure"]) if t["figure"] is None else t["figure"]
    return {"ns": f"{t['figure']:+.0f} ns", "×": f"{t['figure']:.2f}×"}.get(t["unit"], f"{t['figure']:.3f}")


def shown_target(t):
    sign = {">=": "≥ ", "<=": "≤ "}.get(t["comparison"], "")
    unit = {"ns": " ns", "×": "×"}.get(t["unit"], "")
    return f"{sign}{t['target']}{unit}"


def targets_md(targets, w):
    for section, (title, explanation) in SECTIONS.items():
        rows = [t for t in targets if t["section"] == section]
        w(f"### {title}\n")
        w(explanation + "\n")
        w("| key | what | figure | target | verdict | why |")
        w("|---|---|---|---|---|---|")
        for t in rows:
            figure = shown_figure(t) + (f" ({t['detail']})" if t["detail"] else "")
            verdict = f"**{t['verdict']}**" if t["verdict"] == "MISSED" else t["verdict"]
            w(f"| `{t['key']}` | {t['what']} | {figure} | {shown_target(t)} | {verdict} | {t['why'] or ''} |")
        w("")


def ew_dispatch_md(r, w):
    """Informational: what an element-wise call at n = 1 costs beyond Device::scal's."""
    w("### Element-wise at n = 1 against the level-1 dispatch (ns over Device::scal, informational)\n")
    w("| dtype | " + " | ".join(EW_PATTERN) + " | scal (ns) |")
    w("|---|" + "---|" * (len(EW_PATTERN) + 1))
    for dtype in DTYPES:
        scal = median_ns(r, f"device/{CUDA}/scal/{dtype}/1")
        cells = [f"{ns - scal:+.0f}" if ns and scal else "–"
                 for ns in (median_ns(r, f"math/{CUDA}/ew_{op}/{dtype}/1") for op in EW_PATTERN)]
        w(f"| {dtype} | " + " | ".join(cells) + f" | {fmt(scal, 0)} |")
    w("")


def level1_series(op, dtype):
    """(label, benchmark prefix) of op's curves: its ceiling first, then blobrt, then the raw library."""
    if op in ("h2d", "d2h"):
        return [(f"blobrt {CUDA} {op}", f"device/{CUDA}/{op}/{dtype}"),
                (f"raw cudaMemcpy {op}", f"raw/cudamemcpy/{op}/{dtype}")]
    pattern = PATTERN[op]
    series = [(f"probe kernel {pattern}", f"probe/cuda_kernel/{pattern}/{dtype}")]
    if pattern == "copy":
        series.append(("cudaMemcpy d2d", f"probe/cuda_memcpy/copy/{dtype}"))
    series.append((f"blobrt {CUDA} {op}", f"device/{CUDA}/{op}/{dtype}"))
    if op in CUBLAS_OPS:
        series.append((f"raw cuBLAS {op}", f"raw/cublas/{op}/{dtype}"))
    return series


def curves_md(r, w):
    """GB/s at every n for cuda:0's level-1 ops next to their ceilings: the whole curve."""
    for dtype in DTYPES:
        series = [s for op in LEVEL1 + ("h2d", "d2h") for s in level1_series(op, dtype)]
        sizes = sorted({n for _, prefix in series for n in sizes_of(r, prefix)})
        w(f"### GB/s by n, {dtype} (best repetition)\n")
        w("| series | " + " | ".join(pow2(n) for n in sizes) + " |")
        w("|---|" + "---|" * len(sizes))
        for label, prefix in series:
            w(f"| {label} | " + " | ".join(fmt(gbps(best(r, f"{prefix}/{n}") or math.nan), 1) for n in sizes) + " |")
        w("")


def cuda_md(context, r, targets, counts):
    lines = []
    w = lines.append
    w(f"Generated by `tools/bench_report.py --cuda` from one `blobrt-bench-cuda` run on "
      f"{context.get('host_name', '?')}, {context.get('date', '?')}.\n")
    w(f"Issue 27's targets: {counts['met']} met, {counts['missed']} MISSED, {counts['not_measured']} not measured.\n")
    w("| | |")
    w("|---|---|")
    shown = gpu_context(context)
    for key, label in GPU_CONTEXT:
        w(f"| {label} | {shown[key]} |")
    w("")
    targets_md(targets, w)
    ew_dispatch_md(r, w)
    curves_md(r, w)
    return "\n".join(lines)


def cuda_plot(r, out_png):
    """GB/s vs n (float) for cuda:0's level-1 operations, the probe kernel as the ceiling."""
    # The same series in the same colour on every panel.
    styles = {"probe/cuda_kernel": PROBE_STYLE, "probe/cuda_memcpy": "lw 2 dt 3 lc rgb 'gray40'",
              f"device/{CUDA}": "lw 2 lc rgb '#009e73'", "raw/cublas": "lw 2 lc rgb '#0072b2'"}
    panels = []
    for op in ("axpy", "dot", "asum", "scal", "memset", "d2d"):
        series = []
        for label, prefix in level1_series(op, "float"):
            points = [(n, gbps(best(r, f"{prefix}/{n}"))) for n in sizes_of(r, prefix) if best(r, f"{prefix}/{n}")]
            series.append((label, styles["/".join(prefix.split("/")[:2])], points))
        panels.append((op, series))
    gnuplot(out_png, f"blobrt {CUDA} level-1 throughput, float (GB/s vs n)", "2,3", "2100,1000", panels)


def cuda_report(args):
    """Writes OUT.md, OUT.json and (with gnuplot) OUT.png; returns the exit status."""
    out_json = os.path.splitext(args.out_md)[0] + ".json"
    if os.path.abspath(out_json) == os.path.abspath(args.results):
        sys.exit(f"bench_report.py: {out_json} would overwrite the benchmark results; name OUT.md differently")
    context, r = load(args.results)
    if "gpu_name" not in context:  # a filtered run may lack any group of rows, never its context
        sys.exit(f"bench_report.py: {args.results} is not a blobrt-bench-cuda run (no GPU in its context); "
                 "--cuda reports on those only")
    global CUDA
    CUDA = context.get("blobrt_device", CUDA)  # blobrt-bench-cuda measures the first CUDA device
    notes = {}
    if args.notes:
        notes = read_json(args.notes)
        if not isinstance(notes, dict):
            sys.exit(f"bench_report.py: {args.notes} must hold one JSON object (target key -> text)")
    targets = cuda_targets(r, args.summary, notes)
    counts = {"met": 0, "missed": 0, "not_measured": 0}
    for t in targets:
        counts[t["verdict"].lower().replace(" ", "_")] += 1
    with open(args.out_md, "w") as f:
        f.write(cuda_md(context, r, targets, counts) + "\n")
    with open(out_json, "w") as f:
        json.dump({"source": os.path.basename(args.results),
                   "context": {"host_name": context.get("host_name", "?"), "date": context.get("date", "?"),
                               **{k: str(context.get(k, "?")) for k, _ in GPU_CONTEXT}},
                   "targets": [{k: t[k] for k in JSON_FIELDS} for t in targets],
                   "summary": counts}, f, indent=2, ensure_ascii=False)
        f.write("\n")
    if args.out_png:
        if shutil.which("gnuplot"):
            cuda_plot(r, args.out_png)
        else:
            print(f"bench_report.py: gnuplot is not on PATH, {args.out_png} not written", file=sys.stderr)
    return 1 if args.strict and counts["missed"] else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", metavar="RESULTS.json", help="Google Benchmark JSON of one run")
    parser.add_argument("out_md", metavar="OUT.md")
    parser.add_argument("out_png", metavar="OUT.png", nargs="?")
    parser.add_argument("--cuda", action="store_true",
                        help="a blobrt-bench-cuda run: issue 27's targets, also written to OUT.json")
    parser.add_argument("--summary", metavar="SUMMARY.txt", help="--cuda: run-on-gpu.sh's summary (test_large_blob)")
    parser.add_argument("--notes", metavar="NOTES.json", help="--cuda: why each MISSED target is missed, by key")
    parser.add_argument("--strict", action="store_true", help="--cuda: exit 1 when a target is MISSED")
    args = parser.parse_args()
    if not args.cuda and (args.summary or args.notes or args.strict):
        parser.error("--summary, --notes and --strict go with --cuda")
    if not args.cuda:
        cpu_report(args.results, args.out_md, args.out_png)
        return 0
    return cuda_report(args)


if __name__ == "__main__":
    sys.exit(main())
