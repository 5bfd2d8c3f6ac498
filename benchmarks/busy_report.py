#!/usr/bin/env python3
"""blobrt-bench-busy's table (benchmarks/bench_busy.cpp): per workload, the time with
blobrt's default threads and with one thread, idle and with one core busy, and busy
default / busy one, the ratio issue 48 holds to 1.5 at most.

usage: busy_report.py RESULTS.json [--stat median|min]
  RESULTS.json: Google Benchmark's JSON of a blobrt-bench-busy run, with or without
  repetitions (the statistic named by --stat over them; median by default).
Exit 0: every busy default / one at most 1.5; 1: one above; 2: usage or an unreadable file.
"""
import json
import re
import sys
from collections import defaultdict

LIMIT = 1.5


def main(argv):
    args = argv[1:]
    stat = "median"
    if len(args) == 3 and args[1] == "--stat" and args[2] in ("median", "min"):
        stat = args[2]
        args = args[:1]
    if len(args) != 1:
        sys.stderr.write(__doc__)
        return 2
    try:
        runs = json.load(open(args[0]))["benchmarks"]
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write("busy_report.py: cannot read the results %s: %s\n" % (args[0], e))
        return 2
    times = defaultdict(list)  # (workload, load, threads) -> [(seconds, gflops)]
    aggregated = {}
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for r in runs:
        m = re.match(r"^busy/([^/]+)/(idle|busy)/(default|one)(/|$)", r.get("run_name", r["name"]))
        if not m or r.get("error_occurred"):
            continue
        key = m.group(1, 2, 3)
        value = (r["real_time"] * unit[r.get("time_unit", "ns")], r.get("gflops"))
        if r.get("run_type") == "aggregate":
            if r.get("aggregate_name") == stat:
                aggregated[key] = value
        else:
            times[key].append(value)
    for key, values in times.items():
        if key not in aggregated:
            values.sort()
            aggregated[key] = values[0] if stat == "min" else values[len(values) // 2]
    workloads = sorted({k[0] for k in aggregated}, key=lambda w: (w.startswith("lenet"), w))
    print("| workload | idle default | idle one | busy default | busy one | busy default / one | idle GFLOP/s default, one |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    worst = None
    for w in workloads:
        cell = {(load, th): aggregated.get((w, load, th)) for load in ("idle", "busy") for th in ("default", "one")}
        scale, unit_name = (1e3, "ms") if w.startswith("lenet") else (1e6, "us")

        def fmt(v):
            return "%.3g %s" % (v[0] * scale, unit_name) if v else "–"

        bd, bo = cell[("busy", "default")], cell[("busy", "one")]
        ratio = bd[0] / bo[0] if bd and bo else None
        if ratio is not None:
            worst = ratio if worst is None else max(worst, ratio)
        flops = [cell[("idle", th)][1] if cell[("idle", th)] and cell[("idle", th)][1] else None
                 for th in ("default", "one")]
        flops_text = ", ".join("%.1f" % f if f else "–" for f in flops) if any(flops) else ""
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            w, fmt(cell[("idle", "default")]), fmt(cell[("idle", "one")]), fmt(bd), fmt(bo),
            "%.2f" % ratio if ratio is not None else "–", flops_text))
    if worst is None:
        print("\nno busy default/one pair in the results")
        return 2
    print("\nworst busy default / one: %.2f (target at most %.1f; %s of the repetitions)" % (worst, LIMIT, stat))
    return 0 if worst <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
