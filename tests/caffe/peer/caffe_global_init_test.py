"""caffe::GlobalInit (libblobrt-caffe) as a Caffe program meets it, through
caffe_global_init_probe: flags parsed by gflags, an uncaught blobrt::Error ending the program
as Caffe's CHECK does, blobrt's log through glog.

usage: caffe_global_init_test.py PROBE
"""
import re
import signal
import subprocess
import sys


def run(probe, *args, env=None):
    return subprocess.run([probe, *args], capture_output=True, text=True, timeout=60, env=env)


def main():
    probe = sys.argv[1]
    failures = []

    def check(name, ok, detail):
        print(("ok   " if ok else "FAIL ") + name)
        if not ok:
            failures.append(name)
            print("     " + detail.replace("\n", "\n     "))

    r = run(probe, "flags", "--iterations=7", "kept")
    check("flags: gflags parses --iterations and removes it from argv",
          r.returncode == 0 and "iterations=7 argc=3 flags kept" in r.stdout, r.stdout + r.stderr)

    r = run(probe, "flags", "--no_such_flag=1")
    check("flags: an unknown flag is gflags' error, exit 1",
          r.returncode == 1 and "no_such_flag" in r.stderr, f"rc {r.returncode}\n{r.stderr}")

    import os
    env = dict(os.environ, GLOG_logtostderr="1")
    r = run(probe, "throw", env=env)
    fatal = [line for line in r.stderr.splitlines() if re.match(r"F\d{4,8} ", line)]
    check("throw: the uncaught blobrt::Error ends through LOG(FATAL) with its message, SIGABRT",
          r.returncode == -signal.SIGABRT and fatal and "blobrt::Error" in fatal[0] and "outside [0, 2]" in fatal[0]
          and "terminate called after throwing" not in r.stderr,
          f"rc {r.returncode}\n{r.stderr[-2000:]}")

    r = run(probe, "log", env=env)
    check("log: blobrt's warning comes out as a glog WARNING line",
          r.returncode == 0 and re.search(r"^W\d{4,8} .*\] blobrt: a warning from blobrt$", r.stderr, re.M) is not None,
          f"rc {r.returncode}\n{r.stderr}")

    passed = 4 - len(failures)
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
