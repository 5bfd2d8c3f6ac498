#!/usr/bin/env bash
# One LeNet training iteration in Caffe's GPU mode on blobrt: what crosses between host and
# device, in all and per layer (traffic.cpp), on the backend BLOBRT_BACKEND picks.
#   tools/caffe-traffic/run.sh CAFFE_CHECKOUT CAFFE_BUILD_DIR OUTDIR
# CAFFE_CHECKOUT: BVLC Caffe built on blobrt the portable way by its CMake route
# (docs/caffe-on-blobrt.md) in CAFFE_BUILD_DIR; blobrt-caffe's pkg-config file on
# PKG_CONFIG_PATH. Needs python3-lmdb and python3-protobuf for the synthetic MNIST-shaped
# LMDB (tools/caffe-data-parallel/make_lmdb.py, Caffe's own lenet_train_test.prototxt);
# PYTHON (default python3) is the interpreter that has them.
set -euo pipefail
[ $# -eq 3 ] || { sed -n '2,8p' "$0" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
caffe=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
if [ ! -f "$out/lmdb.done" ]; then
  rm -rf "$out/train_lmdb" "$out/test_lmdb"
  CAFFE_PB2_DIR="$build/include/caffe/proto" "${PYTHON:-python3}" "$here/../caffe-data-parallel/make_lmdb.py" "$caffe" "$out"
  touch "$out/lmdb.done"
fi
sed -e "s#examples/mnist/mnist_train_lmdb#$out/train_lmdb#; s#examples/mnist/mnist_test_lmdb#$out/test_lmdb#" \
  "$caffe/examples/mnist/lenet_train_test.prototxt" > "$out/lenet.prototxt"
sed -e "s#^net: .*#net: \"$out/lenet.prototxt\"#; s#^test_interval: .*#test_interval: 100000#; s#^snapshot: .*#snapshot: 0#" \
  "$caffe/examples/mnist/lenet_solver.prototxt" > "$out/solver.prototxt"
printf 'random_seed: 1701\ntest_initialization: false\nsnapshot_after_train: false\n' >> "$out/solver.prototxt"
# Compiled as Caffe's own tools are: blobrt-caffe's headers ahead of the checkout's.
g++ -std=c++17 -O2 -DBLOBRT_CAFFE_PORTABLE -DCPU_ONLY -DUSE_LMDB -DUSE_HDF5 -I/usr/include/hdf5/serial $(pkg-config --cflags blobrt-caffe) \
  -I"$caffe/include" -I"$build/include" "$here/traffic.cpp" -o "$out/traffic" \
  -L"$build/lib" -Wl,-rpath,"$build/lib" -lcaffe $(pkg-config --libs blobrt-caffe) -lboost_system -lpthread
GLOG_minloglevel=1 "$out/traffic" "$out/solver.prototxt"
