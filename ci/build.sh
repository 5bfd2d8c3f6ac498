#!/usr/bin/env bash
# Stage build: configure and build $BUILD_DIR (tests too unless BLOBRT_CI_TESTS=disabled,
# as `tools/build.sh demo` sets), then show `blobrt info` and run the Caffe demo.
source "$(dirname "$0")/lib.sh"
needs deps
tests="${BLOBRT_CI_TESTS:-enabled}"
echo "== configuring $build"
if [ -f "$build/build.ninja" ]; then
  meson setup --reconfigure "$build" -Dtests="$tests" -Dmpi=enabled ${MESON_ARGS:-} >/dev/null
else
  meson setup "$build" -Dtests="$tests" -Dmpi=enabled ${MESON_ARGS:-} >/dev/null
fi
echo "== building"
# Quiet when it works; the compiler's words when it does not.
if ! ninja -C "$build" > "$build/meson-logs/build.txt" 2>&1; then
  grep -A20 -m3 '^FAILED' "$build/meson-logs/build.txt" || tail -40 "$build/meson-logs/build.txt"
  echo "the build failed (all of it: $build/meson-logs/build.txt)"
  exit 1
fi

echo "== blobrt info"
meson devenv -C "$build" blobrt info
echo "== Caffe demo (a classic Caffe Blob example, only its include changed)"
demo_dir="$(mktemp -d)"
meson devenv -C "$build" -w "$demo_dir" blobrt-caffe-demo | sed -n '1,3p;/ASUM/,/SUMSQ/p'
rm -rf "$demo_dir"
