#!/usr/bin/env bash
# Stage build: configure and build $BUILD_DIR (tests too unless BLOBRT_CI_TESTS=disabled,
# as `tools/build.sh demo` sets), then show `blobrt info` and run the Caffe demo.
source "$(dirname "$0")/lib.sh"
needs deps
tests="${BLOBRT_CI_TESTS:-enabled}"
options=(-Dtests="$tests" -Dmpi=enabled)
# In CI, the CUDA plugin for the GPU the project tests on (sm_90, as the gpu-bundle stage
# builds it), so that stage takes these objects from ccache; the quick start keeps nvcc's own.
[ "$tests" = disabled ] || [ ! -x /usr/local/cuda/bin/nvcc ] || options+=(-Dnvcc_arch="${CUDA_ARCH:-90}")
configure() {
  if [ -f "$build/build.ninja" ]; then
    meson setup --reconfigure "$build" "${options[@]}" ${MESON_ARGS:-} >/dev/null
  else
    meson setup "$build" "${options[@]}" ${MESON_ARGS:-} >/dev/null
  fi
}
echo "== configuring $build"
compiling build configure
echo "== building"
# Quiet when it works; the compiler's words when it does not.
if ! compiling build ninja -C "$build" > "$build/meson-logs/build.txt" 2>&1; then
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
