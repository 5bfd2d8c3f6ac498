#!/usr/bin/env bash
# Builds a BVLC Caffe checkout the portable way on the blobrt installed in PREFIX, by
# Caffe's own CMake build (docs/caffe-on-blobrt.md, "One build for every node"): libcaffe
# and `caffe` with no CUDA library linked, and its layer .cu files by nvcc into the
# Caffe-layers CUDA plugin beside libcaffe ("Caffe's own CUDA kernels on GPU nodes"), which
# tools/gpu-bundle.sh then carries to the GPU node.
#   build-caffe-portable.sh CHECKOUT PREFIX [ARCH]    (ARCH: default 90, sm_ARCH + compute_ARCH PTX)
# The build folder is CHECKOUT/build-blobrt-portable (incremental on a second run); the
# Makefile build of the same checkout (build-caffe-cuda.sh, .build_release) is another
# folder, so one checkout serves both.
set -euo pipefail

[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: build-caffe-portable.sh CHECKOUT PREFIX [ARCH]" >&2; exit 2; }
checkout=$(cd "$1" && pwd)
prefix=$(cd "$2" && pwd)
arch=${3:-90}
[ -f "$checkout/CMakeLists.txt" ] && [ -f "$checkout/src/caffe/net.cpp" ] ||
  { echo "build-caffe-portable.sh: $checkout is not a Caffe checkout (no CMakeLists.txt, src/caffe/net.cpp)" >&2; exit 2; }
hook="$prefix/lib/cmake/blobrt/caffe-on-blobrt.cmake"
[ -f "$hook" ] ||
  { echo "build-caffe-portable.sh: $prefix has no lib/cmake/blobrt/caffe-on-blobrt.cmake (blobrt built with -Dcaffe, installed with --tags devel)" >&2; exit 2; }
export PATH="/usr/local/cuda/bin:$PATH"
build="$checkout/build-blobrt-portable"
# -DCPU_ONLY=ON: Caffe's own files run no nvcc and link no CUDA library; the plugin's nvcc
# is blobrt's (BLOBRT_CAFFE_CUDA_LAYERS=ON: no nvcc is an error here).
cmake -S "$checkout" -B "$build" -DCMAKE_PROJECT_Caffe_INCLUDE="$hook" -DCMAKE_BUILD_TYPE=Release \
  -DCPU_ONLY=ON -DBLOBRT_CAFFE_CUDA_LAYERS=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DUSE_OPENCV=OFF -DUSE_LEVELDB=OFF -DUSE_LMDB=OFF -DBUILD_python=OFF -DBUILD_docs=OFF -DBLAS=Open
cmake --build "$build" --target caffe.bin caffe_layers_cuda -j"$(nproc)"
for f in "$build/tools/caffe" "$build/lib/blobrt-caffe-layers/libcaffe-layers-cuda.so"; do
  [ -f "$f" ] || { echo "build-caffe-portable.sh: no $f after the build" >&2; exit 1; }
done
if ldd "$build/tools/caffe" | grep -E 'libcuda|libcublas|libcurand'; then
  echo "build-caffe-portable.sh: the portable caffe links a CUDA library (above)" >&2
  exit 1
fi
echo "build-caffe-portable.sh: $build/tools/caffe and lib/blobrt-caffe-layers/libcaffe-layers-cuda.so built on $prefix"
