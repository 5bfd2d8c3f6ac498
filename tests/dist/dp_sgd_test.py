#!/usr/bin/env python3
"""The data-parallel SGD example: 4 ranks with 16 samples each reach the weights of one
process with 64 samples (to float tolerance), on different backends.

usage: dp_sgd_test.py MPIRUN EXAMPLE BACKEND_FOR_4_RANKS
"""
import os
import subprocess
import sys
import tempfile

mpirun, example, backend4 = sys.argv[1:4]
MPI = [mpirun, "--allow-run-as-root", "--oversubscribe", "--timeout", "240",
       "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"]


def train(ranks, batch, backend, out):
    cmd = MPI + ["-np", str(ranks), "-x", "BLOBRT_BACKEND=" + backend, example,
                 "--steps", "150", "--batch", str(batch), "--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=280)
    if p.returncode != 0:
        sys.exit("FAILED: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    print(p.stdout.strip())
    with open(out) as f:
        return [float(line) for line in f]


with tempfile.TemporaryDirectory() as d:
    parallel = train(4, 16, backend4, os.path.join(d, "4x16"))
    serial = train(1, 64, "host", os.path.join(d, "1x64"))

bad = [(i, a, b) for i, (a, b) in enumerate(zip(parallel, serial)) if abs(a - b) > 1e-5 + 1e-4 * abs(b)]
if len(parallel) != len(serial) or bad:
    sys.exit("FAILED: 4 ranks x 16 and 1 x 64 differ at %s" % bad[:5])
# And it learned: w_true[j] = (j % 5) - 2, b_true = 0.5.
w0, b = serial[0], serial[-1]
if abs(w0 + 2) > 0.2 or abs(b - 0.5) > 0.1:
    sys.exit("FAILED: did not learn (w[0] = %g, b = %g)" % (w0, b))
print("dp_sgd: 4 ranks on %s = 1 rank on host, %d weights within 1e-4" % (backend4, len(serial)))
