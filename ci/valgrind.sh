#!/usr/bin/env bash
# Stage valgrind: memcheck over the conformance suite on host and blis.
source "$(dirname "$0")/lib.sh"
needs build
echo "== valgrind memcheck: the conformance suite on host and blis"
status=0
vg_log="$build/meson-logs/valgrind.txt"
# Only the BLIS plugin on the path: the checked code is blobrt's, host's and blis's.
# libgomp at start-up, for the reason given in ci/sanitizers.sh (memcheck does not see
# into the static TLS of a library loaded later either).
if LD_PRELOAD="$(ci_libgomp_preload)" BLOBRT_PLUGIN_PATH="$build/backends/blis" BLOBRT_PLUGIN_SYSTEM_PATH="" \
    BLOBRT_PLUGIN_SCANNER="$build/cli/blobrt-plugin-scanner" \
    valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --suppressions="$root/tests/sanitizers/valgrind.supp" --log-file="$vg_log" \
    "$build/conformance/blobrt-conformance" --gtest_filter='AllDevices/*host_0*:AllDevices/*blis_0*' \
    --gtest_brief=1 --gtest_output="xml:$junit_dir/valgrind.junit.xml" >/dev/null; then
  echo "valgrind: clean ($(grep -o 'ERROR SUMMARY: [0-9]* errors' "$vg_log" | tail -1))"
else
  echo "valgrind: errors, see $vg_log"; tail -30 "$vg_log"; status=1
fi
stage_summary "$status" valgrind
