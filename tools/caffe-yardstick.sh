#!/usr/bin/env bash
# Caffe's own yardstick for blobrt: `caffe time` (forward + backward, Caffe's own timer) of the
# same nets with two builds of Caffe's `caffe` tool, alternating, in one run:
#   BVLC_CAFFE    BVLC Caffe as it is (its blob.cpp, syncedmem.cpp, math_functions.cpp on OpenBLAS)
#   BLOBRT_CAFFE  the same Caffe sources built on blobrt (docs/caffe-on-blobrt.md)
# Nets: LeNet's MLP (784-500-10, batch 64), LeNet (batch 64) and, where CAFFE_SRC is given,
# CaffeNet (Caffe's models/bvlc_reference_caffenet/deploy.prototxt, batch 10, with backward).
# The MLP and LeNet read DummyData, so no data set is needed.
#
# usage: tools/caffe-yardstick.sh BVLC_CAFFE BLOBRT_CAFFE [CAFFE_SRC] [ROUNDS]
# Prints, per net, each round's two "Average Forward-Backward" times and the median ratio
# blobrt / BVLC (below 1: blobrt faster). BLOBRT_BACKEND (default blis) picks blobrt's
# backend; both programs run with each library's default threads.
set -euo pipefail

if [ $# -lt 2 ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
bvlc=$(realpath "$1")
blobrt=$(realpath "$2")
caffe_src=${3:-}
rounds=${4:-5}
for program in "$bvlc" "$blobrt"; do
  [ -x "$program" ] || { echo "caffe-yardstick: $program is not an executable" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# What both nets start with: images and labels from DummyData (label 3: any valid class).
dummy_input() {
  cat <<EOF
layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param {
    shape { dim: $1 dim: 1 dim: 28 dim: 28 } shape { dim: $1 }
    data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 3 } } }
EOF
}
inner_product() {  # NAME BOTTOM OUTPUTS
  cat <<EOF
layer { name: "$1" type: "InnerProduct" bottom: "$2" top: "$1"
  inner_product_param { num_output: $3 weight_filler { type: "xavier" } bias_filler { type: "constant" } } }
EOF
}
classifier_tail() {  # BOTTOM
  inner_product ip1 "$1" 500
  cat <<EOF
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
EOF
  inner_product ip2 ip1 10
  cat <<EOF
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
EOF
}

{
  echo 'name: "LeNetMLP"'
  dummy_input 64
  classifier_tail data
} > "$work/mlp.prototxt"

{
  echo 'name: "LeNet"'
  dummy_input 64
  cat <<EOF
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  convolution_param { num_output: 20 kernel_size: 5 stride: 1 weight_filler { type: "xavier" } } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
  convolution_param { num_output: 50 kernel_size: 5 stride: 1 weight_filler { type: "xavier" } } }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
EOF
  classifier_tail pool2
} > "$work/lenet.prototxt"

nets=("mlp:200" "lenet:50")
if [ -n "$caffe_src" ]; then
  deploy="$caffe_src/models/bvlc_reference_caffenet/deploy.prototxt"
  [ -f "$deploy" ] || { echo "caffe-yardstick: no $deploy" >&2; exit 2; }
  # Batch 10 as in Caffe's file; force_backward so that `caffe time` times the backward too.
  { echo "force_backward: true"; cat "$deploy"; } > "$work/caffenet.prototxt"
  nets+=("caffenet:5")
fi

time_one() {  # PROGRAM NET ITERATIONS: the time, or nothing (the run's log is in $work/last.log)
  (cd "$work" && GLOG_logtostderr=1 "$1" time --model="$work/$2.prototxt" --iterations="$3" > "$work/last.log" 2>&1) ||
    true
  awk '/Average Forward-Backward:/ { print $(NF-1) }' "$work/last.log"
}

export BLOBRT_BACKEND="${BLOBRT_BACKEND:-blis}"
echo "caffe time, ms per forward-backward; blobrt on $BLOBRT_BACKEND; $rounds alternating rounds"
for entry in "${nets[@]}"; do
  net=${entry%%:*}
  iterations=${entry##*:}
  ratios=()
  for round in $(seq "$rounds"); do
    for side in bvlc blobrt; do
      program=$bvlc
      [ "$side" = blobrt ] && program=$blobrt
      t=$(time_one "$program" "$net" "$iterations")
      if [ -z "$t" ]; then
        echo "caffe-yardstick: $net: $program printed no time; the end of its output:" >&2
        tail -n 15 "$work/last.log" >&2
        exit 1
      fi
      if [ "$side" = bvlc ]; then a=$t; else b=$t; fi
    done
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')
    ratios+=("$ratio")
    printf '%-9s round %d: BVLC %8.2f  blobrt %8.2f  ratio %s\n' "$net" "$round" "$a" "$b" "$ratio"
  done
  median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  printf '%-9s median ratio blobrt / BVLC: %s\n' "$net" "$median"
done
