#!/usr/bin/env python3
"""Turns one blobrt-bench JSON run into the ratio tables and the plot of
docs/performance.md: every figure is divided by references measured in the same run.

usage: bench_report.py RESULTS.json OUT.md [OUT.png]
"""
import json
import math
import os
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


def load(path):
    with open(path) as f:
        data = json.load(f)
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


def main():
    context, r = load(sys.argv[1])
    out_md = sys.argv[2]
    out_png = sys.argv[3] if len(sys.argv) > 3 else None
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


def plot(r, devices, sizes, out_png):
    """Throughput vs n for axpy/dot/asum/scal (float), the probe as the ceiling."""
    panels = [("axpy", "triad"), ("dot", "dot"), ("asum", "sum"), ("scal", "scale")]
    series = [("probe (all cores)", lambda op, pat, n: r.get(f"probe/stream/{pat}/float/{n}", {}).get("bps"))]
    for dev in devices:
        series.append((f"blobrt {dev}", lambda op, pat, n, d=dev: r.get(f"device/{d}/{op}/float/{n}", {}).get("bps")))
    for lib in ("blis", "openblas", "clblast"):
        series.append((f"raw {lib}", lambda op, pat, n, l=lib: r.get(f"raw/{l}/{op}/float/{n}", {}).get("bps")))
    with tempfile.TemporaryDirectory() as tmp:
        script = [f"set terminal pngcairo size 1400,1000 font ',10'", f"set output '{out_png}'",
                  "set multiplot layout 2,2 title 'blobrt level-1 throughput, float (GB/s vs n)'",
                  "set logscale x 2", "set logscale y 10", "set format x '2^{%L}'",
                  "set grid", "set xlabel 'n (elements)'", "set ylabel 'GB/s moved'", "set format y '%g'", "set key right bottom"]
        for op, pat in panels:
            plots = []
            for i, (label, get) in enumerate(series):
                path = os.path.join(tmp, f"{op}_{i}.dat")
                rows = [(n, get(op, pat, n)) for n in sizes]
                rows = [(n, v / 1e9) for n, v in rows if v]
                if not rows:
                    continue
                with open(path, "w") as f:
                    f.write("\n".join(f"{n} {v}" for n, v in rows) + "\n")
                style = "lw 3 dt 2 lc rgb 'black'" if i == 0 else "lw 2"
                plots.append(f"'{path}' using 1:2 with linespoints {style} title '{label}'")
            script.append(f"set title '{op}'")
            script.append("plot " + ", ".join(plots))
        script.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)


if __name__ == "__main__":
    main()
