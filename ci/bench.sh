#!/usr/bin/env bash
# Stage bench: every benchmark once, in smoke mode (no assertions on time; tools/bench.sh
# takes the figures on an idle machine).
source "$(dirname "$0")/lib.sh"
needs build
echo "== benchmarks, smoke mode (no assertions on time)"
status=0
meson test -C "$build" --benchmark --print-errorlogs || status=1
keep_junit "$build/meson-logs/testlog.junit.xml" bench
stage_summary "$status" bench
