#!/usr/bin/env python3
"""Environment variables are ignored in setuid processes: a real setuid-root copy of a
program using libblobrt, run by another user, must not search BLOBRT_PLUGIN_PATH.
usage: setuid_test.py SETUID_PROBE     (exit 77 = skipped: needs root and setpriv)"""
import os
import shutil
import subprocess
import sys
import tempfile

probe = sys.argv[1]
if os.geteuid() != 0 or not shutil.which("setpriv"):
    print("skipped: needs root and setpriv to make a setuid binary and run it as another user")
    sys.exit(77)

passed = failed = 0


def check(cond, what, output=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}\n{output}")


evil = tempfile.mkdtemp(prefix="blobrt_evil_")
work = tempfile.mkdtemp(prefix="blobrt_setuid_")
os.chmod(work, 0o755)
copy = os.path.join(work, "setuid_probe")
shutil.copy(probe, copy)
os.chown(copy, 0, 0)


def run_as_nobody():
    env = {"PATH": "/usr/bin:/bin", "BLOBRT_PLUGIN_PATH": evil, "BLOBRT_LOG": "debug",
           "BLOBRT_PLUGIN_SYSTEM_PATH": evil}
    return subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", copy],
                          env=env, capture_output=True, text=True)


os.chmod(copy, 0o755)
plain = run_as_nobody()
if plain.returncode != 0:
    print(f"skipped: the probe cannot run as nobody here ({plain.stderr.strip()[:200]})")
    sys.exit(77)
check("environment_ignored=0" in plain.stdout and evil in plain.stdout,
      "without setuid, BLOBRT_PLUGIN_PATH is searched (control)", plain.stdout)

os.chmod(copy, 0o4755)
secure = run_as_nobody()
check(secure.returncode == 0, "the setuid copy runs", secure.stderr)
check("environment_ignored=1" in secure.stdout, "the setuid copy reports the environment ignored", secure.stdout)
check(evil not in secure.stdout, "the setuid copy does not search BLOBRT_PLUGIN_PATH", secure.stdout)
check("installed" in secure.stdout, "the setuid copy searches only the installed plugins.d", secure.stdout)
check("blobrt[" not in secure.stderr, "BLOBRT_LOG is ignored too", secure.stderr)

shutil.rmtree(work)
shutil.rmtree(evil)
print(f"setuid: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
