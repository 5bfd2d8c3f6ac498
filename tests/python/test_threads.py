"""Python threads sharing one Blob: the worst outcome is an exception or a consistent
result, never a crash (the GIL is released during the math while another thread may
replace the memory). Each race runs in a child interpreter under a time limit, so that a
crash fails the test instead of killing pytest."""
import os
import subprocess
import sys
import textwrap

import pytest

SECONDS = 2.0

PRELUDE = """
import sys, threading, time
import numpy as np
import blobrt
blobrt.select_backend(sys.argv[1])
stop = time.monotonic() + float(sys.argv[2])
failures = []

def loop(body):
    def run():
        try:
            i = 0
            while time.monotonic() < stop:
                body(i)
                i += 1
        except Exception as e:  # an exception must be blobrt.Error, never anything stranger
            if not isinstance(e, blobrt.Error):
                failures.append(repr(e))
    return threading.Thread(target=run)

def run_all(*bodies):
    threads = [loop(b) for b in bodies]
    for t in threads: t.start()
    for t in threads: t.join()
    assert not failures, failures[:3]
    print("ok")
"""

RACES = {
    # The reviewer's case: the sum reads while the other thread grows and shrinks the Blob.
    "asum_while_reshaping": """
b = blobrt.Blob((16,))
def grow(i):
    n = 1 + (i * 7919) % 200000
    b.reshape(n)
    b.data[...] = 1
def total(i):
    s = b.asum_data()
    assert s == int(s) and 0 <= s <= 200000, s  # a count of ones, never garbage
run_all(grow, total, total)
""",
    # Every operation at once, on one Blob, its diff, a Blob sharing its memory and a copy.
    "everything_at_once": """
a = blobrt.Blob((64,), dtype=np.float64)
b = blobrt.Blob((64,), dtype=np.float64)
c = blobrt.Blob((1,), dtype=np.float64)
def reshape(i): a.reshape(1 + (i * 31) % 5000); a.diff[...] = 0.5
def share(i): b.share_data(a) if i % 2 else b.share_diff(a)
def math(i): a.asum_data(); b.sumsq_diff(); a.scale_data(1.0); b.update()
def views(i): v = a.data; v[...] = 2; b.diff.sum(); a.shape; b.count
def copies(i): c.copy_from(a, reshape=True); c.copy_from(b, copy_diff=True, reshape=True); c.asum_diff()
run_all(reshape, share, math, views, copies)
""",
}


@pytest.mark.parametrize("race", sorted(RACES))
def test_threads_racing_on_one_blob_never_crash(device: str, race: str) -> None:
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(RACES[race])
    r = subprocess.run([sys.executable, "-c", code, device, str(SECONDS)], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ))
    assert r.returncode == 0 and r.stdout.strip() == "ok", \
        "exit %d (a negative exit is the signal that killed it)\n%s" % (r.returncode, r.stderr[-3000:])
