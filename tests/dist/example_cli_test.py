#!/usr/bin/env python3
"""The MPI examples' command lines (blobrt-caffe-mlp, blobrt-dp-sgd): --help exits 0 and
documents the exit codes, --version names blobrt's version, and a bad option, a missing
value or an out-of-range value exits 2 with one line naming it, before MPI starts (no
MPI_Abort noise).

usage: example_cli_test.py VERSION EXAMPLE...
"""
import os
import subprocess
import sys

version, examples = sys.argv[1], sys.argv[2:]
failures = []


def run(example, *args):
    return subprocess.run([example, *args], capture_output=True, text=True, timeout=60)


def check(ok, what, p):
    if not ok:
        failures.append("%s\n  rc=%d\n  stdout: %s\n  stderr: %s" % (what, p.returncode, p.stdout, p.stderr))


for example in examples:
    name = os.path.basename(example)
    p = run(example, "--help")
    check(p.returncode == 0 and "--batch" in p.stdout and "Exit codes:" in p.stdout
          and "2 usage error" in p.stdout, "%s --help: exit 0, options and exit codes" % name, p)
    p = run(example, "--version")
    check(p.returncode == 0 and p.stdout.strip() == "%s %s" % (name, version), "%s --version" % name, p)
    for args, named in ((["--bogus", "3"], "--bogus"), (["--batch"], "--batch"),
                        (["--steps", "0"], "--steps"), (["--lr", "fast"], "--lr")):
        p = run(example, *args)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and lines and named in lines[0] and name in lines[0] and len(lines[0]) < 160
              and "MPI_Abort" not in p.stderr and "MPI" not in p.stdout,
              "%s %s: exit 2, one short line naming %s, no MPI" % (name, " ".join(args), named), p)
    p = run(example, "--steps", "0")
    check("not in range 1 to 2147483647" in p.stderr, "%s --steps 0 names the range" % name, p)

if failures:
    sys.exit("FAILED:\n" + "\n".join(failures))
print("example command lines: %d programs, --help, --version and 4 usage errors each" % len(examples))
