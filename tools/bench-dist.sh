#!/usr/bin/env bash
# libblobrt-dist's benchmark (benchmarks/bench_dist.cpp) with 2 and 4 ranks on this
# machine, and its section of docs/performance-results.md.
#   tools/bench-dist.sh                  # BLOBRT_BACKEND (default blis) picks the device
# Open MPI's defaults otherwise (shared memory with CMA single copy where the kernel allows).
set -euo pipefail
source "$(dirname "$0")/bench-env.sh"
backend="${BLOBRT_BACKEND:-blis}"
out="$build/bench/dist"
mkdir -p "$out"
for np in 2 4; do
  mpirun --allow-run-as-root --oversubscribe --timeout 900 -np "$np" \
    -x BLOBRT_BACKEND="$backend" -x BLOBRT_PLUGIN_PATH="$plugin_path" -x BLOBRT_PLUGIN_SYSTEM_PATH= \
    "$build/benchmarks/blobrt-bench-dist" --benchmark_color=false | tee "$out/ranks$np.txt"
done

results=docs/performance-results.md
marker="<!-- libblobrt-dist results: tools/bench-dist.sh -->"
[ -f "$results" ] || : > "$results"
python3 - "$results" "$marker" "$out" "$backend" <<'PY'
import re, sys, datetime
results, marker, out, backend = sys.argv[1:5]
text = open(results).read()
if marker in text:
    text = text[:text.index(marker)].rstrip() + "\n"
lines = ["", marker, "", "## libblobrt-dist: allreduce of a ResNet-50 parameter list (libblobrt-dist)", "",
         f"`tools/bench-dist.sh` on {datetime.date.today()}, backend {backend}, Open MPI on loopback (shared memory). "
         "161 float blobs, 25,557,032 elements (97.5 MiB); each figure is the mean of 3 repetitions of 10 "
         "iterations, an iteration timed as the slowest rank's. raw/blobrt above 1 means blobrt is faster than one "
         "MPI_Allreduce of a single buffer of the same size; naive/blobrt is the speed-up over one MPI_Allreduce per blob.", "",
         "| ranks | raw one buffer (ms) | naive per blob (ms) | bucket | blobrt (ms) | raw/blobrt | naive/blobrt |",
         "|---|---|---|---|---|---|---|"]
for np in (2, 4):
    s = open(f"{out}/ranks{np}.txt").read()
    head = re.search(r"raw one buffer ([\d.]+) ms, naive per blob ([\d.]+) ms", s)
    for m in re.finditer(r"summary: bucket (\d+) B: ([\d.]+) ms; raw/blobrt ([\d.]+) .*naive/blobrt ([\d.]+)x", s):
        mib = int(m.group(1)) / (1 << 20)
        lines.append(f"| {np} | {head.group(1)} | {head.group(2)} | {mib:g} MiB | {m.group(2)} | {m.group(3)} | {m.group(4)} |")
open(results, "w").write(text + "\n".join(lines) + "\n")
PY
echo "report: $results (section '$marker')"
