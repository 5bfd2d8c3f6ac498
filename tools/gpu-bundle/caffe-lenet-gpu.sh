#!/usr/bin/env bash
# BVLC Caffe's own `caffe` tool, built for CUDA on blobrt (docs/caffe-on-blobrt.md, "A CUDA
# build"; bundled by tools/gpu-bundle.sh when CAFFE_CUDA_BUILD names such a build), trains
# LeNet in CPU mode and in GPU mode (Caffe's .cu layers on blobrt's CUDA memory) from the same
# seed, on DummyData (no data set to carry); the GPU run's losses must follow the CPU run's.
# Then `caffe time` of LeNet in GPU mode.
#   caffe-lenet-gpu.sh CAFFE OUTDIR [--layer-plugin] [--backend NAME]
#   (exit 0 passed, 1 failed, 77 no usable device of that backend)
# --layer-plugin: CAFFE is a portable build (docs/caffe-on-blobrt.md, "Caffe's own CUDA kernels
# on GPU nodes"); its GPU run must load the Caffe-layers CUDA plugin beside its libcaffe and
# run every layer's GPU methods on the device (none of LeNet's layers on its CPU code).
# --backend NAME: both runs on blobrt's backend NAME (default cuda). Any other backend needs a
# portable build (docs/caffe-on-blobrt.md, "One build for every node"), whose GPU mode runs
# blobrt-caffe's layer kernels through the backend's operations: on opencl, the GPU's own
# OpenCL driver; every LeNet layer must run on the device there too.
# The losses: the first equal to 1e-5 relative (same data, same initial weights), each later
# one within 5 % relative or 0.02 absolute (cuBLAS or CLBlast and BLIS sum in different orders, and
# 100 SGD steps carry the differences forward). OUTDIR gets the prototxts, both logs,
# losses-cpu.txt, losses-gpu.txt and time-gpu.txt.
set -uo pipefail

usage="usage: caffe-lenet-gpu.sh CAFFE OUTDIR [--layer-plugin] [--backend NAME]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
caffe=$1
out=$2
shift 2
layer_plugin=""
backend=cuda
while [ $# -gt 0 ]; do
  case "$1" in
    --layer-plugin) layer_plugin=1; shift ;;
    --backend) [ $# -ge 2 ] && [ -n "$2" ] || { echo "$usage" >&2; exit 2; }; backend=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
if [ -n "$layer_plugin" ] && [ "$backend" != cuda ]; then
  echo "caffe-lenet-gpu.sh: --layer-plugin is the cuda backend's (not $backend)" >&2; exit 2
fi
# Where every layer must run on the device (the CUDA layers plugin, or another backend's
# kernels), blobrt's log says which plugin loaded and where each GPU method ran.
on_device=""
{ [ -n "$layer_plugin" ] || [ "$backend" != cuda ]; } && on_device=1
log_level=${on_device:+info}
mkdir -p "$out"
missing=$(ldd "$caffe" 2>/dev/null | awk '/not found/ { print $1 }' | xargs)
if [ -n "$missing" ]; then
  echo "skipped: this node lacks libraries Caffe's HDF5 needs and the bundle leaves to the node: $missing"
  exit 77
fi
if ! BLOBRT_BACKEND=$backend blobrt info > "$out/$backend-check.log" 2>&1; then
  echo "skipped: no usable $backend device: $(grep -m 1 -o 'cannot be used: .*' "$out/$backend-check.log" || tail -n 1 "$out/$backend-check.log")"
  exit 77
fi

cat > "$out/lenet.prototxt" <<'EOF'
name: "LeNet"
layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param {
    shape { dim: 64 dim: 1 dim: 28 dim: 28 } shape { dim: 64 }
    data_filler { type: "gaussian" std: 1 } data_filler { type: "uniform" min: 0 max: 9.99 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  convolution_param { num_output: 20 kernel_size: 5 weight_filler { type: "xavier" } } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
  convolution_param { num_output: 50 kernel_size: 5 weight_filler { type: "xavier" } } }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1"
  inner_product_param { num_output: 500 weight_filler { type: "xavier" } } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
  inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
EOF

train() {  # MODE (CPU|GPU)
  local mode=$1
  cat > "$out/solver-$mode.prototxt" <<EOF
net: "$out/lenet.prototxt"
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
lr_policy: "inv"
gamma: 0.0001
power: 0.75
display: 10
max_iter: 100
random_seed: 1701
solver_mode: $mode
EOF
  (cd "$out" && GLOG_logtostderr=1 BLOBRT_BACKEND=$backend BLOBRT_LOG=${log_level:-${BLOBRT_LOG:-warn}} "$caffe" train \
    --solver="$out/solver-$mode.prototxt" > "$out/train-$mode.log" 2>&1)
  local status=$?
  # A loss of nan or inf is kept as such (and then differs from any number).
  sed -n 's/.*Iteration \([0-9]*\).*, loss = \([-+0-9.eEnaifNAIF]*\).*/\1 \2/p' "$out/train-$mode.log" \
    > "$out/losses-$mode.txt"
  return $status
}

status=0
train CPU || { echo "FAIL: caffe train in CPU mode exited non-zero"; tail -5 "$out/train-CPU.log"; status=1; }
train GPU || { echo "FAIL: caffe train in GPU mode exited non-zero"; tail -5 "$out/train-GPU.log"; status=1; }
if [ "$status" -eq 0 ]; then
  paste "$out/losses-CPU.txt" "$out/losses-GPU.txt" | awk '
    { n++; rel = ($2 == 0) ? 0 : ($4 - $2) / $2; if (rel < 0) rel = -rel; abs = $4 - $2; if (abs < 0) abs = -abs
      finite = ($2 ~ /^[-+0-9.eE]+$/) && ($4 ~ /^[-+0-9.eE]+$/)
      ok = finite && ((n == 1) ? rel <= 1e-5 : (rel <= 0.05 || abs <= 0.02))
      printf "iteration %4d  CPU %-10s GPU %-10s %s\n", $1, $2, $4, ok ? "ok" : "DIFFERS"; if (!ok || $1 != $3) bad = 1 }
    END { if (n < 10) { print "too few losses: " n; bad = 1 }; exit bad }' || status=1
fi
if [ -n "$on_device" ] && [ "$status" -eq 0 ]; then
  if [ -n "$layer_plugin" ] && ! grep -q "Caffe-layers plugin .*libcaffe-layers-cuda.so: loaded: " "$out/train-GPU.log"; then
    echo "FAIL: the GPU run did not load the Caffe-layers CUDA plugin:"
    grep -m 5 -E "Caffe-layers plugin|no Caffe-layers" "$out/train-GPU.log"
    status=1
  elif grep -q "_gpu on $backend:[0-9]*: CPU code" "$out/train-GPU.log"; then
    echo "FAIL: layers ran their CPU code in GPU mode:"
    grep "_gpu on $backend:[0-9]*: CPU code" "$out/train-GPU.log" | sed 's/.*caffe: /  /' | sort -u
    status=1
  elif ! grep -q "_gpu on $backend:[0-9]*: " "$out/train-GPU.log"; then
    # No line at all would pass the check above without a layer on the device.
    echo "FAIL: blobrt's log names no layer's GPU method on $backend (was GPU mode on another backend?)"
    status=1
  else
    [ -n "$layer_plugin" ] && grep -m 1 -o "Caffe-layers plugin .*" "$out/train-GPU.log"
    echo "every LeNet layer's GPU methods ran on $(grep -m 1 -o "_gpu on $backend:[0-9]*" "$out/train-GPU.log" | sed 's/.* on //')"
  fi
fi
(cd "$out" && GLOG_logtostderr=1 BLOBRT_BACKEND=$backend "$caffe" time --model="$out/lenet.prototxt" --gpu=0 \
  --iterations=50 > "$out/time-GPU.log" 2>&1) || { echo "FAIL: caffe time --gpu=0"; status=1; }
grep -E "Average Forward pass|Average Backward pass|Average Forward-Backward" "$out/time-GPU.log" | sed 's/.*\] //' \
  | tee "$out/time-gpu.txt"
[ "$status" -eq 0 ] && echo "passed: Caffe's LeNet in GPU mode follows the CPU run on blobrt's $backend backend${layer_plugin:+, through the Caffe-layers CUDA plugin}"
exit "$status"
