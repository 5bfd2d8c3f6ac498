#!/usr/bin/env bash
# BVLC Caffe's LeNet (examples/mnist/lenet_train_test.prototxt, lenet_solver.prototxt's
# settings, 100 iterations from seed 1701) trained through Caffe's own pycaffe with blobrt's
# one line (train.py) on 1 rank x batch 128, 2 x 64 and 4 x 32, on synthetic MNIST-shaped
# LMDBs; prints each run's time per iteration and blobrt's overlap line, and fails when the
# 2- or 4-rank weights are not the 1-rank ones (compare.py).
#   tools/caffe-data-parallel/lenet.sh CAFFE_CHECKOUT OUTDIR     (BLOBRT_BACKEND picks the backend)
# CAFFE_CHECKOUT: Caffe built on blobrt with pycaffe and blobrt's data_parallel_entry.cpp
# (docs/dist.md, "Caffe across ranks"). Needs mpirun, python3 with numpy, protobuf, lmdb,
# scikit-image (pycaffe's imports) and blobrt's Python package on PYTHONPATH or installed.
# PYTHON (default python3): the interpreter pycaffe was built for.
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
caffe=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
[ -f "$caffe/python/caffe/_caffe.so" ] || { echo "lenet.sh: $caffe has no pycaffe (make pycaffe there)" >&2; exit 2; }
# Written whole or not at all: an interrupted earlier write is redone.
if [ ! -f "$out/lmdb.done" ]; then
  rm -rf "$out/train_lmdb" "$out/test_lmdb"
  "$python" "$here/make_lmdb.py" "$caffe" "$out"
  touch "$out/lmdb.done"
fi
export PYTHONPATH="$caffe/python${PYTHONPATH:+:$PYTHONPATH}"
backend=${BLOBRT_BACKEND:-auto}
echo "LeNet, 100 iterations, global batch 128, on $backend"
for spec in 1:128 2:64 4:32; do
  ranks=${spec%%:*} batch=${spec##*:}
  sed -e "s#examples/mnist/mnist_train_lmdb#$out/train_lmdb#; s#examples/mnist/mnist_test_lmdb#$out/test_lmdb#" \
      -e "0,/batch_size: 64/s//batch_size: $batch/" "$caffe/examples/mnist/lenet_train_test.prototxt" > "$out/net-$ranks.prototxt"
  # Caffe's own lenet_solver.prototxt, with this run's net, length and seed, and no tests or snapshots.
  sed -e "s#^net: .*#net: \"$out/net-$ranks.prototxt\"#; s#^test_iter: .*#test_iter: 10#; s#^test_interval: .*#test_interval: 100000#" \
      -e "s#^display: .*#display: 20#; s#^max_iter: .*#max_iter: 100#; s#^snapshot: .*#snapshot: 0#; s#^solver_mode: .*#solver_mode: CPU#" \
      "$caffe/examples/mnist/lenet_solver.prototxt" > "$out/solver-$ranks.prototxt"
  printf 'random_seed: 1701\ntest_initialization: false\nsnapshot_after_train: false\n' >> "$out/solver-$ranks.prototxt"
  GLOG_logtostderr=1 BLOBRT_LOG=info mpirun --allow-run-as-root --oversubscribe -np "$ranks" \
    -x PYTHONPATH -x GLOG_logtostderr -x BLOBRT_LOG -x BLOBRT_BACKEND="$backend" \
    "$python" "$here/train.py" "$out/solver-$ranks.prototxt" "$out/lenet-$ranks.caffemodel" > "$out/train-$ranks.log" 2>&1 ||
    { echo "lenet.sh: the $ranks-rank run failed; the end of $out/train-$ranks.log:" >&2; tail -n 15 "$out/train-$ranks.log" >&2; exit 1; }
  grep -h "^RESULT" "$out/train-$ranks.log" ||
    { echo "lenet.sh: the $ranks-rank run printed no RESULT line; see $out/train-$ranks.log" >&2; exit 1; }
  grep -ho "caffe data-parallel: [0-9]* iterations.*" "$out/train-$ranks.log" || true
done
status=0
for ranks in 2 4; do
  printf '%d ranks against 1: ' "$ranks"
  "$python" "$here/compare.py" "$caffe" "$out/lenet-1.caffemodel" "$out/lenet-$ranks.caffemodel" || status=1
done
exit $status
