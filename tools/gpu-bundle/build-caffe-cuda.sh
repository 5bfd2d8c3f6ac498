#!/usr/bin/env bash
# Builds a BVLC Caffe checkout for CUDA on the blobrt installed in PREFIX, with Caffe's own
# Makefile (docs/caffe-on-blobrt.md, "A CUDA build"): its `caffe` tool and libcaffe, which
# tools/gpu-bundle.sh then carries to the GPU node.
#   build-caffe-cuda.sh CHECKOUT PREFIX [ARCH]      (ARCH: default 90, sm_ARCH + compute_ARCH PTX)
# A checkout without Makefile.config gets the one below; one that has its own is used as it
# is (it must take blobrt-caffe's flags as that one does). The build is incremental: a
# second run after a blobrt rebuild relinks what changed. BVLC master's net.cpp calls HDF5
# outside its USE_HDF5 guard, so HDF5 stays on (Debian's serial HDF5, libhdf5-dev).
set -euo pipefail

[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: build-caffe-cuda.sh CHECKOUT PREFIX [ARCH]" >&2; exit 2; }
checkout=$(cd "$1" && pwd)
prefix=$(cd "$2" && pwd)
arch=${3:-90}
[ -f "$checkout/Makefile" ] && [ -f "$checkout/src/caffe/net.cpp" ] ||
  { echo "build-caffe-cuda.sh: $checkout is not a Caffe checkout (no Makefile, src/caffe/net.cpp)" >&2; exit 2; }
[ -f "$prefix/lib/pkgconfig/blobrt-caffe.pc" ] ||
  { echo "build-caffe-cuda.sh: $prefix has no lib/pkgconfig/blobrt-caffe.pc (blobrt built with -Dcaffe, installed with --tags devel)" >&2; exit 2; }
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PATH="/usr/local/cuda/bin:$PATH"
multiarch=$(gcc -print-multiarch)

if [ ! -f "$checkout/Makefile.config" ]; then
  cat > "$checkout/Makefile.config" <<EOF
# Written by blobrt's tools/gpu-bundle/build-caffe-cuda.sh: Caffe's CUDA build on blobrt.
CUDA_DIR := /usr/local/cuda
CUDA_ARCH := -gencode arch=compute_$arch,code=sm_$arch -gencode arch=compute_$arch,code=compute_$arch
CXXFLAGS += -std=c++17
NVCCFLAGS += -std=c++17
COMMON_FLAGS += \$(shell pkg-config --cflags blobrt-caffe)
# --as-needed: Caffe's Makefile links a BLAS, but its BLAS calls are blobrt's now, so
# libcaffe does not keep OpenBLAS (30 MB the bundle need not carry).
LDFLAGS += -Wl,--as-needed \$(shell pkg-config --libs blobrt-caffe)
BLAS := open
BLAS_INCLUDE := /usr/include/$multiarch/openblas-pthread
BLAS_LIB := /usr/lib/$multiarch/openblas-pthread
USE_OPENCV := 0
USE_LEVELDB := 0
USE_LMDB := 0
INCLUDE_DIRS := /usr/local/include /usr/include/hdf5/serial
LIBRARY_DIRS := /usr/local/lib /usr/lib /usr/lib/$multiarch/hdf5/serial
BUILD_DIR := build
Q ?= @
EOF
fi

# A checkout configured for the CPU (the pycaffe route's CPU_ONLY) would be built and bundled
# without CUDA; its objects would be reused, as Caffe's rules do not depend on the config.
if grep -Eq '^[[:space:]]*CPU_ONLY[[:space:]]*:?=[[:space:]]*1' "$checkout/Makefile.config"; then
  echo "build-caffe-cuda.sh: $checkout/Makefile.config sets CPU_ONLY := 1; use a checkout of its own for the CUDA build" >&2
  exit 2
fi

cd "$checkout"
# blobrt's four files (and math_functions.cu) stay out; Caffe's tests are not built.
cxx_srcs=$(find src/caffe ! -name 'test_*.cpp' -name '*.cpp' |
  grep -v -E '^src/caffe/(blob|common|syncedmem)\.cpp$|^src/caffe/util/math_functions\.cpp$' | sort | xargs)
cu_srcs=$(find src/caffe ! -name 'test_*.cu' -name '*.cu' | grep -v -E '^src/caffe/util/math_functions\.cu$' | sort | xargs)
make -j"$(nproc)" all tools CXX_SRCS="$cxx_srcs" CU_SRCS="$cu_srcs"
echo "build-caffe-cuda.sh: $checkout/.build_release/tools/caffe.bin built on $prefix"
