#!/usr/bin/env bash
# Stage fuzz: each libFuzzer harness, 20,000 runs on its seed corpus (docs/hardening.md),
# in its own clang build.
source "$(dirname "$0")/lib.sh"
needs deps
echo "== fuzzing smoke: each libFuzzer harness, 20,000 runs on its seed corpus (docs/hardening.md)"
status=0
fuzz="$build-fuzz"
export CCACHE_DISABLE=1  # clang, and flags no other stage uses
configure() {
  CC=clang CXX=clang++ meson setup "$fuzz" -Dfuzzing=true -Dtests=enabled -Dcuda=disabled -Dopencl=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized >/dev/null
}
[ -f "$fuzz/build.ninja" ] || compiling fuzz configure
compiling fuzz ninja -C "$fuzz" tests/fuzz/fuzz_blobproto_binary tests/fuzz/fuzz_blobproto_text tests/fuzz/fuzz_manifest \
  tests/fuzz/fuzz_backend_spec tests/fuzz/fuzz_caffemodel >/dev/null
meson test -C "$fuzz" --suite fuzz --no-rebuild --print-errorlogs || status=1
keep_junit "$fuzz/meson-logs/testlog.junit.xml" fuzz
stage_summary "$status" fuzz
