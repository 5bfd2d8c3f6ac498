#!/usr/bin/env python3
"""The Caffe-style MLP example (examples/caffe_mlp.cpp), a Caffe-style Net and Solver made
data-parallel by blobrt::caffe::SolverDataParallel's one line: 4 ranks with 8 samples each
and 2 ranks with 16 reach the weights of one process with 32 (to float tolerance), in CPU
mode on one backend and in GPU mode on another, and it learns (the loss falls well below
ln 10).

usage: caffe_mlp_test.py MPIRUN EXAMPLE BACKEND_CPU_MODE BACKEND_GPU_MODE
"""
import os
import subprocess
import sys
import tempfile

mpirun, example, backend_cpu, backend_gpu = sys.argv[1:5]
MPI = [mpirun, "--allow-run-as-root", "--oversubscribe", "--timeout", "240",
       "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"]


def train(ranks, batch, backend, out, gpu):
    cmd = MPI + ["-np", str(ranks), "-x", "BLOBRT_BACKEND=" + backend, example,
                 "--steps", "40", "--batch", str(batch), "--out", out] + (["--gpu"] if gpu else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=280)
    if p.returncode != 0:
        sys.exit("FAILED: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    print(p.stdout.strip())
    with open(out) as f:
        return [float(line) for line in f]


with tempfile.TemporaryDirectory() as d:
    serial = train(1, 32, "host", os.path.join(d, "1x32"), False)
    runs = [("4 ranks on %s CPU mode" % backend_cpu, train(4, 8, backend_cpu, os.path.join(d, "cpu"), False)),
            ("4 ranks on %s GPU mode" % backend_gpu, train(4, 8, backend_gpu, os.path.join(d, "gpu"), True)),
            ("2 ranks on %s GPU mode" % backend_gpu, train(2, 16, backend_gpu, os.path.join(d, "gpu2"), True))]

if serial[0] > 0.5:
    sys.exit("FAILED: did not learn (loss %g after 40 steps; ln 10 = 2.3)" % serial[0])
for name, parallel in runs:
    # the first value is the last step's loss on rank 0's shard: not comparable
    bad = [(i, a, b) for i, (a, b) in enumerate(zip(parallel[1:], serial[1:]), 1)
           if abs(a - b) > 2e-5 + 1e-3 * abs(b)]
    if len(parallel) != len(serial) or bad:
        sys.exit("FAILED: %s and 1 rank x 32 on host differ at %s" % (name, bad[:5]))
    print("caffe_mlp: %s = 1 rank on host, %d weights" % (name, len(serial) - 1))
