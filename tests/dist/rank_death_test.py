#!/usr/bin/env python3
"""A rank killed mid-training ends the whole job promptly: mpirun exits non-zero long
before its own --timeout, and no rank finishes. usage: rank_death_test.py MPIRUN PROBE"""
import subprocess
import sys
import time

mpirun, probe = sys.argv[1:3]
cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "--timeout", "120",
       "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none",
       "-np", "4", probe, "2"]
start = time.monotonic()
p = subprocess.run(cmd, capture_output=True, text=True, timeout=200)
elapsed = time.monotonic() - start
out = p.stdout + p.stderr
ok = True
if p.returncode == 0:
    print("FAIL: mpirun exited 0 although rank 2 was killed"); ok = False
if elapsed > 60:
    print("FAIL: the job took %.0f s to end (the other ranks waited)" % elapsed); ok = False
if "finished all steps" in out:
    print("FAIL: a rank ran to completion"); ok = False
if not ok:
    print(out[-3000:])
    sys.exit(1)
print("rank death: job ended in %.1f s with status %d" % (elapsed, p.returncode))
