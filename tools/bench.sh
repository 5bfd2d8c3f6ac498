#!/usr/bin/env bash
# The full benchmark run and its report (docs/performance.md explains the figures).
#   tools/bench.sh                 # build (if needed), run every benchmark, report in $BUILD_DIR/bench
#   tools/bench.sh --update-docs   # the same, then the report replaces the one in docs/
# Output: $BUILD_DIR/bench/results.json (Google Benchmark JSON), results.md (the ratio
# tables) and results.png (the plot); with --update-docs also docs/performance-results.json,
# docs/performance-results.md and docs/performance.png. BENCH_ARGS adds Google Benchmark
# flags (e.g. a filter).
set -euo pipefail
update_docs=0
case "${1:-}" in
  "") ;;
  --update-docs) update_docs=1 ;;
  *) echo "usage: tools/bench.sh [--update-docs]" >&2; exit 2 ;;
esac
echo "tools/bench.sh: builds the tree if needed, installs gnuplot-nox (Debian) for the plot if it is"
echo "missing, then runs every benchmark: 10-20 minutes on 2 cores. Run it on an idle machine."
source "$(dirname "$0")/bench-env.sh"
command -v gnuplot >/dev/null || { apt-get install -y -qq gnuplot-nox >/dev/null; }
mkdir -p "$build/bench"
# The figures the ratio tables divide (probe, Device, element-wise and Blob operations at n >= 2^22) run
# five times in random order; the report divides their best repetitions, so that a probe and the
# operation it bounds are not measured minutes apart under different load; the rest once.
large='^(probe|device|blob|math)/[^/]+/[^/]+/[^/]+/(4194304|16777216|67108864)/'
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
python3 tools/bench_report.py "$build/bench/results.json" "$build/bench/results.md" "$build/bench/results.png"
if [ "$update_docs" = 1 ]; then
  cp "$build/bench/results.json" docs/performance-results.json  # the run behind the report, kept with it
  cp "$build/bench/results.md" docs/performance-results.md
  cp "$build/bench/results.png" docs/performance.png
  echo "report: docs/performance-results.md, docs/performance.png (from $build/bench)"
else
  echo "report: $build/bench/results.md, $build/bench/results.png (tools/bench.sh --update-docs puts them in docs/)"
fi
