#!/usr/bin/env python3
"""Turns one blobrt-bench JSON run into the ratio tables and the plot of
docs/performance.md: every figure is divided by references measured in the same run.
With --cuda, turns one blobrt-bench-cuda run into issue 27's targets, each met or MISSED.

usage: bench_report.py RESULTS.json OUT.md [OUT.png]
       bench_report.py --cuda BENCH.json OUT.md [OUT.png] [--summary SUMMARY.txt]
                       [--notes NOTES.json] [--strict]

Each table is a description (Table: its title, the rows it selects, its columns with the
formula and the format of each cell); render() turns a description and the run into
Markdown. CPU_TABLES lists the CPU report's tables in the order of the page.
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
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

# BVLC Caffe (CPU_ONLY, OpenBLAS on 2 threads) on this machine, Blob<float> of 16 Mi
# elements, median of 5 (issue 5).
CAFFE_MS = {"Update": 6.4, "asum_data": 3.6, "sumsq_data": 7.3, "scale_data": 6.5}
CAFFE_SAVE_MS = 177 + 90   # ToProto + WriteProtoToBinaryFile
CAFFE_LOAD_MS = 181 + 62   # ReadProtoFromBinaryFile + FromProto

# Which probe pattern bounds which operation.
PATTERN = {"memset": "fill", "h2d": "copy", "d2h": "copy", "d2d": "copy", "axpy": "triad",
           "dot": "dot", "asum": "sum", "scal": "scale"}
TO_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
DTYPES = ("float", "double")
MISSING = "–"  # a cell whose benchmark (or reference) is not in the run
# In place of a table none of whose rows the run has (a filtered run, a backend not built).
NOT_MEASURED = "Not measured in this run: none of the benchmarks this table reads is in it."


KEEP_MARKER = "<!-- libblobrt-dist results: tools/bench-dist.sh -->"

Entry = Dict[str, Any]  # one benchmark: "ns" (median), "bps", "best_bps", "counters"


def read_json(path: str) -> Any:
    """A JSON file's content; exits with one line naming the file when it cannot be read or
    is not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        sys.exit(f"bench_report.py: cannot read {path}: {e.strerror}")
    except ValueError as e:
        sys.exit(f"bench_report.py: {path} is not JSON: {e}")


def load(path: str) -> Tuple[Dict[str, Any], Dict[str, Entry]]:
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        sys.exit(f"bench_report.py: {path} is not Google Benchmark's JSON (no \"benchmarks\" list)")
    results: Dict[str, Entry] = {}
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
            "label": b.get("label", ""),
            "counters": {k: v for k, v in b.items() if isinstance(v, (int, float))},
        }
    # The ratio tables divide best rates: the same bytes in the fastest repetition's time
    # (a "min" of bytes_per_second would be the slowest repetition's rate).
    for base, e in results.items():
        e["best_bps"] = e["bps"] * e["ns"] / fastest[base] if base in fastest and e["bps"] else e["bps"]
    return data.get("context", {}), results


def gbps(x: float) -> float:
    return x / 1e9


def fmt(x: Any, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return MISSING
    return f"{x:.{digits}f}"


def pow2(n: int) -> str:
    return "1" if n == 1 else f"2^{int(math.log2(n))}" if n & (n - 1) == 0 else str(n)


# ---------------------------------------------------------------------------------------
# Tables as data. A row is a mapping of names (dev, dtype, op, ...); a cell's value comes
# from a formula of the run and the row, None when what it needs is not in the run.

@dataclass(frozen=True)
class Run:
    """One run as the tables read it. `names` fills the {placeholders} of titles, texts,
    headers and benchmark-name templates: the device ids (taken from the run), and the like."""
    context: Mapping[str, Any]
    results: Mapping[str, Entry]
    names: Mapping[str, str] = field(default_factory=dict)
    devices: Tuple[str, ...] = ()  # the blobrt devices with device/ rows, host first
    sizes: Tuple[int, ...] = ()    # the probe sizes
    large: Tuple[int, ...] = ()    # the probe sizes the fraction tables span

    def entry(self, key: str) -> Entry:
        return self.results.get(key, {})

    def probe(self, pattern: str, dtype: str, n: int) -> Optional[float]:
        """The best rate of the streaming probe of an access pattern (all cores)."""
        return self.entry(f"probe/stream/{pattern}/{dtype}/{n}").get("best_bps")


Row = Mapping[str, Any]
Value = Callable[[Run, Row], Any]


@dataclass(frozen=True)
class Column:
    header: str                          # a template: {blis} and the like come from Run.names
    value: Value                         # the formula; None: not measured (shown as MISSING)
    show: Callable[[Any], str] = str     # the format of a measured value
    required: bool = False               # a row without this cell is left out of the table


@dataclass(frozen=True)
class Table:
    title: str                                            # a template, as Column.header
    rows: Union[Sequence[Row], Callable[[Run], Iterable[Row]]]  # which rows, in order
    columns: Union[Sequence[Column], Callable[[Run], Sequence[Column]]]
    text: str = ""                                        # the paragraph under the title, a template
    when: Callable[[Run], bool] = lambda run: True        # whether the run has this table at all


def render(table: Table, run: Run) -> List[str]:
    """A table's Markdown lines: title, text, header, one line per selected row (rows
    missing a required cell are left out), then a blank line. Without any row, NOT_MEASURED
    stands in for the header (a header alone would read as a table that lost its rows)."""
    if not table.when(run):
        return []
    columns = table.columns(run) if callable(table.columns) else table.columns
    rows = table.rows(run) if callable(table.rows) else table.rows
    lines = [f"### {table.title.format(**run.names)}\n"]
    if table.text:
        lines.append(table.text.format(**run.names) + "\n")
    body = []
    for row in rows:
        values = [c.value(run, row) for c in columns]
        if any(c.required and v is None for c, v in zip(columns, values)):
            continue
        body.append("| " + " | ".join(MISSING if v is None else c.show(v) for c, v in zip(columns, values)) + " |")
    if not body:
        return lines + [NOT_MEASURED, ""]
    return lines + ["| " + " | ".join(c.header.format(**run.names) for c in columns) + " |",
                    "|" + "---|" * len(columns), *body, ""]


# Cell formulas. A benchmark is named by a template ("device/{dev}/{op}/{dtype}/{n}"),
# filled from the run's names, the row, and what the column fixes (op=..., n=...).

def measure(template: str, what: str = "ns", zero_is_missing: bool = True, **fixed: Any) -> Value:
    """One figure of one benchmark: "ns" (median time), "bps" (median rate) or "best_bps".
    Most tables take a zero for not measured (a rate without bytes is 0); zero_is_missing=False
    shows it."""
    return figure_of(template, lambda e: e.get(what), zero_is_missing, fixed)


def counter(template: str, name: str, zero_is_missing: bool = True, **fixed: Any) -> Value:
    """A user counter of one benchmark (GFLOPS, bytes_copied_per_iter, ...), as measure()."""
    return figure_of(template, lambda e: e.get("counters", {}).get(name), zero_is_missing, fixed)


def figure_of(template: str, pick: Callable[[Entry], Any], zero_is_missing: bool, fixed: Mapping[str, Any]) -> Value:
    def value(run: Run, row: Row) -> Any:
        got = pick(run.entry(template.format(**run.names, **row, **fixed)))
        return got if got or not zero_is_missing else None
    return value


def ratio(num: Value, den: Value) -> Value:
    def value(run: Run, row: Row) -> Optional[float]:
        a, b = num(run, row), den(run, row)
        return a / b if a and b else None
    return value


def difference(a: Value, b: Value) -> Value:
    def value(run: Run, row: Row) -> Optional[float]:
        x, y = a(run, row), b(run, row)
        return x - y if x and y else None
    return value


def filled(template: str) -> Value:
    """A label made of the run's names and the row's."""
    return lambda run, row: template.format(**run.names, **row)


def fraction_range(group: str, op: str, pattern: str) -> Value:
    """The best rates of GROUP/dev/OP/dtype/n ÷ the probe of PATTERN at each of the run's
    large n (None when none of them is measured)."""
    def value(run: Run, row: Row) -> Optional[List[float]]:
        vals = []
        for n in run.large:
            got = run.entry(f"{group}/{row['dev']}/{op}/{row['dtype']}/{n}").get("best_bps")
            ref = run.probe(pattern, row["dtype"], n)
            if got and ref:
                vals.append(got / ref)
        return vals or None
    return value


def probe_fraction(template: str, pattern: str, n: int, **fixed: Any) -> Value:
    """Best rate of one benchmark at n ÷ the probe of PATTERN at the same n and dtype."""
    got = measure(template, "best_bps", n=n, **fixed)
    return ratio(got, lambda run, row: run.probe(pattern, row["dtype"], n))


def digits(d: int) -> Callable[[Any], str]:
    return lambda x: fmt(x, d)


def spec(f: str) -> Callable[[Any], str]:
    """A format spec applied as it is ("+.0f"): NaN shows as nan, as an f-string does."""
    return lambda x: format(x, f)


def show_range(vals: List[float]) -> str:
    return f"{min(vals):.2f} … {max(vals):.2f}"


def grid(**axes: Union[Sequence[Any], Callable[[Run], Sequence[Any]]]) -> Callable[[Run], Sequence[Row]]:
    """Rows: every combination of the axes' values, the first axis outermost; an axis may be
    a function of the run (its devices)."""
    def rows(run: Run) -> Sequence[Row]:
        out: List[Dict[str, Any]] = [{}]
        for name, values in axes.items():
            vals = values(run) if callable(values) else values
            out = [{**r, name: v} for r in out for v in vals]
        return out
    return rows


def label(header: str, name: str) -> Column:
    """A column that shows one of the row's names (its device, dtype, ...)."""
    return Column(header, lambda run, row: row[name])


# ---------------------------------------------------------------------------------------
# The CPU report (blobrt-bench's run): its tables, in the order of the page.

LARGE_MIN_N = 1 << 22  # the fraction tables span the probe sizes from here up (bench.sh repeats these)
BIG_N = 1 << 24        # the one large n of the library, element-wise, anchor, serialisation, memory rows
LEVEL1_OPS = ("memset", "d2d", "h2d", "d2h", "axpy", "dot", "asum", "scal")
BLOB_PATTERN = (("Update", "triad"), ("asum_data", "sum"), ("sumsq_data", "sum"), ("scale_data", "scale"))
RAW_OPS = ("axpy", "dot", "asum", "scal")  # the ops every raw library measures
# The backends whose blobrt device is compared with the raw library of the same name
# (blis:N with BLIS, opencl:N with CLBlast), and the built-in one (host:N).
BACKENDS = ("blis", "opencl", "host")
PROTO = "proto/host/{op}/float/{n}"  # the serialisation rows (bench_proto.cpp)


def device_of(results: Mapping[str, Entry], backend: str) -> str:
    """The run's blobrt device of a backend ("blis" -> "blis:0"): the lowest index among the
    ids its rows name; index 0 when it has none (its columns then show MISSING)."""
    ids = {k.split("/")[1] for k in results if k.count("/") >= 2}
    indices = sorted(int(d.split(":")[1]) for d in ids
                     if d.startswith(backend + ":") and d.split(":")[1].isdigit())
    return f"{backend}:{indices[0] if indices else 0}"


def cpu_run(context: Mapping[str, Any], results: Mapping[str, Entry]) -> Run:
    # group/subject/op/dtype/n; gemm's and gemv's sizes ("16x16x16") have their own table
    names = [k.split("/") for k in results if k.count("/") == 4 and k.rsplit("/", 1)[1].isdigit()]
    ids = {b: device_of(results, b) for b in BACKENDS}
    devices = sorted({s for g, s, *_ in names if g == "device"}, key=lambda d: (d != ids["host"], d))
    sizes = sorted({int(n) for g, *_, n in names if g == "probe"})
    large = [n for n in sizes if n >= LARGE_MIN_N]
    return Run(context, results, {**ids, "large": ", ".join(f"2^{int(math.log2(n))}" for n in large)},
               tuple(devices), tuple(sizes), tuple(large))


def math_keys(run: Run) -> List[str]:
    return [k for k in run.results if k.startswith("math/") and k.count("/") == 4]


def ew_devices(n: int) -> Callable[[Run], List[str]]:
    """The devices with element-wise rows at n (math/clblast/gemm is a library, not a device;
    opencl:0 has no element-wise rows at n = 1)."""
    return lambda run: sorted({k.split("/")[1] for k in math_keys(run)
                               if k.split("/")[2].startswith("ew_") and k.endswith(f"/{n}")})


def ew_ops(results: Mapping[str, Entry]) -> Dict[str, Tuple[str, bool]]:
    """The element-wise operations the run measured, in the order of its rows (the list's,
    blobrt/elementwise_operations.h), each with the probe pattern of its access and whether
    it is compute-bound: blobrt-bench labels each ew_ row so ("copy", or "copy heavy")."""
    ops: Dict[str, Tuple[str, bool]] = {}
    for key, entry in results.items():
        parts = key.split("/")
        if len(parts) == 5 and parts[0] == "math" and parts[2].startswith("ew_") and parts[2][3:] not in ops:
            words = str(entry.get("label", "")).split()
            if words:
                ops[parts[2][3:]] = (words[0], "heavy" in words[1:])
    return ops


def ew_over_scal(run: Run) -> List[Column]:
    """Per element-wise operation: ns at n = 1 over the level-1 dispatch (Device::scal) of the same device."""
    return [Column(op, difference(measure("math/{dev}/ew_{op}/{dtype}/1", op=op), SCAL_AT_1), spec("+.0f"))
            for op in ew_ops(run.results)]


def ew_fractions(run: Run) -> List[Column]:
    """Per element-wise operation: its rate over the probe of its pattern, at BIG_N (* marks
    the compute-bound ones)."""
    return [Column(f"{op}{'*' if heavy else ''}", probe_fraction("math/{dev}/ew_{op}/{dtype}/{n}", pattern, BIG_N, op=op),
                   fmt) for op, (pattern, heavy) in ew_ops(run.results).items()]


def blas_rows(run: Run) -> Sequence[Row]:
    """gemm_*/gemv_* routines of bench_math.cpp by dtype, at the size their math/ rows name
    (one per routine). bench_opencl_math.cpp's math/opencl:0/gemm/DTYPE/MxNxK rows are held to
    CLBlast, not BLIS: they have no figure in this table."""
    keys = [k.split("/") for k in math_keys(run) if k.rsplit("/", 1)[1].isdigit()]
    rows = []
    for routine in sorted({op for _, _, op, _, _ in keys if op.startswith(("gemm_", "gemv_"))}):
        for dtype in DTYPES:
            sizes = [n for _, _, op, d, n in keys if op == routine and d == dtype]
            if sizes:
                rows.append({"routine": routine, "dtype": dtype, "n": sizes[0]})
    return rows


def level1_calls(device_ops: Sequence[str], blob_ops: Sequence[Tuple[str, str]]) -> Sequence[Row]:
    """Rows of the dispatch tables: Device::op and Blob::op (1 element), each with the raw call it makes."""
    return ([{"path": f"Device::{op}", "group": "device", "op": op, "raw_op": op} for op in device_ops] +
            [{"path": f"Blob::{op} (1 element)", "group": "blob", "op": op, "raw_op": raw} for op, raw in blob_ops])


def anchor_columns(run: Run) -> List[Column]:
    """BVLC Caffe's time, then each device's time and Caffe's time ÷ it."""
    def cell(dev: str) -> Value:
        anchor = measure("anchor/{dev}/{op}/float/{n}", dev=dev, n=BIG_N)

        def value(run: Run, row: Row) -> Optional[Tuple[float, float]]:
            ns = anchor(run, row)
            return None if ns is None else (ns / 1e6, row["caffe"] / (ns / 1e6))
        return value
    return [label("operation", "op"), label("BVLC Caffe (OpenBLAS, 2 threads)", "caffe"),
            *[Column(f"blobrt {dev}", cell(dev), lambda v: f"{v[0]:.2f} ({v[1]:.1f}×)") for dev in run.devices]]


def speedup(run: Run, row: Row) -> Optional[float]:
    """The reference's ms ÷ this step's: a slower way in the same run, or BVLC Caffe's time."""
    ns = run.entry(PROTO.format(op=row["op"], n=BIG_N)).get("ns")
    if row.get("ref_op"):
        ref_ns = run.entry(PROTO.format(op=row["ref_op"], n=BIG_N)).get("ns")
        ref_ms = None if ref_ns is None else ref_ns / 1e6
    else:
        ref_ms = row.get("ref_ms")
    return ref_ms / (ns / 1e6) if ref_ms is not None and ns else None


SERIALISATION: List[Row] = [
    {"step": "ToProto (bulk)", "op": "to_proto", "ref_label": "per-element add_data() loop",
     "ref_op": "to_proto_add_data_loop"},
    {"step": "FromProto (bulk)", "op": "from_proto", "ref_label": "per-element data(i) loop",
     "ref_op": "from_proto_element_loop"},
    {"step": "ToProto + SerializeToString", "op": "to_bytes"},
    {"step": "ParseFromString + FromProto", "op": "from_bytes"},
    {"step": "save: ToProto + WriteProtoToBinaryFile", "op": "save", "ref_label": f"BVLC Caffe {CAFFE_SAVE_MS} ms",
     "ref_ms": CAFFE_SAVE_MS},
    {"step": "load: ReadProtoFromBinaryFile + FromProto", "op": "load", "ref_label": f"BVLC Caffe {CAFFE_LOAD_MS} ms",
     "ref_ms": CAFFE_LOAD_MS},
]

# The figures several columns share.
BLIS_AT_1 = measure("{group}/{blis}/{op}/float/1")
OPENCL_AT_1 = measure("{group}/{opencl}/{op}/float/1")
RAW_BLIS_AT_1 = measure("raw/blis/{raw_op}/float/1")
RAW_CLBLAST_AT_1 = measure("raw/clblast/{raw_op}/float/1")
RATE = {name: measure(template, "bps", n=BIG_N) for name, template in (
    ("blis", "device/{blis}/{op}/{dtype}/{n}"), ("raw blis", "raw/blis/{op}/{dtype}/{n}"),
    ("openblas", "raw/openblas/{op}/{dtype}/{n}"), ("opencl", "device/{opencl}/{op}/{dtype}/{n}"),
    ("clblast", "raw/clblast/{op}/{dtype}/{n}"))}
BLAS_NS = {name: measure(template) for name, template in (
    ("blis", "math/{blis}/{routine}/{dtype}/{n}"), ("raw", "raw/blis/{routine}/{dtype}/{n}"),
    ("host", "math/{host}/{routine}/{dtype}/{n}"))}
SCAL_AT_1 = measure("device/{dev}/scal/{dtype}/1")
# Element-wise at n = 1: ns over the level-1 dispatch (Device::scal) of the same device.
GB = digits(1)
MS = lambda ns: fmt(ns / 1e6, 3)  # noqa: E731


def has_math(run: Run) -> bool:
    return bool(math_keys(run))


CPU_TABLES = [
    Table("Level-1 operations: fraction of the streaming probe (same pattern, size, run)",
          text="Minimum over n = {large} (each cell: min … max). 1.00 = the bandwidth plain OpenMP loops reach "
               "on all cores. Each figure is the best of the repetitions `tools/bench.sh` runs in random order, "
               "for the probe and the operation alike.",
          rows=grid(dev=lambda run: run.devices, dtype=DTYPES),
          columns=[label("device", "dev"), label("dtype", "dtype"),
                   *[Column(op, fraction_range("device", op, PATTERN[op]), show_range) for op in LEVEL1_OPS]]),
    Table("Blob operations: fraction of the streaming probe (float, same sizes and run)",
          rows=grid(dev=lambda run: run.devices, dtype=("float",)),
          columns=[label("device", "dev"),
                   *[Column(f"{op} ({pat})", fraction_range("blob", op, pat), show_range)
                     for op, pat in BLOB_PATTERN]]),
    Table("Dispatch overhead at n = 1 (ns over the raw library call, same run)",
          rows=level1_calls(("axpy", "dot", "scal"),
                            (("scale_data", "scal"), ("asum_data", "asum"), ("Update", "axpy"))),
          columns=[Column("path", filled("{path} on {blis} vs bli_s{raw_op}v")),
                   Column("blobrt", BLIS_AT_1, spec(".1f"), required=True),
                   Column("raw", RAW_BLIS_AT_1, spec(".1f"), required=True),
                   Column("overhead", difference(BLIS_AT_1, RAW_BLIS_AT_1), spec("+.1f"))]),
    # OpenCL at n = 1: the same calls against CLBlast on its own queue (each waits for
    # completion), where PoCL's launch latency is the cost to beat.
    Table("OpenCL at n = 1 (ns, each call complete; raw = CLBlast on its own queue, same run)",
          rows=level1_calls(("axpy", "dot", "asum", "scal"),
                            (("Update", "axpy"), ("asum_data", "asum"), ("scale_data", "scal"))),
          columns=[Column("path", lambda run, row: f"{row['path']} vs clblast::{row['raw_op'].capitalize()}"),
                   Column("blobrt {opencl}", OPENCL_AT_1, spec(".1f"), required=True),
                   Column("raw CLBlast", RAW_CLBLAST_AT_1, spec(".1f"), required=True),
                   Column("blobrt/raw", ratio(OPENCL_AT_1, RAW_CLBLAST_AT_1), spec(".4f"))]),
    Table(f"Against the raw libraries, n = {pow2(BIG_N)} (blobrt GB/s ÷ library GB/s)",
          rows=grid(op=RAW_OPS, dtype=DTYPES),
          columns=[label("op", "op"), label("dtype", "dtype"),
                   Column("blobrt blis", RATE["blis"], lambda x: GB(gbps(x))),
                   Column("raw BLIS (1 thread)", RATE["raw blis"], lambda x: GB(gbps(x))),
                   Column("blobrt/BLIS", ratio(RATE["blis"], RATE["raw blis"]), fmt),
                   Column("OpenBLAS cblas", RATE["openblas"], lambda x: GB(gbps(x))),
                   Column("blobrt/OpenBLAS", ratio(RATE["blis"], RATE["openblas"]), fmt),
                   Column("blobrt opencl", RATE["opencl"], lambda x: GB(gbps(x))),
                   Column("raw CLBlast", RATE["clblast"], lambda x: GB(gbps(x))),
                   Column("opencl/CLBlast", ratio(RATE["opencl"], RATE["clblast"]), fmt)]),
    # Caffe's math beyond level 1 (bench_math.cpp), where the run has it.
    Table("Caffe's math beyond level 1: gemm and gemv against raw BLIS (same buffers, same run)",
          text="Time of `bli_?gemm`/`bli_?gemv` ÷ time through `Device` (1.00 = nothing added; above 1 for "
               "gemv, which the plugin splits across cores and BLIS runs on one thread). "
               "{host} is the built-in kernels against the same BLIS call.",
          when=has_math, rows=blas_rows,
          columns=[label("routine", "routine"), label("dtype", "dtype"),
                   Column("{blis} (ms)", BLAS_NS["blis"], MS),
                   Column("raw BLIS (ms)", BLAS_NS["raw"], MS),
                   Column("{blis} ÷ raw", ratio(BLAS_NS["raw"], BLAS_NS["blis"]), fmt),
                   Column("{host} (ms)", BLAS_NS["host"], MS),
                   Column("host ÷ raw", ratio(BLAS_NS["raw"], BLAS_NS["host"]), fmt),
                   Column("GFLOPS {blis}", counter("math/{blis}/{routine}/{dtype}/{n}", "GFLOPS"), GB)]),
    Table(f"Element-wise operations at n = {pow2(BIG_N)}: fraction of the probe of the same access pattern",
          text="Those marked * are compute-bound (glibc's scalar calls per element), not held to the probe.",
          when=has_math, rows=grid(dev=ew_devices(BIG_N), dtype=DTYPES),
          columns=lambda run: [label("device", "dev"), label("dtype", "dtype"), *ew_fractions(run)]),
    Table("Element-wise at n = 1 against the level-1 dispatch (Device::scal, ns, same run)",
          when=has_math, rows=grid(dev=ew_devices(1), dtype=DTYPES),
          columns=lambda run: [label("device", "dev"), label("dtype", "dtype"), *ew_over_scal(run),
                               Column("scal", SCAL_AT_1, digits(1))]),
    Table("The Caffe anchor: Blob<float> of 16 Mi elements, median of 5 (ms)",
          rows=[{"op": op, "caffe": ms} for op, ms in CAFFE_MS.items()], columns=anchor_columns),
    Table("Serialisation of 16 Mi floats (64 MiB), median of 5",
          rows=SERIALISATION,
          columns=[label("step", "step"),
                   Column("ms", measure(PROTO, n=BIG_N, zero_is_missing=False), lambda ns: f"{ns / 1e6:.1f}",
                          required=True),
                   Column("GB/s", measure(PROTO, "bps", n=BIG_N, zero_is_missing=False), lambda x: f"{gbps(x):.2f}"),
                   Column("reference", lambda run, row: row.get("ref_label")),
                   Column("speed-up", speedup, lambda x: f"{x:.1f}×")]),
    Table("Head round trip and resident memory",
          rows=grid(dev=lambda run: run.devices),
          columns=[label("device", "dev"),
                   Column(f"bytes copied per round trip (n = {pow2(BIG_N)})",
                          counter("blob/{dev}/round_trip/float/{n}", "bytes_copied_per_iter", False, n=BIG_N),
                          digits(0)),
                   Column("round trip at n = 1 (ns)", measure("blob/{dev}/round_trip/float/1", zero_is_missing=False),
                          digits(0)),
                   Column("RSS per element, data only",
                          counter("memory/{dev}/rss/float/{n}", "rss_bytes_per_element_data", False, n=BIG_N), fmt),
                   Column("RSS per element, data + diff",
                          counter("memory/{dev}/rss/float/{n}", "rss_bytes_per_element_data_diff", False, n=BIG_N),
                          fmt)]),
]


def cpu_report(results_json: str, out_md: str, out_png: Optional[str]) -> None:
    """The CPU tables of docs/performance.md (blobrt-bench's run)."""
    context, results = load(results_json)
    run = cpu_run(context, results)
    lines = [f"Generated by `tools/bench_report.py` from one `blobrt-bench` run on {context.get('host_name', '?')}, "
             f"{context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz, "
             f"{context.get('date', '')}.\n"]
    for table in CPU_TABLES:
        lines += render(table, run)

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
        plot(results, list(run.devices), list(run.sizes), out_png)


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

DEFAULT_CUDA = "cuda:0"  # the measured device when the run's context does not name it (blobrt_device)
LARGE_N = 1 << 26      # the bandwidth and element-wise targets hold from here up
COPY_N = 1 << 24       # h2d/d2h are held to raw cudaMemcpy from here up
BLAS_N = 4096          # the n in the names of the gemm/gemv rows
# The targets: a fraction of the reference at least, or ns / × at most.
BANDWIDTH_GOAL = 0.9   # of the ceiling of the access pattern (level 1 and element-wise)
COPY_GOAL = 0.9        # of raw cudaMemcpy
DISPATCH_NS = 2000     # the most a call at n = 1 may add to the raw cuBLAS call
ROUND_TRIP_GOAL = 2.0  # × two raw cudaMemcpy calls
BLAS_GOAL = 0.95       # of cuBLAS's speed
LEVEL1 = ("axpy", "scal", "dot", "asum", "memset", "d2d")
CUBLAS_OPS = ("axpy", "dot", "asum", "scal")
BLOB_RAW = {"Update": "axpy", "asum_data": "asum", "scale_data": "scal", "sumsq_data": "dot"}
# Target key -> the routine blobrt-bench-cuda times through the device and raw (n = BLAS_N in the name).
BLAS = {"gemm": "gemm_4096x4096x4096", "gemv/N": "gemv_N_4096x4096", "gemv/T": "gemv_T_4096x4096"}
GPU_CONTEXT = [("gpu_name", "GPU"), ("gpu_compute_capability", "compute capability"), ("gpu_sm_count", "SMs"),
               ("gpu_memory_bytes", "memory"), ("cuda_driver", "CUDA driver"), ("cuda_runtime", "CUDA runtime"),
               ("cublas", "cuBLAS"), ("nccl", "NCCL"), ("blobrt_version", "blobrt")]
SECTIONS = {  # section -> (title, text): render() templates, {cuda} is the measured device
    "bandwidth": ("Level-1 operations on {cuda}: fraction of the bandwidth ceiling",
                  "Best rate of the `Device` call ÷ the ceiling of its access pattern: the best of the plain CUDA "
                  "kernel and, for copies, `cudaMemcpy` device to device (same size, dtype and run); minimum "
                  f"over n ≥ {pow2(LARGE_N)}."),
    "copy": ("Host↔device copies: fraction of raw cudaMemcpy",
             "Best rate of `Device::h2d`/`d2h` ÷ raw `cudaMemcpy` from/to the same pinned buffers; minimum over "
             f"n ≥ {pow2(COPY_N)}."),
    "dispatch": ("Dispatch overhead at n = 1",
                 "Median ns of the blobrt call (synchronised) minus the raw cuBLAS call + stream "
                 "synchronisation it wraps."),
    "round_trip": ("Head round trip at n = 1",
                   "`Blob` head to {cuda} and back ÷ two raw 4-byte `cudaMemcpy` calls (h2d then d2h, pinned)."),
    "blas": ("gemm and gemv against raw cuBLAS",
             "Raw cuBLAS time ÷ blobrt's time on the same buffers: blobrt's speed as a fraction of cuBLAS. "
             "Issue 27 sets the gemm target; the gemv target is this project's own (the issue names none)."),
    "ew": (f"Element-wise operations at n = {pow2(LARGE_N)}: fraction of the ceiling",
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


def bandwidth_targets(r, dev):
    for op in LEVEL1:
        for dtype in DTYPES:
            figure, n = worst_fraction(r, f"device/{dev}/{op}/{dtype}",
                                       lambda n: ceiling(r, PATTERN[op], dtype, n), LARGE_N)
            yield target("bandwidth", f"bandwidth/{op}/{dtype}", f"Device::{op} {dtype} ÷ {PATTERN[op]} ceiling",
                         figure, BANDWIDTH_GOAL, ">=", "fraction", f"worst at n = {pow2(n)}" if n else "")


def copy_targets(r, dev):
    for op in ("h2d", "d2h"):
        for dtype in DTYPES:
            figure, n = worst_fraction(r, f"device/{dev}/{op}/{dtype}",
                                       lambda n: best(r, f"raw/cudamemcpy/{op}/{dtype}/{n}"), COPY_N)
            yield target("copy", f"copy/{op}/{dtype}", f"Device::{op} {dtype} ÷ cudaMemcpy {op}",
                         figure, COPY_GOAL, ">=", "fraction", f"worst at n = {pow2(n)}" if n else "")


def dispatch_targets(r, dev):
    calls = [(f"dispatch/device/{op}/{dtype}", f"Device::{op} {dtype}", f"device/{dev}/{op}/{dtype}/1", op, dtype)
             for op in CUBLAS_OPS for dtype in DTYPES]
    calls += [(f"dispatch/blob/{op}/float", f"Blob::{op} float", f"blob/{dev}/{op}/float/1", raw_op, "float")
              for op, raw_op in BLOB_RAW.items()]
    for key, label, mine_key, raw_op, dtype in calls:
        mine, raw = median_ns(r, mine_key), median_ns(r, f"raw/cublas/{raw_op}/{dtype}/1")
        figure = mine - raw if mine and raw else None
        yield target("dispatch", key, f"{label} − {cublas_name(raw_op, dtype)}, n = 1", figure, DISPATCH_NS, "<=",
                     "ns", f"{mine:.0f} ns vs {raw:.0f} ns" if figure is not None else "")


def round_trip_target(r, dev):
    mine, raw = median_ns(r, f"blob/{dev}/round_trip/float/1"), median_ns(r, "raw/cudamemcpy/round_trip/float/1")
    figure = mine / raw if mine and raw else None
    return target("round_trip", "round_trip", "Blob<float> round trip ÷ 2 raw cudaMemcpy, n = 1", figure,
                  ROUND_TRIP_GOAL, "<=",
                  "×", f"{mine:.0f} ns vs {raw:.0f} ns" if figure is not None else "")


def blas_targets(r, dev):
    for key, routine in BLAS.items():
        for dtype in DTYPES:
            mine_key, raw_key = f"math/{dev}/{routine}/{dtype}/{BLAS_N}", f"raw/cublas/{routine}/{dtype}/{BLAS_N}"
            mine, raw = median_ns(r, mine_key), median_ns(r, raw_key)
            figure = raw / mine if mine and raw else None
            gflops = [r.get(k, {}).get("counters", {}).get("GFLOPS") for k in (mine_key, raw_key)]
            detail = f"GFLOPS: blobrt {fmt(gflops[0], 1)}, cuBLAS {fmt(gflops[1], 1)}" if key == "gemm" else ""
            yield target("blas", f"{key}/{dtype}", f"{routine} {dtype}: cuBLAS time ÷ blobrt time", figure, BLAS_GOAL, ">=",
                         "fraction", detail)


def ew_targets(r, dev):
    for op, (pattern, _) in ew_ops(r).items():
        for dtype in DTYPES:
            got, ref = best(r, f"math/{dev}/ew_{op}/{dtype}/{LARGE_N}"), ceiling(r, pattern, dtype, LARGE_N)
            yield target("ew", f"ew/{op}/{dtype}", f"ew_{op} {dtype} ÷ {pattern} ceiling, n = {pow2(LARGE_N)}",
                         got / ref if got and ref else None, BANDWIDTH_GOAL, ">=", "fraction")


def large_blob_target(summary_path, dev):
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
    elif any(l.startswith("PASSED") for l in lines) and dev in ran:
        verdict = "met"
    else:
        verdict = "not measured"
        if any(l.startswith("PASSED") for l in lines):
            figure += f" ({dev} is not among the devices it ran on)"
    return {"section": "large_blob", "key": "large_blob", "what": "test_large_blob (2^31 + 8 floats)",
            "figure": figure, "target": "PASSED", "comparison": "==", "unit": "", "verdict": verdict, "detail": ""}


def cuda_targets(r, dev, summary_path, notes):
    """Every target of issue 27 for device DEV, in the order of the report, each with its
    "why" when MISSED."""
    targets = [*bandwidth_targets(r, dev), *copy_targets(r, dev), *dispatch_targets(r, dev), round_trip_target(r, dev),
               *blas_targets(r, dev), *ew_targets(r, dev), large_blob_target(summary_path, dev)]
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


# The columns of the target tables: one target per row.
TARGET_COLUMNS = [
    Column("key", lambda run, t: f"`{t['key']}`"),
    Column("what", lambda run, t: t["what"]),
    Column("figure", lambda run, t: shown_figure(t) + (f" ({t['detail']})" if t["detail"] else "")),
    Column("target", lambda run, t: shown_target(t)),
    Column("verdict", lambda run, t: f"**{t['verdict']}**" if t["verdict"] == "MISSED" else t["verdict"]),
    Column("why", lambda run, t: t["why"] or ""),
]


def target_tables(targets):
    """One table per section of SECTIONS, its targets in their order."""
    return [Table(title, text=explanation, columns=TARGET_COLUMNS,
                  rows=[t for t in targets if t["section"] == section])
            for section, (title, explanation) in SECTIONS.items()]


# Informational: what an element-wise call at n = 1 costs beyond Device::scal's (the
# columns of the CPU table of the same name, on the measured device).
EW_DISPATCH = Table("Element-wise at n = 1 against the level-1 dispatch (ns over Device::scal, informational)",
                    rows=grid(dev=lambda run: run.devices, dtype=DTYPES),
                    columns=lambda run: [label("dtype", "dtype"), *ew_over_scal(run),
                                         Column("scal (ns)", SCAL_AT_1, digits(0))])


def level1_series(op, dtype, dev):
    """(label, benchmark prefix) of op's curves: its ceiling first, then blobrt, then the raw library."""
    if op in ("h2d", "d2h"):
        return [(f"blobrt {dev} {op}", f"device/{dev}/{op}/{dtype}"),
                (f"raw cudaMemcpy {op}", f"raw/cudamemcpy/{op}/{dtype}")]
    pattern = PATTERN[op]
    series = [(f"probe kernel {pattern}", f"probe/cuda_kernel/{pattern}/{dtype}")]
    if pattern == "copy":
        series.append(("cudaMemcpy d2d", f"probe/cuda_memcpy/copy/{dtype}"))
    series.append((f"blobrt {dev} {op}", f"device/{dev}/{op}/{dtype}"))
    if op in CUBLAS_OPS:
        series.append((f"raw cuBLAS {op}", f"raw/cublas/{op}/{dtype}"))
    return series


def curve_rows(dtype):
    """The series of the level-1 ops' curves, each row a (label, prefix) of level1_series."""
    return lambda run: [{"series": label, "prefix": prefix} for op in LEVEL1 + ("h2d", "d2h")
                        for label, prefix in level1_series(op, dtype, run.devices[0])]


def curve_columns(dtype):
    """The series' label, then its GB/s at every n any of the series measured."""
    def columns(run):
        rows = curve_rows(dtype)(run)
        sizes = sorted({n for row in rows for n in sizes_of(run.results, row["prefix"])})
        return [label("series", "series"),
                *[Column(pow2(n), lambda run, row, n=n: best(run.results, f"{row['prefix']}/{n}") or None,
                         lambda x: fmt(gbps(x), 1)) for n in sizes]]
    return columns


# GB/s at every n for the device's level-1 ops next to their ceilings: the whole curve.
CURVES = [Table(f"GB/s by n, {dtype} (best repetition)", rows=curve_rows(dtype), columns=curve_columns(dtype))
          for dtype in DTYPES]


def cuda_md(run, targets, counts):
    context = run.context
    lines = [f"Generated by `tools/bench_report.py --cuda` from one `blobrt-bench-cuda` run on "
             f"{context.get('host_name', '?')}, {context.get('date', '?')}.\n",
             f"Issue 27's targets: {counts['met']} met, {counts['missed']} MISSED, "
             f"{counts['not_measured']} not measured.\n",
             "| | |", "|---|---|"]
    shown = gpu_context(context)
    lines += [f"| {name} | {shown[key]} |" for key, name in GPU_CONTEXT] + [""]
    for table in [*target_tables(targets), EW_DISPATCH, *CURVES]:
        lines += render(table, run)
    return "\n".join(lines)


def cuda_plot(r, dev, out_png):
    """GB/s vs n (float) for the device's level-1 operations, the probe kernel as the ceiling."""
    # The same series in the same colour on every panel.
    styles = {"probe/cuda_kernel": PROBE_STYLE, "probe/cuda_memcpy": "lw 2 dt 3 lc rgb 'gray40'",
              f"device/{dev}": "lw 2 lc rgb '#009e73'", "raw/cublas": "lw 2 lc rgb '#0072b2'"}
    panels = []
    for op in ("axpy", "dot", "asum", "scal", "memset", "d2d"):
        series = []
        for name, prefix in level1_series(op, "float", dev):
            points = [(n, gbps(best(r, f"{prefix}/{n}"))) for n in sizes_of(r, prefix) if best(r, f"{prefix}/{n}")]
            series.append((name, styles["/".join(prefix.split("/")[:2])], points))
        panels.append((op, series))
    gnuplot(out_png, f"blobrt {dev} level-1 throughput, float (GB/s vs n)", "2,3", "2100,1000", panels)


def cuda_report(args):
    """Writes OUT.md, OUT.json and (with gnuplot) OUT.png; returns the exit status."""
    out_json = os.path.splitext(args.out_md)[0] + ".json"
    if os.path.abspath(out_json) == os.path.abspath(args.results):
        sys.exit(f"bench_report.py: {out_json} would overwrite the benchmark results; name OUT.md differently")
    context, r = load(args.results)
    if "gpu_name" not in context:  # a filtered run may lack any group of rows, never its context
        sys.exit(f"bench_report.py: {args.results} is not a blobrt-bench-cuda run (no GPU in its context); "
                 "--cuda reports on those only")
    dev = context.get("blobrt_device", DEFAULT_CUDA)  # blobrt-bench-cuda measures the first CUDA device
    notes = {}
    if args.notes:
        notes = read_json(args.notes)
        if not isinstance(notes, dict):
            sys.exit(f"bench_report.py: {args.notes} must hold one JSON object (target key -> text)")
    targets = cuda_targets(r, dev, args.summary, notes)
    counts = {"met": 0, "missed": 0, "not_measured": 0}
    for t in targets:
        counts[t["verdict"].lower().replace(" ", "_")] += 1
    with open(args.out_md, "w") as f:
        f.write(cuda_md(Run(context, r, {"cuda": dev}, (dev,)), targets, counts) + "\n")
    with open(out_json, "w") as f:
        json.dump({"source": os.path.basename(args.results),
                   "context": {"host_name": context.get("host_name", "?"), "date": context.get("date", "?"),
                               **{k: str(context.get(k, "?")) for k, _ in GPU_CONTEXT}},
                   "targets": [{k: t[k] for k in JSON_FIELDS} for t in targets],
                   "summary": counts}, f, indent=2, ensure_ascii=False)
        f.write("\n")
    if args.out_png:
        if shutil.which("gnuplot"):
            cuda_plot(r, dev, args.out_png)
        else:
            print(f"bench_report.py: gnuplot is not on PATH, {args.out_png} not written", file=sys.stderr)
    return 1 if args.strict and counts["missed"] else 0


def main():
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
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
