#!/usr/bin/env python3
"""tools/bench_report.py (the CPU mode, as tools/bench.sh calls it) on a fabricated
blobrt-bench run whose answers the test knows: every table of CPU_TABLES on the page, ratios
computed from the fabricated figures (the wrong way round, a median for a best rate or the
wrong reference fails), device ids taken from the run (blis:1 and opencl:2 when the run has
those), a run missing rows (cells "–", a table with none of its rows says so), the section
tools/bench-dist.sh wrote kept, and the table descriptions well-formed.

usage: bench_report_cpu_test.py tools/bench_report.py
"""
import importlib.util
import json
import os
import shutil
import string
import subprocess
import sys
import tempfile
from typing import Any, Dict, List

TOOL = sys.argv[1]
SIZES = [1, 1 << 10, 1 << 22, 1 << 24, 1 << 26]
LARGE = [n for n in SIZES if n >= 1 << 22]
N24 = 1 << 24
DTYPES = ("float", "double")
DEVICES = ("host:0", "blis:0", "opencl:0")
SPREAD = 0.8  # the median repetition is this much slower than the fastest: tables divide best rates
PROBE = {"fill": 20e9, "copy": 15e9, "scale": 14e9, "triad": 16e9, "sum": 25e9, "dot": 24e9}
PATTERN = {"memset": "fill", "d2d": "copy", "h2d": "copy", "d2h": "copy", "axpy": "triad", "dot": "dot",
           "asum": "sum", "scal": "scale"}
BLOB = {"Update": "triad", "asum_data": "sum", "sumsq_data": "sum", "scale_data": "scale"}
EW = {"set": "fill", "scale": "copy", "axpby": "triad", "exp": "copy"}  # a few; the rest stay "–"
RAW_NS = 30.0          # raw BLIS / CLBlast call at n = 1
BLIS_NS = {"device": 40.0, "blob": 55.0}
CLBLAST_NS = 20000.0
ANCHOR_SPEEDUP = 2.0   # blobrt's anchor runs twice as fast as BVLC Caffe's time
failures: List[str] = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


def add(benchmarks, base, best_bps=0.0, ns=1000.0, **counters):
    """Median and min aggregates as tools/bench.sh's repetitions write them; `ns` is the median."""
    for agg, time, bps in (("median", ns, best_bps * SPREAD), ("min", ns * SPREAD, best_bps)):
        entry = {"name": f"{base}/repeats:5/real_time_{agg}", "run_type": "aggregate", "aggregate_name": agg,
                 "real_time": time, "time_unit": "ns", **counters}
        if best_bps:
            entry["bytes_per_second"] = bps
        benchmarks.append(entry)


def fraction(dev, op, dtype, n):
    """Device::op's best rate as a fraction of its probe: 0.9, but for the cells checked."""
    if n < 1 << 22:
        return 0.1  # below the sizes the fraction table spans: must not show
    if (dev, op, dtype, n) == ("host:0", "axpy", "float", 1 << 26):
        return 0.6
    if (dev, op, dtype, n) == ("blis:0", "axpy", "double", 1 << 22):
        return 1.2
    return 0.9


def fabricate(caffe_ms):
    b = []
    for dtype in DTYPES:
        for n in SIZES:
            for pattern, rate in PROBE.items():
                add(b, f"probe/stream/{pattern}/{dtype}/{n}", rate)
            for dev in DEVICES:
                for op, pattern in PATTERN.items():
                    ns = (BLIS_NS["device"] if dev == "blis:0" else 50.0) if n == 1 else 1000.0
                    add(b, f"device/{dev}/{op}/{dtype}/{n}", fraction(dev, op, dtype, n) * PROBE[pattern], ns)
            for lib, share in (("blis", 0.8), ("openblas", 0.6), ("clblast", 0.5)):
                for op in ("axpy", "dot", "asum", "scal"):
                    ns = (RAW_NS if lib == "blis" else CLBLAST_NS) if n == 1 else 1000.0
                    add(b, f"raw/{lib}/{op}/{dtype}/{n}", share * PROBE[PATTERN[op]], ns)
        for dev in ("host:0", "blis:0"):
            for op, pattern in EW.items():
                got = 0.25 if (dev, op, dtype) == ("host:0", "exp", "double") else 0.7
                label = pattern + (" heavy" if op == "exp" else "")  # as blobrt-bench labels the rows
                add(b, f"math/{dev}/ew_{op}/{dtype}/{N24}", got * PROBE[pattern], label=label)
                add(b, f"math/{dev}/ew_{op}/{dtype}/1", ns=50.0 + 15 if dev == "host:0" else BLIS_NS["device"] + 15,
                    label=label)
        # gemm: blobrt on blis 2 ms, raw BLIS 3 ms, the host kernels 6 ms
        for dev, ms in (("blis:0", 2.0), ("host:0", 6.0)):
            add(b, f"math/{dev}/gemm_64x800x500/{dtype}/64", ns=ms * 1e6, GFLOPS=51.2 / ms)
        add(b, f"raw/blis/gemm_64x800x500/{dtype}/64", ns=3e6, GFLOPS=51.2 / 3)
        add(b, f"math/opencl:0/gemm/{dtype}/64x800x500", ns=1e6)   # held to CLBlast, not BLIS
        add(b, f"math/clblast/gemm/{dtype}/64x800x500", ns=1e6)
    for n in SIZES:
        for dev in DEVICES:
            for op, pattern in BLOB.items():
                ns = (BLIS_NS["blob"] if dev == "blis:0" else 60.0) if n == 1 else 1000.0
                add(b, f"blob/{dev}/{op}/float/{n}", 0.8 * PROBE[pattern] if n >= 1 << 22 else 1e9, ns)
    for dev in DEVICES:
        for op, ms in caffe_ms.items():
            add(b, f"anchor/{dev}/{op}/float/{N24}", ns=ms / ANCHOR_SPEEDUP * 1e6)
        copied = 2 * 4 * N24 if dev == "opencl:0" else 0  # host memory: nothing to copy
        add(b, f"blob/{dev}/round_trip/float/{N24}", ns=1e6, bytes_copied_per_iter=copied)
        add(b, f"blob/{dev}/round_trip/float/1", ns=120.0)
        add(b, f"memory/{dev}/rss/float/{N24}", ns=1.0, rss_bytes_per_element_data=4.0,
            rss_bytes_per_element_data_diff=8.0)
    for op, ms in (("to_proto", 50), ("to_proto_add_data_loop", 200), ("from_proto", 40),
                   ("from_proto_element_loop", 120), ("to_bytes", 70), ("from_bytes", 80), ("save", 89), ("load", 81)):
        add(b, f"proto/host/{op}/float/{N24}", 64 * 2**20 / (ms / 1e3) / SPREAD, ns=ms * 1e6)
    return {"context": {"host_name": "cpu-box", "num_cpus": 2, "mhz_per_cpu": 2445, "date": "2026-11-30"},
            "benchmarks": b}


def tables(md: str) -> Dict[str, List[List[str]]]:
    """Title -> rows of cells, the header first."""
    out: Dict[str, List[List[str]]] = {}
    title = ""
    for line in md.splitlines():
        if line.startswith("### "):
            title = line[4:]
            out[title] = []
        elif title and line.startswith("|") and not line.startswith("|---"):
            out[title].append([c.strip() for c in line.strip("|").split("|")])
    return out


def text_under(md: str, prefix: str) -> List[str]:
    """The lines between the title that starts with PREFIX and the next title."""
    sections = [s.split("\n")[1:] for s in md.split("\n### ") if s.startswith(prefix)]
    return [line for line in sections[0] if line] if sections else []


def expect(got, want, what):
    check(got == want, f"{what}: {got!r}, expected {want!r}")


def cell(t, first, column, second=None):
    """The cell of the row whose first (and second) cells are given, under the header `column`."""
    if not t:
        return None
    header = t[0]
    for row in t[1:]:
        if row[0] == first and (second is None or row[1] == second) and column in header:
            return row[header.index(column)]
    return None


def find(md_tables: Dict[str, List[List[str]]], prefix: str) -> List[List[str]]:
    """The rows of the table whose title starts with PREFIX ([] when there is none)."""
    return next((rows for title, rows in md_tables.items() if title.startswith(prefix)), [])


def report(tmp, data, name, keep=None):
    path, md = os.path.join(tmp, f"{name}.json"), os.path.join(tmp, f"{name}.md")
    with open(path, "w") as f:
        json.dump(data, f)
    if keep is not None:
        with open(md, "w") as f:
            f.write(keep)
    p = subprocess.run([sys.executable, TOOL, path, md], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"{name}: exit {p.returncode}: {p.stderr}")
    with open(md) as f:
        return f.read()


def check_full(text, tool):
    t = tables(text)
    for table in tool.CPU_TABLES:
        title = table.title.format(blis="blis:0", opencl="opencl:0", host="host:0", large="")
        check(text.count(f"### {title}\n") == 1, f"table {title!r} is not on the page once")
    level1 = find(t, "Level-1 operations")
    # best rate ÷ probe over the large n only (0.1 below them, 0.9 × SPREAD if medians were divided)
    expect(cell(level1, "host:0", "axpy", "float"), "0.60 … 0.90", "level 1, host axpy float")
    expect(cell(level1, "blis:0", "axpy", "double"), "0.90 … 1.20", "level 1, blis axpy double")
    check([r[0] for r in level1[1:]][::2] == ["host:0", "blis:0", "opencl:0"], "level 1: host first, then sorted")
    check(cell(find(t, "Blob operations"), "opencl:0", "Update (triad)") == "0.80 … 0.80", "Blob Update fraction")
    dispatch = find(t, "Dispatch overhead")
    overhead = f"{BLIS_NS['device'] - RAW_NS:+.1f}"  # blobrt minus raw, not raw minus blobrt
    check(cell(dispatch, "Device::axpy on blis:0 vs bli_saxpyv", "overhead") == overhead, f"dispatch: {dispatch}")
    expect(cell(dispatch, "Blob::Update (1 element) on blis:0 vs bli_saxpyv", "overhead"),
           f"{BLIS_NS['blob'] - RAW_NS:+.1f}", "Blob::Update dispatch overhead")
    check(cell(find(t, "OpenCL at n = 1"), "Device::dot vs clblast::Dot", "blobrt/raw") == f"{50.0 / CLBLAST_NS:.4f}",
          "OpenCL blobrt/raw")
    raw = find(t, "Against the raw libraries")
    # the median rates: blobrt 0.9 of the probe against BLIS 0.8, OpenBLAS 0.6 (blobrt ÷ library)
    expect(cell(raw, "dot", "blobrt/BLIS", "float"), f"{0.9 / 0.8:.2f}", "blobrt/BLIS")
    check(cell(raw, "dot", "blobrt/OpenBLAS", "double") == f"{0.9 / 0.6:.2f}", "blobrt/OpenBLAS")
    expect(cell(raw, "asum", "blobrt blis", "float"), f"{0.9 * SPREAD * PROBE['sum'] / 1e9:.1f}",
           "blobrt blis GB/s (the median rate)")
    gemm = find(t, "Caffe's math beyond level 1")
    expect(cell(gemm, "gemm_64x800x500", "blis:0 ÷ raw", "float"), "1.50", "gemm blis ÷ raw (raw time ÷ blobrt's)")
    check(cell(gemm, "gemm_64x800x500", "host ÷ raw", "double") == "0.50", "gemm host ÷ raw")
    check(cell(gemm, "gemm_64x800x500", "GFLOPS blis:0", "float") == f"{51.2 / 2:.1f}", "gemm GFLOPS")
    check(len(gemm) == 3, f"gemm table: {len(gemm) - 1} rows, expected 2 (opencl's gemm rows are not BLIS's)")
    ew = find(t, "Element-wise operations at n = 2^24")
    check(cell(ew, "host:0", "exp*", "double") == "0.25" and cell(ew, "blis:0", "axpby", "float") == "0.70",
          f"element-wise fractions: {ew}")
    check(ew and ew[0][2:] == ["set", "scale", "axpby", "exp*"],
          f"the element-wise columns are not the run's labelled rows, in their order: {ew[:1]}")
    check({r[0] for r in ew[1:]} == {"host:0", "blis:0"}, f"element-wise devices: {[r[0] for r in ew[1:]]}")
    ew1 = find(t, "Element-wise at n = 1")
    check(cell(ew1, "blis:0", "exp", "float") == "+15", f"element-wise over scal: {ew1}")
    anchor = find(t, "The Caffe anchor")
    ms = tool.CAFFE_MS["Update"] / ANCHOR_SPEEDUP
    check(cell(anchor, "Update", "blobrt blis:0") == f"{ms:.2f} ({ANCHOR_SPEEDUP:.1f}×)", f"anchor: {anchor}")
    ser = find(t, "Serialisation")
    check(cell(ser, "ToProto (bulk)", "speed-up") == "4.0×", f"serialisation speed-up (loop ÷ bulk): {ser}")
    check(cell(ser, "save: ToProto + WriteProtoToBinaryFile", "speed-up") == f"{tool.CAFFE_SAVE_MS / 89:.1f}×",
          "save speed-up against BVLC Caffe")
    check(cell(ser, "ToProto + SerializeToString", "speed-up") == "–", "a step without reference")
    rt = find(t, "Head round trip")
    check(cell(rt, "host:0", "bytes copied per round trip (n = 2^24)") == "0", "zero bytes copied is shown as 0")
    check(cell(rt, "opencl:0", "bytes copied per round trip (n = 2^24)") == str(8 * N24), "opencl bytes copied")


def rename(data, old, new):
    return json.loads(json.dumps(data).replace(f"/{old}/", f"/{new}/"))


def check_descriptions(tool, data):
    """Every description: a title, columns with headers, templates naming only the run's names;
    each renders on a run without any row (a table, a "not measured" line, or nothing)."""
    context, results = {}, {}
    run = tool.cpu_run(context, results)
    full = tool.cpu_run(data["context"], tool_results(tool, data))
    titles = [t.title for t in tool.CPU_TABLES]
    check(len(set(titles)) == len(titles) == 11, f"{len(titles)} tables, titles unique: {len(set(titles))}")
    for table in tool.CPU_TABLES:
        columns: Any = table.columns(full) if callable(table.columns) else table.columns
        check(table.title and columns and all(c.header for c in columns), f"{table.title!r}: empty title or header")
        for template in [table.title, table.text, *(c.header for c in columns)]:
            fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
            check(fields <= set(full.names), f"{table.title!r}: {fields - set(full.names)} is no name of the run")
        try:
            lines = tool.render(table, run)
        except Exception as e:  # noqa: BLE001 - any exception is the failure reported
            check(False, f"{table.title!r} on an empty run: {type(e).__name__}: {e}")
            continue
        check(not lines or tool.NOT_MEASURED in lines or any(l.startswith("|") for l in lines),
              f"{table.title!r} on an empty run: {lines}")


def tool_results(tool, data):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(data, f)
    try:
        return tool.load(f.name)[1]
    finally:
        os.unlink(f.name)


def main():
    spec = importlib.util.spec_from_file_location("bench_report", TOOL)
    assert spec is not None and spec.loader is not None, TOOL
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    data = fabricate(tool.CAFFE_MS)
    tmp = tempfile.mkdtemp(prefix="bench_report_cpu_")
    try:
        text = report(tmp, data, "full")
        check(text.startswith("Generated by `tools/bench_report.py` from one `blobrt-bench` run on cpu-box"),
              "the context line")
        check_full(text, tool)

        # The device ids come from the run: other indices, the same figures under their names.
        t = tables(report(tmp, rename(rename(data, "blis:0", "blis:1"), "opencl:0", "opencl:2"), "renamed"))
        check(cell(find(t, "Dispatch overhead"), "Device::axpy on blis:1 vs bli_saxpyv", "overhead")
              == f"{BLIS_NS['device'] - RAW_NS:+.1f}", "dispatch on blis:1")
        check(cell(find(t, "OpenCL at n = 1"), "Device::dot vs clblast::Dot", "blobrt opencl:2") == "50.0",
              "OpenCL column on opencl:2")
        check(cell(find(t, "Caffe's math beyond level 1"), "gemm_64x800x500", "blis:1 ÷ raw", "float") == "1.50",
              "gemm on blis:1")

        # Rows missing: raw BLIS at n = 1 and all of OpenBLAS and the serialisation rows.
        holes = dict(data, benchmarks=[b for b in data["benchmarks"] if not b["name"].startswith(
            ("raw/openblas/", "proto/")) and not (b["name"].startswith("raw/blis/") and "/float/1/" in b["name"])])
        text = report(tmp, holes, "holes")
        t = tables(text)
        for title in ("Dispatch overhead", "Serialisation"):
            check(text_under(text, title) == [tool.NOT_MEASURED], f"{title}: no rows: {text_under(text, title)}")
        raw = find(t, "Against the raw libraries")
        check(cell(raw, "dot", "blobrt/OpenBLAS", "float") == "–"
              and cell(raw, "dot", "blobrt/BLIS", "float") not in ("–", None),
              "raw libraries without OpenBLAS: its cells '–', the rest kept")
        check("Traceback" not in text, "a traceback in the page")

        # tools/bench-dist.sh's section is kept below the regenerated tables.
        kept = f"old tables\n{tool.KEEP_MARKER}\n\n## libblobrt-dist\n\nkept text\n"
        text = report(tmp, data, "kept", keep=kept)
        check(text.endswith("\n" + kept[kept.index(tool.KEEP_MARKER):]) and "old tables" not in text,
              "the bench-dist.sh section is not kept as it was")

        args = [os.path.join(tmp, "full.json"), os.path.join(tmp, "x.md"), "--strict"]
        p = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and "go with --cuda" in p.stderr, f"--strict without --cuda: {p.returncode} {p.stderr}")
        check_descriptions(tool, data)
    finally:
        shutil.rmtree(tmp)
    print(f"bench_report_cpu: {len(failures)} failure(s)" if failures else "bench_report_cpu: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
