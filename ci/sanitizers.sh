#!/usr/bin/env bash
# Stage sanitizers: the whole suite again in its own build under AddressSanitizer +
# UndefinedBehaviorSanitizer (libblobrt-dist's suite under mpirun too).
source "$(dirname "$0")/lib.sh"
needs deps
echo "== the whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer"
status=0
asan="$build-asan"
# Its flags are its own: nothing to share through ccache.
export CCACHE_DISABLE=1
# -O1 -g1 (line tables: the reports' stack traces keep file and line), as AddressSanitizer's
# documentation advises: this tree compiles in about half the time it took at -O2 -g, which
# is what lets the stage fit in every run. Assertions stay on (not a release build).
configure() {
  # No Python package: an ASan-built extension cannot load into an uninstrumented python.
  meson setup "$asan" -Dtests=enabled -Dcuda=disabled -Dpython=disabled -Db_sanitize=address,undefined -Db_lundef=false \
    -Doptimization=1 -Ddebug=false -Db_ndebug=false -Dc_args=-g1 -Dcpp_args=-g1 >/dev/null
}
[ -f "$asan/build.ninja" ] || compiling sanitizers configure
compiling sanitizers ninja -C "$asan" >/dev/null
# intercept_tls_get_addr=0: GCC 12's LeakSanitizer, tracking dynamic TLS through
# __tls_get_addr, read a bogus block of it ("DTLS 11 at 0x2e8-0x8000013ea") on this project's
# AMD EPYC machine once the plugins, BLIS and PoCL are all loaded, and its exit-time tracer
# crashed ("Tracer caught signal 11", the test killed by SIGABRT). Dynamic TLS is then not
# scanned for pointers; static TLS and the stacks still are.
asan_options=allocator_may_return_null=1:detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0
# Debian's BLIS brings in the OpenMP runtime when its plugin is loaded. libgomp keeps its
# start-up allocations in static TLS, which LeakSanitizer does not scan for a library
# loaded after the thread started, so they would be reported as leaks (attributed to the
# plugin) and the plugin taken for crashed. Loaded at start-up, libgomp is scanned as it
# was when libblobrt itself linked it.
preload="$(ci_libgomp_preload)"
[ -n "$preload" ] && asan_options=$asan_options:verify_asan_link_order=0
LD_PRELOAD="$preload" ASAN_OPTIONS=$asan_options \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
LSAN_OPTIONS="suppressions=$root/tests/sanitizers/sanitizer.supp" \
  meson test -C "$asan" --no-suite dist --print-errorlogs --num-processes "$(nproc)" --timeout-multiplier 3 || status=1
keep_junit "$asan/meson-logs/testlog.junit.xml" asan
# libblobrt-dist under mpirun: Open MPI unloads its components at MPI_Finalize, so
# their allocations are only attributed (and suppressed) with full stack unwinding. Not
# suite 'reruns' (the fleet run of the conformance suite, the README's commands: whole
# suites again, 9.5 of this run's 10 minutes; the conformance suite is in the run above).
LD_PRELOAD="$preload" ASAN_OPTIONS=$asan_options:fast_unwind_on_malloc=0 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
LSAN_OPTIONS="suppressions=$root/tests/sanitizers/sanitizer.supp" \
  meson test -C "$asan" --suite dist --no-suite reruns --print-errorlogs --timeout-multiplier 3 || status=1
keep_junit "$asan/meson-logs/testlog.junit.xml" asan-dist
stage_summary "$status" asan asan-dist
