#!/usr/bin/env bash
# Builds the self-contained GPU bundle: a release build with the CUDA plugin for sm_90
# (plus compute_90 PTX, so newer GPUs JIT-compile it), installed into DIR with the test
# suites, the benchmarks and the Debian runtime libraries a bare CUDA machine lacks.
#   tools/gpu-bundle.sh DIR          then, on a GPU node: DIR/run-on-gpu.sh OUTDIR
# The NVIDIA driver, libcudart and libcublas are never bundled: the GPU node provides
# them (run-on-gpu.sh finds them). BUNDLE_BUILD_DIR (default build-gpu-bundle),
# CUDA_ARCH (default 90) and BUNDLE_MAX_MIB (default 52, 8 more for each Caffe build below) may be set. docs/cuda.md says more.
# CAFFE_CUDA_BUILD: a BVLC Caffe checkout, built here for CUDA on the bundle's blobrt
# (tools/gpu-bundle/build-caffe-cuda.sh; docs/caffe-on-blobrt.md, "A CUDA build"); its
# `caffe` tool and libcaffe are bundled, and run-on-gpu.sh trains LeNet
# with it in GPU mode (tools/gpu-bundle/caffe-lenet-gpu.sh). Without it that step is skipped.
# CAFFE_PORTABLE_BUILD: a BVLC Caffe checkout (it may be the same one), built here the portable
# way by its CMake build with the Caffe-layers CUDA plugin (tools/gpu-bundle/build-caffe-portable.sh;
# docs/caffe-on-blobrt.md, "Caffe's own CUDA kernels on GPU nodes"): its `caffe`, libcaffe
# and the plugin go to caffe-portable/, and run-on-gpu.sh trains LeNet in GPU mode through
# the plugin and compares `caffe time` with the CUDA build's. Without it that step is skipped.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: tools/gpu-bundle.sh DIR" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUNDLE_BUILD_DIR:-build-gpu-bundle}"
arch="${CUDA_ARCH:-90}"
# 52 MiB and the repository's 5 MB stay under the device tool's 64 MiB (ABI 1.6's host
# kernels took the bundle past 48 MiB, the CUDA plugin's im2col/col2im and level-1 kernels
# and test_cuda_level1 past 49: 51,503,133 bytes).
# A Caffe build makes the bundle up to 8 MiB larger (libcaffe, HDF5); the portable build
# adds its libcaffe and the plugin (sm_ARCH code and PTX): 8 MiB more. With either, the
# bundle and the checkout may pass the device tool's 64 MiB: carry the bundle as an xz
# archive (docs/cuda.md, "The second GPU run": 62 MiB with both became 12.8 MB).
caffe_mib=0
[ -n "${CAFFE_CUDA_BUILD:-}" ] && caffe_mib=$((caffe_mib + 8))
[ -n "${CAFFE_PORTABLE_BUILD:-}" ] && caffe_mib=$((caffe_mib + 8))
max_mib="${BUNDLE_MAX_MIB:-$((52 + caffe_mib))}"
mkdir -p "$1"
dir="$(cd "$1" && pwd)"
# Relative to where the script was started, not to the checkout it moves to below.
[ -n "${CAFFE_CUDA_BUILD:-}" ] && CAFFE_CUDA_BUILD="$(cd "$CAFFE_CUDA_BUILD" && pwd)"
[ -n "${CAFFE_PORTABLE_BUILD:-}" ] && CAFFE_PORTABLE_BUILD="$(cd "$CAFFE_PORTABLE_BUILD" && pwd)"
cd "$root"

# Caffe's builds link Boost.Thread/System and HDF5 besides what blobrt needs (and its
# CMake build looks for a BLAS, whose calls are blobrt's).
caffe_deps=""
[ -n "${CAFFE_CUDA_BUILD:-}${CAFFE_PORTABLE_BUILD:-}" ] && caffe_deps="libhdf5-dev libboost-thread-dev libboost-system-dev"
[ -n "${CAFFE_PORTABLE_BUILD:-}" ] && caffe_deps="$caffe_deps libopenblas-dev"
# shellcheck disable=SC2086
"$root/tools/install-deps.sh" $caffe_deps
if [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
  export CUDA_PATH="${CUDA_PATH:-/usr/local/cuda}"
fi
command -v nvcc >/dev/null || { echo "gpu-bundle: nvcc not found (the CUDA toolkit is needed to build the CUDA plugin)" >&2; exit 1; }

echo "== configuring $build (release, CUDA for sm_$arch + PTX, prefix $dir)"
options=(--prefix="$dir" --libdir=lib -Dbuildtype=release -Dtests=enabled -Dinstall_tests=true
         -Dcuda=enabled -Dblis=enabled -Dopencl=enabled -Dnvcc_arch="$arch"
         -Dmpi=disabled -Dpython=disabled)  # the GPU machine's MPI and Python differ from these; not bundled yet
if [ -f "$build/build.ninja" ]; then
  meson setup --reconfigure "$build" "${options[@]}" >/dev/null
else
  meson setup "$build" "${options[@]}" >/dev/null
fi
echo "== building"
ninja -C "$build" >/dev/null

echo "== installing into $dir"
find "$dir" -mindepth 1 -delete
meson install -C "$build" --strip --no-rebuild --quiet --tags runtime,cuda,tests,devel >/dev/null

# Caffe's own `caffe` tool built for CUDA on blobrt, where a checkout is given: built (or
# brought up to date) against what was just installed, then the tool in caffe/ and libcaffe
# beside the bundled libraries (env.sh's library path).
if [ -n "${CAFFE_CUDA_BUILD:-}" ]; then
  echo "== building Caffe's CUDA build in $CAFFE_CUDA_BUILD on the bundle's blobrt"
  "$root/tools/gpu-bundle/build-caffe-cuda.sh" "$CAFFE_CUDA_BUILD" "$dir" "$arch" > "$build/caffe-cuda-build.log" 2>&1 ||
    { echo "gpu-bundle: Caffe's build failed; the end of $build/caffe-cuda-build.log:" >&2; tail -n 20 "$build/caffe-cuda-build.log" >&2; exit 1; }
  caffe_build="$CAFFE_CUDA_BUILD/.build_release"
  for f in "$caffe_build/tools/caffe.bin" "$caffe_build/lib/libcaffe.so.1.0.0"; do
    [ -f "$f" ] || { echo "gpu-bundle: CAFFE_CUDA_BUILD=$CAFFE_CUDA_BUILD has no $f after its build (a Makefile.config of its own that builds elsewhere: DEBUG, BUILD_DIR?)" >&2; exit 1; }
  done
  echo "== adding Caffe's CUDA build from $CAFFE_CUDA_BUILD"
  mkdir -p "$dir/caffe" "$dir/lib/deps"
  install -m 755 "$caffe_build/tools/caffe.bin" "$dir/caffe/caffe"
  install -m 644 "$caffe_build/lib/libcaffe.so.1.0.0" "$dir/lib/deps/libcaffe.so.1.0.0"
  strip --strip-unneeded "$dir/caffe/caffe" "$dir/lib/deps/libcaffe.so.1.0.0"
fi
# The same Caffe built the portable way, with its Caffe-layers CUDA plugin: in a folder of
# its own (its libcaffe has the CUDA build's name), the plugin beside libcaffe as installed.
if [ -n "${CAFFE_PORTABLE_BUILD:-}" ]; then
  echo "== building Caffe's portable build in $CAFFE_PORTABLE_BUILD on the bundle's blobrt"
  "$root/tools/gpu-bundle/build-caffe-portable.sh" "$CAFFE_PORTABLE_BUILD" "$dir" "$arch" \
    > "$build/caffe-portable-build.log" 2>&1 ||
    { echo "gpu-bundle: Caffe's portable build failed; the end of $build/caffe-portable-build.log:" >&2; tail -n 20 "$build/caffe-portable-build.log" >&2; exit 1; }
  portable_build="$CAFFE_PORTABLE_BUILD/build-blobrt-portable"
  echo "== adding Caffe's portable build and its Caffe-layers CUDA plugin from $portable_build"
  mkdir -p "$dir/caffe-portable/lib/blobrt-caffe-layers"
  install -m 755 "$portable_build/tools/caffe" "$dir/caffe-portable/caffe"
  install -m 644 "$portable_build/lib/libcaffe.so.1.0.0" "$dir/caffe-portable/lib/libcaffe.so.1.0.0"
  install -m 644 "$portable_build/lib/blobrt-caffe-layers/libcaffe-layers-cuda.so" \
    "$dir/caffe-portable/lib/blobrt-caffe-layers/libcaffe-layers-cuda.so"
  strip --strip-unneeded "$dir/caffe-portable/caffe" "$dir/caffe-portable/lib/libcaffe.so.1.0.0" \
    "$dir/caffe-portable/lib/blobrt-caffe-layers/libcaffe-layers-cuda.so"
fi

# Every shared library the bundle's programs and plugins need, except what any Linux with
# an NVIDIA driver has (glibc) and what the GPU node must provide itself (CUDA, NCCL, the driver).
# libstdc++/libgcc_s go to lib/cxx, used only where the node's own are older (run-on-gpu.sh).
echo "== bundling runtime libraries"
mkdir -p "$dir/lib/deps" "$dir/lib/cxx"
system_lib='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libresolv\.so|libutil\.so)'
gpu_lib='^(libcuda\.so|libcudart\.so|libcublas\.so|libcublasLt\.so|libnccl\.so|libnvidia-)'
# libcurl and what it pulls in (TLS, Kerberos, LDAP, ...): only Caffe's HDF5 links it, any
# node has its own, and bundled it would be most of the size. run-on-gpu.sh's Caffe step is
# skipped, naming what is missing, on a node that lacks one.
node_lib='^(libcurl|libssl|libcrypto|libnghttp2|libidn2|librtmp|libssh2|libpsl|libgssapi_krb5|libldap|liblber|libzstd|libbrotli|libunistring|libgnutls|libkrb5|libk5crypto|libhogweed|libnettle|libgmp|libp11-kit|libtasn1|libsasl2|libffi|libcom_err|libkeyutils)'
mapfile -t elves < <(find "$dir" -type f \( -perm -u+x -o -name '*.so*' \) -exec sh -c \
  'head -c 4 "$1" | grep -q "ELF" && echo "$1"' _ {} \;)
declare -A wanted=()
for f in "${elves[@]}"; do
  # ldd resolves through the build's own libblobrt; the bundle's copy replaces it.
  while read -r name _ path _; do
    # libcaffe: each Caffe build's own copy is bundled above, beside its programs.
    [[ "$name" =~ $system_lib || "$name" =~ $gpu_lib || "$name" =~ $node_lib || "$name" == libblobrt* ||
       "$name" == libcaffe.so* ]] && continue
    [ -n "$path" ] && [ -f "$path" ] && [[ "$path" != "$dir"/* ]] && wanted["$name"]="$path"
  done < <(LD_LIBRARY_PATH="$dir/lib" ldd "$f" 2>/dev/null | grep '=> /')
done
# The plugins load these at run time (manifests' `requires`), not through DT_NEEDED.
# awk reads all of ldconfig's list (no early exit): under pipefail, ldconfig killed by
# SIGPIPE after an early match failed this script at random, without a word.
for name in libOpenCL.so.1 libclblast.so.1; do
  path=$(ldconfig -p | awk -v n="$name" '$1 == n && /x86-64/ && !found {print $NF; found = 1}')
  [ -n "$path" ] && wanted["$name"]="$path"
done
for name in "${!wanted[@]}"; do
  case "$name" in
    libstdc++.so.*|libgcc_s.so.*) target="$dir/lib/cxx/$name" ;;
    *) target="$dir/lib/deps/$name" ;;
  esac
  cp -L "${wanted[$name]}" "$target"
  chmod 644 "$target"
  strip --strip-unneeded "$target" 2>/dev/null || true
done
# The newest GLIBCXX symbol version the bundle needs from libstdc++.
objdump -T "${elves[@]}" "$dir"/lib/deps/*.so* 2>/dev/null | grep -o 'GLIBCXX_3\.4\.[0-9]*' \
  | sort -t. -k3,3n -u | tail -n 1 > "$dir/lib/cxx/GLIBCXX_NEEDED"

# Python on the node: its Python (3.12 on the lent machines) is not this machine's, so
# run-on-gpu.sh builds the extension there (tools/gpu-bundle/python/meson.build) from what
# this puts in python-build: the module's sources, the report libraries compiled here
# (they use Boost and nlohmann/json, which the node lacks), the headers the module needs
# that the node lacks (protobuf's, nlohmann/json's, blobrt.pb.h, the reports'), and the
# Python tests. The node brings Python, nanobind, numpy, meson and ninja.
echo "== adding the Python extension's sources (built on the node)"
pyb="$dir/python-build"
mkdir -p "$pyb/src" "$pyb/blobrt" "$pyb/include" "$pyb/lib" "$pyb/tests"
cp tools/gpu-bundle/python/meson.build tools/gpu-bundle/python/meson_options.txt "$pyb/"
cp tools/gpu-bundle/python/blobrt.meson.build "$pyb/blobrt/meson.build"
cp python/src/*.cpp python/src/*.hpp "$pyb/src/"
cp python/blobrt/__init__.py python/blobrt/__main__.py python/blobrt/caffe.py python/blobrt/py.typed python/blobrt/_blobrt.pyi "$pyb/blobrt/"
cp report/info_report.hpp report/inspect_report.hpp report/json_out.hpp "$build/proto/blobrt.pb.h" "$pyb/include/"
mkdir -p "$pyb/include/google"
cp -r /usr/include/google/protobuf "$pyb/include/google/"
cp -r /usr/include/nlohmann "$pyb/include/"
# meson's static libraries are thin archives (member paths into the build tree): copied as
# whole archives of their objects, without debug sections.
for a in libblobrt-info-report.a libblobrt-inspect-report.a; do
  mapfile -t members < <(cd "$build/report" && ar t "$a")
  (cd "$build/report" && ar rcs "$pyb/lib/$a" "${members[@]}")
  strip --strip-debug "$pyb/lib/$a"
done
(cd "$dir" && ls lib/libblobrt.so.1 lib/deps/libprotobuf.so.* lib/deps/libboost_filesystem.so.*) > "$pyb/bundle_libs.txt"
cp tests/python/*.py "$pyb/tests/"

# Installed programs carry no build-tree rpath; they find the bundle's libraries through
# env.sh, and the setuid test is not part of the bundle.
install -m 755 tools/gpu-bundle/run-on-gpu.sh "$dir/run-on-gpu.sh"
install -m 644 tools/gpu-bundle/env.sh "$dir/env.sh"
install -m 755 tools/test_summary.py "$dir/libexec/blobrt/test_summary.py"
install -m 755 tools/bench_report.py "$dir/libexec/blobrt/bench_report.py"  # the CUDA results, made on the node
install -m 755 tools/gpu-bundle/caffe-lenet-gpu.sh "$dir/libexec/blobrt/caffe-lenet-gpu.sh"
{
  echo "blobrt $(meson introspect "$build" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])') GPU bundle"
  echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(g++ --version | sed -n 1p), $(nvcc --version | tail -n 2 | sed -n 1p)"
  echo "CUDA plugin: sm_$arch machine code + compute_$arch PTX"
  echo "bundled libraries (Debian package, version):"
  for name in $(printf '%s\n' "${!wanted[@]}" | sort); do
    real=$(readlink -f "${wanted[$name]}")
    # Debian's merged /usr: dpkg may know the file under /lib rather than /usr/lib.
    pkg=$({ dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null || true; } | awk -F: 'NR == 1 {print $1}')
    echo "  $name  ${pkg:-?} $( [ -n "$pkg" ] && dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null)"
  done
} > "$dir/BUNDLE.txt"

size=$(du -sb "$dir" | cut -f1)
mib=$(( (size + 1048575) / 1048576 ))
echo "== bundle: $dir, $mib MiB ($size bytes), limit $max_mib MiB"
if [ "$size" -gt $(( max_mib * 1048576 )) ]; then
  echo "gpu-bundle: $dir is $mib MiB, over the $max_mib MiB limit; largest files:" >&2
  find "$dir" -type f -printf '%s %p\n' | sort -rn | sed -n 1,10p >&2
  exit 1
fi
