#!/usr/bin/env python3
"""The thread team's table for docs/performance.md ("Shared cores"), from a blobrt-bench
JSON run of the team/ benchmarks (bench_team.cpp), best repetition of each:

  blobrt-bench --benchmark_filter='^team/' --benchmark_repetitions=5 \\
      --benchmark_report_aggregates_only=true --benchmark_out=team.json
  benchmarks/team_report.py team.json [OLD.json]

loaded/one is the target (<= 1.5: with every other core busy, no slower than one
thread). OLD.json, a full run from before the team (docs/performance-results.json of
that time), adds the host device's figure then: team/old compares the quiet figures.
"""
import argparse
import json
import sys

TO_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
OLD_NAME = {"copy": "d2d"}  # the host device's name for a device-to-device copy


def best_times(path):
    """base name -> the fastest repetition in ns (the "min" aggregate, else the plain run)."""
    with open(path) as f:
        data = json.load(f)
    best = {}
    for b in data["benchmarks"]:
        base = b.get("run_name", b["name"]).replace("/real_time", "")
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "min":
            continue
        ns = b["real_time"] * TO_NS[b.get("time_unit", "ns")]
        best[base] = min(ns, best.get(base, ns))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Exit codes: 0 loaded/one within 1.5; 1 above it; 2 usage error.")
    parser.add_argument("results", help="blobrt-bench JSON with the team/ benchmarks")
    parser.add_argument("old", nargs="?", help="a full run from before the team, for the old columns")
    args = parser.parse_args()
    new = best_times(args.results)
    old = best_times(args.old) if args.old else {}
    rows = sorted({tuple(k.split("/")[2:]) for k in new if k.startswith("team/")},
                  key=lambda r: (int(r[2]), r[0]))
    print("| op | n | one thread (us) | team (us) | loaded team (us) | loaded one (us) | loaded / one |"
          + (" old (us) | team / old |" if old else ""))
    print("|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if old else ""))
    worst = 0.0
    for op, dtype, n in rows:
        get = lambda mode: new.get(f"team/{mode}/{op}/{dtype}/{n}")
        one, team, loaded, loaded_one = get("one"), get("team"), get("loaded"), get("loaded_one")
        if not (one and team and loaded and loaded_one):
            continue
        worst = max(worst, loaded / one)
        line = (f"| {op} | 2^{int(n).bit_length() - 1} | {one / 1e3:.2f} | {team / 1e3:.2f} | {loaded / 1e3:.2f} | "
                f"{loaded_one / 1e3:.2f} | {loaded / one:.2f} |")
        if old:
            before = old.get(f"device/host:0/{OLD_NAME.get(op, op)}/{dtype}/{n}")
            line += f" {before / 1e3:.2f} | {team / before:.2f} |" if before else " | |"
        print(line)
    print(f"\nworst loaded / one: {worst:.2f} (target <= 1.5)")
    return 0 if worst <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
