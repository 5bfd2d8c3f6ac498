#!/usr/bin/env bash
# The full benchmark run and its report (docs/performance.md explains the figures).
#   tools/bench.sh            # build (if needed), run every benchmark, write the report
# Output: docs/performance-results.json (Google Benchmark JSON, also in $BUILD_DIR/bench), docs/performance-results.md
# (the ratio tables) and docs/performance.png (the plot). Takes 10-20 minutes on 2 cores;
# run it on an idle machine. BENCH_ARGS adds Google Benchmark flags (e.g. a filter).
set -euo pipefail
source "$(dirname "$0")/bench-env.sh"
command -v gnuplot >/dev/null || { apt-get install -y -qq gnuplot-nox >/dev/null; }
mkdir -p "$build/bench"
# The figures the ratio tables divide (probe, Device and Blob operations at n >= 2^22) run
# five times in random order; the report divides their best repetitions, so that a probe and the
# operation it bounds are not measured minutes apart under different load; the rest once.
large='^(probe|device|blob)/[^/]+/[^/]+/[^/]+/(4194304|16777216|67108864)/'
run_bench() {
  BLOBRT_PLUGIN_PATH="$plugin_path" BLOBRT_PLUGIN_SYSTEM_PATH="" \
    "$build/benchmarks/blobrt-bench" --benchmark_min_time=0.1 --benchmark_out_format=json "$@" ${BENCH_ARGS:-}
}
run_bench --benchmark_filter="-$large" --benchmark_out="$build/bench/rest.json"
run_bench --benchmark_filter="$large" --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true --benchmark_out="$build/bench/large.json"
python3 - "$build/bench" <<'PY'
import json, sys
d = sys.argv[1]
rest, large = (json.load(open(f"{d}/{name}.json")) for name in ("rest", "large"))
rest["benchmarks"] += large["benchmarks"]
json.dump(rest, open(f"{d}/results.json", "w"), indent=1)
PY
cp "$build/bench/results.json" docs/performance-results.json  # the run behind the report, kept with it
python3 tools/bench_report.py docs/performance-results.json docs/performance-results.md docs/performance.png
echo "report: docs/performance-results.md, docs/performance.png"
