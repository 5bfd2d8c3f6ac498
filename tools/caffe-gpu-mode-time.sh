#!/usr/bin/env bash
# Caffe's GPU mode on blobrt's backends against its CPU mode: `caffe time` of CaffeNet
# (Caffe's models/bvlc_reference_caffenet/deploy.prototxt, batch 10, force_backward) with one
# `caffe` tool built the portable way (docs/caffe-on-blobrt.md), alternating in one run:
#   CPU mode on blis (Caffe's CPU code), GPU mode on opencl (blobrt's layer operations in
#   OpenCL kernels, gemms by CLBlast), GPU mode on blis (the same operations in the host kernels)
#
# usage: tools/caffe-gpu-mode-time.sh CAFFE CAFFE_SRC [ROUNDS] [ITERATIONS]
# Prints each round's "Average Forward-Backward" per run, then the last round's layers whose
# forward + backward took the most on opencl, beside the CPU mode's. BLOBRT_PLUGIN_PATH and
# the library path must find blobrt and its plugins (an installed prefix).
set -euo pipefail

if [ $# -lt 2 ]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
caffe=$(realpath "$1")
deploy="$2/models/bvlc_reference_caffenet/deploy.prototxt"
rounds=${3:-2}
iterations=${4:-3}
[ -x "$caffe" ] || { echo "caffe-gpu-mode-time: $caffe is not an executable" >&2; exit 2; }
[ -f "$deploy" ] || { echo "caffe-gpu-mode-time: no $deploy" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{ echo "force_backward: true"; cat "$deploy"; } > "$work/caffenet.prototxt"

runs=("blis cpu" "opencl gpu" "blis gpu")
run_one() {  # BACKEND MODE: the run's log in $work/BACKEND-MODE.log, its average on stdout
  local gpu=()
  [ "$2" = gpu ] && gpu=(--gpu 0)
  (cd "$work" && BLOBRT_BACKEND=$1 GLOG_logtostderr=1 "$caffe" time --model="$work/caffenet.prototxt" \
    --iterations="$iterations" "${gpu[@]}" > "$work/$1-$2.log" 2>&1) || true
  awk '/Average Forward-Backward:/ { print $(NF-1) }' "$work/$1-$2.log"
}

echo "CaffeNet (batch 10), caffe time, ms per forward-backward, $iterations iterations, $rounds alternating rounds"
for round in $(seq "$rounds"); do
  line="round $round:"
  for run in "${runs[@]}"; do
    set -- $run
    line+=" $1 $2 mode $(run_one "$1" "$2" || echo failed);"
  done
  echo "$line"
done

# Per layer (the last round): forward + backward, ms.
per_layer() {  # LOG: "layer ms" lines
  awk '/[a-z0-9_]+\t(forward|backward): [0-9.]+ ms/ {
         sub(/.*\] +/, ""); split($0, f, "\t"); split(f[2], t, " "); sum[f[1]] += t[2]
       } END { for (l in sum) printf "%s %.2f\n", l, sum[l] }' "$1"
}
echo "layers, forward + backward (ms): opencl GPU mode / blis CPU mode / blis GPU mode"
per_layer "$work/blis-cpu.log" | sort > "$work/cpu.txt"
per_layer "$work/blis-gpu.log" | sort > "$work/bgpu.txt"
per_layer "$work/opencl-gpu.log" | sort -k2 -rn | sed -n 1,8p | while read -r layer ms; do
  echo "  $layer: $ms / $(awk -v l="$layer" '$1 == l { print $2 }' "$work/cpu.txt") / $(awk -v l="$layer" '$1 == l { print $2 }' "$work/bgpu.txt")"
done
