#!/usr/bin/env python3
"""Every rank's backward throws with layer-wise buckets queued (a different number on each
rank) and the program leaves: the job must end within a deadline with each rank's error,
not hang with one rank inside a bucket's collective and the other in MPI_Finalize (issue 48).
usage: layerwise_abandon_test.py MPIRUN PROBE"""
import subprocess
import sys
import time

mpirun, probe = sys.argv[1:3]
DEADLINE = 45  # seconds; the job takes about one here
cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "--timeout", "90",
       "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none",
       "-np", "2", "-x", "BLOBRT_BACKEND=host", probe]
start = time.monotonic()
p = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
elapsed = time.monotonic() - start
out = p.stdout + p.stderr
ok = True
if elapsed > DEADLINE:
    print("FAIL: the job took %.0f s to end (a rank was left waiting)" % elapsed); ok = False
if p.returncode == 0:
    print("FAIL: mpirun exited 0 although every rank's training failed"); ok = False
for rank, layers in ((0, 4), (1, 1)):
    line = "rank %d: training stopped: backward failed after %d layers" % (rank, layers)
    if line not in out:
        print("FAIL: missing %r" % line); ok = False
if not ok:
    print(out[-3000:])
    sys.exit(1)
print("abandoned iteration: job ended in %.1f s with status %d" % (elapsed, p.returncode))
