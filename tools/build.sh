#!/usr/bin/env bash
# One command from a fresh Debian 12 machine (as root) to a working blobrt:
#   tools/build.sh demo   install dependencies, build, show `blobrt info`, run the Caffe demo
#   tools/build.sh test   the same, then the whole test suite (what CI runs)
# BUILD_DIR (default: build) and MESON_ARGS (extra `meson setup` options) may be set.
set -euo pipefail

mode="${1:-demo}"
case "$mode" in
  demo|test) ;;
  *) echo "usage: tools/build.sh demo|test" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-build}"
cd "$root"

"$root/tools/install-deps.sh"

# The CUDA toolkit is not a Debian package here; meson finds it in /usr/local/cuda.
if [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
  export CUDA_PATH="${CUDA_PATH:-/usr/local/cuda}"
fi

echo "== configuring $build"
if [ -f "$build/build.ninja" ]; then
  meson setup --reconfigure "$build" -Dtests=enabled -Dmpi=enabled ${MESON_ARGS:-} >/dev/null
else
  meson setup "$build" -Dtests=enabled -Dmpi=enabled ${MESON_ARGS:-} >/dev/null
fi
echo "== building"
ninja -C "$build" >/dev/null

echo "== blobrt info"
meson devenv -C "$build" blobrt info
echo "== Caffe demo (a classic Caffe Blob example, only its include changed)"
demo_dir="$(mktemp -d)"
meson devenv -C "$build" -w "$demo_dir" blobrt-caffe-demo | sed -n '1,3p;/ASUM/,/SUMSQ/p'
rm -rf "$demo_dir"

if [ "$mode" = test ]; then
  status=0
  logs=()
  echo "== test suite (every backend found: host, blis, opencl on PoCL, cuda where a GPU is)"
  meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" || status=1
  # Each meson test run rewrites testlog.junit.xml: keep a copy per run.
  cp "$build/meson-logs/testlog.junit.xml" "$build/meson-logs/suite.junit.xml"
  logs+=("$build/meson-logs/suite.junit.xml")

  echo "== benchmarks, smoke mode (no assertions on time)"
  meson test -C "$build" --benchmark --print-errorlogs || status=1
  cp "$build/meson-logs/testlog.junit.xml" "$build/meson-logs/bench.junit.xml"
  logs+=("$build/meson-logs/bench.junit.xml")

  echo "== Python package: pip install . into a fresh virtual environment, pytest against it"
  venv="$(realpath -m "$build-venv")"
  wheel_junit="$(realpath -m "$build/meson-logs/python-wheel.junit.xml")"
  rm -rf "$venv"
  python3 -m venv "$venv"
  # JAX (CPU wheels on PyPI) is a third-party DLPack consumer for the tests; PyTorch's PyPI
  # wheels pull in gigabytes of CUDA libraries, so its test runs only where it is installed.
  # A failed JAX install only skips those tests (with the reason), it does not fail the run.
  "$venv/bin/pip" install -q jax || echo "JAX could not be installed: its DLPack tests are skipped"
  if "$venv/bin/pip" install -q numpy pytest && "$venv/bin/pip" install -q "$root"; then
    (cd "$venv" && env -u BLOBRT_PLUGIN_PATH -u BLOBRT_PLUGIN_SYSTEM_PATH \
       BLOBRT_TEST_DATA_DIR="$root/tests/data" BLOBRT_EXPECT_PACKAGED_PLUGINS=1 \
       "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml "$wheel_junit" \
       "$root/tests/python") || status=1
    logs+=("$build/meson-logs/python-wheel.junit.xml")
  else
    echo "pip install . failed"
    status=1
  fi

  echo "== outside-in: installed into a fresh prefix, used by pkg-config, meson and CMake projects"
  outside="$(realpath -m "$build-outside")"
  outside_junit="$outside/outside-in.junit.xml"
  mkdir -p "$outside"
  python3 "$root/tests/outside_in_test.py" "$root" "$outside" "$outside_junit" || status=1
  [ -f "$outside_junit" ] && logs+=("$outside_junit")

  echo "== GPU bundle: built, size-checked, moved, and run here on the CPU backends (docs/cuda.md)"
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    bundle_work="$build-gpu-bundle-test"
    BUNDLE_BUILD_DIR="$build-gpu-bundle" tests/gpu_bundle_test.sh "$bundle_work" || status=1
    for f in "$bundle_work"/junit/*.junit.xml; do [ -f "$f" ] && logs+=("$f"); done
  else
    echo "skipped: no CUDA toolkit in /usr/local/cuda, so no CUDA plugin to bundle"
  fi

  echo "== the whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer"
  asan="$build-asan"
  if [ ! -f "$asan/build.ninja" ]; then
    # No Python package: an ASan-built extension cannot load into an uninstrumented python.
    meson setup "$asan" -Dtests=enabled -Dcuda=disabled -Dpython=disabled -Db_sanitize=address,undefined -Db_lundef=false \
      -Dbuildtype=debugoptimized >/dev/null
  fi
  ninja -C "$asan" >/dev/null
  # intercept_tls_get_addr=0: GCC 12's LeakSanitizer, tracking dynamic TLS through
  # __tls_get_addr, read a bogus block of it ("DTLS 11 at 0x2e8-0x8000013ea") on this project's
  # AMD EPYC machine once the plugins, BLIS and PoCL are all loaded, and its exit-time tracer
  # crashed ("Tracer caught signal 11", the test killed by SIGABRT), the code at the start
  # of this session as well. Dynamic TLS is then not scanned for pointers; static TLS and
  # the stacks still are.
  asan_options=allocator_may_return_null=1:detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0
  # Debian's BLIS brings in the OpenMP runtime when its plugin is loaded. libgomp keeps its
  # start-up allocations in static TLS, which LeakSanitizer does not scan for a library
  # loaded after the thread started, so they would be reported as leaks (attributed to the
  # plugin) and the plugin taken for crashed. Loaded at start-up, libgomp is scanned as it
  # was when libblobrt itself linked it.
  libgomp="$(gcc -print-file-name=libgomp.so.1)"
  preload="${LD_PRELOAD:-}"
  if [ -f "$libgomp" ]; then
    preload="$libgomp${preload:+:$preload}"
    asan_options=$asan_options:verify_asan_link_order=0
  fi
  LD_PRELOAD="$preload" ASAN_OPTIONS=$asan_options \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  LSAN_OPTIONS="suppressions=$root/tests/sanitizer.supp" \
    meson test -C "$asan" --no-suite dist --print-errorlogs --num-processes "$(nproc)" --timeout-multiplier 3 || status=1
  cp "$asan/meson-logs/testlog.junit.xml" "$asan/meson-logs/suite.junit.xml"
  logs+=("$asan/meson-logs/suite.junit.xml")
  # libblobrt-dist under mpirun: Open MPI unloads its components at MPI_Finalize, so
  # their allocations are only attributed (and suppressed) with full stack unwinding.
  LD_PRELOAD="$preload" ASAN_OPTIONS=$asan_options:fast_unwind_on_malloc=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  LSAN_OPTIONS="suppressions=$root/tests/sanitizer.supp" \
    meson test -C "$asan" --suite dist --print-errorlogs --timeout-multiplier 3 || status=1
  logs+=("$asan/meson-logs/testlog.junit.xml")

  echo "== valgrind memcheck: the conformance suite on host and blis"
  if command -v valgrind >/dev/null; then
    vg_log="$build/meson-logs/valgrind.txt"
    # Only the BLIS plugin on the path: the checked code is blobrt's, host's and blis's.
    # libgomp at start-up, for the reason given at the ASan run above (memcheck does not see
    # into the static TLS of a library loaded later either).
    if LD_PRELOAD="$preload" BLOBRT_PLUGIN_PATH="$build/backends/blis" BLOBRT_PLUGIN_SYSTEM_PATH="" \
        BLOBRT_PLUGIN_SCANNER="$build/tools/blobrt-plugin-scanner" \
        valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        --suppressions="$root/tests/valgrind.supp" --log-file="$vg_log" \
        "$build/tests/blobrt-conformance" --gtest_filter='AllDevices/*host_0*:AllDevices/*blis_0*' \
        --gtest_brief=1 --gtest_output="xml:$build/meson-logs/valgrind.junit.xml" >/dev/null; then
      echo "valgrind: clean ($(grep -o 'ERROR SUMMARY: [0-9]* errors' "$vg_log" | tail -1))"
    else
      echo "valgrind: errors, see $vg_log"; tail -30 "$vg_log"; status=1
    fi
    logs+=("$build/meson-logs/valgrind.junit.xml")
  fi

  echo "== fuzzing smoke: each libFuzzer harness, 20,000 runs on its seed corpus (docs/hardening.md)"
  if ! command -v clang++ >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang >/dev/null
  fi
  fuzz="$build-fuzz"
  if [ ! -f "$fuzz/build.ninja" ]; then
    CC=clang CXX=clang++ meson setup "$fuzz" -Dfuzzing=true -Dtests=enabled -Dcuda=disabled -Dopencl=disabled \
      -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized >/dev/null
  fi
  ninja -C "$fuzz" tests/fuzz/fuzz_blobproto_binary tests/fuzz/fuzz_blobproto_text tests/fuzz/fuzz_manifest \
    tests/fuzz/fuzz_backend_spec >/dev/null
  meson test -C "$fuzz" --suite fuzz --no-rebuild --print-errorlogs || status=1
  logs+=("$fuzz/meson-logs/testlog.junit.xml")

  python3 "$root/tools/test_summary.py" "${logs[@]}" || status=1
  exit "$status"
fi
