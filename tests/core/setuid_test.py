#!/usr/bin/env python3
"""Environment variables are ignored in setuid processes: a real setuid-root copy of a
program using libblobrt, run by another user, must not search BLOBRT_PLUGIN_PATH, and the
plugin code it loads (in the scanner child and in process) must see a scrubbed
environment, not the caller's OCL_ICD_VENDORS, HOME or PATH; a setuid program using
libblobrt-dist must not load the library BLOBRT_DIST_NCCL names.
usage: setuid_test.py SETUID_PROBE SCANNER ENVREPORT_PLUGIN [SETUID_DIST_PROBE]
(exit 77 = skipped: needs root and setpriv)"""
import os
import shutil
import subprocess
import sys
import tempfile

probe, scanner, envreport = sys.argv[1:4]
dist_probe = sys.argv[4] if len(sys.argv) > 4 else None
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


def setuid_copy(program):
    copy = os.path.join(work, os.path.basename(program))
    shutil.copy(program, copy)
    os.chown(copy, 0, 0)
    os.chmod(copy, 0o755)
    return copy


copy = setuid_copy(probe)
# What the caller sets: each would make a privileged process load or write what it names.
caller_env = {"PATH": f"{evil}:/usr/bin:/bin", "HOME": evil, "LANG": "C.UTF-8",
              "OCL_ICD_VENDORS": evil, "BLOBRT_OPENCL_KERNELS": "clblast",
              "BLOBRT_DIST_NCCL": os.path.join(evil, "libevil.so"), "BLOBRT_DIST_BUCKET_BYTES": "4096",
              "BLOBRT_PLUGIN_PATH": evil, "BLOBRT_LOG": "debug", "BLOBRT_PLUGIN_SYSTEM_PATH": evil,
              "BLOBRT_LOG_FILE": os.path.join(evil, "log"),
              "BLOBRT_PLUGIN_CACHE": "off"}


def run_as_nobody(program, **extra):
    env = dict(caller_env, **extra)
    return subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", program],
                          env=env, capture_output=True, text=True, timeout=120)


plain = run_as_nobody(copy)
if plain.returncode != 0:
    print(f"skipped: the probe cannot run as nobody here ({plain.stderr.strip()[:200]})")
    sys.exit(77)
check("environment_ignored=0" in plain.stdout and evil in plain.stdout,
      "without setuid, BLOBRT_PLUGIN_PATH is searched (control)", plain.stdout)

os.chmod(copy, 0o4755)
secure = run_as_nobody(copy)
check(secure.returncode == 0, "the setuid copy runs", secure.stderr)
check("environment_ignored=1" in secure.stdout, "the setuid copy reports the environment ignored", secure.stdout)
check(evil not in secure.stdout, "the setuid copy does not search BLOBRT_PLUGIN_PATH", secure.stdout)
check("installed" in secure.stdout, "the setuid copy searches only the installed plugins.d", secure.stdout)
check("[debug]: " not in secure.stderr and "[info]: " not in secure.stderr, "BLOBRT_LOG is ignored too",
      secure.stderr)
check(not os.path.exists(os.path.join(evil, "log")), "BLOBRT_LOG_FILE is ignored too")
check(f"own: OCL_ICD_VENDORS=(unset) HOME=(unset) PATH=/usr/local/sbin:" in secure.stdout and
      "LANG=C.UTF-8" in secure.stdout,
      "after discovery the setuid process's own environment is scrubbed (locale kept)", secure.stdout)

# Plugin code under setuid: a plugin in the plugins.d next to libblobrt (the only place
# besides the installed one that a setuid process searches) reports what it sees, first
# probed in the scanner child (a copy next to libblobrt), then in process (no scanner).
libdir = os.path.dirname(os.path.realpath(os.path.join(os.path.dirname(probe), "..", "core", "libblobrt.so")))
beside = os.path.join(libdir, "blobrt")
if os.path.exists(beside):
    print(f"skipped the plugin checks: {beside} exists already")
else:
    try:
        plugins = os.path.join(beside, "plugins.d")
        os.makedirs(plugins, mode=0o755)
        os.chmod(beside, 0o755)
        shutil.copy(envreport, os.path.join(plugins, "libtest-envreport.so"))
        with open(os.path.join(plugins, "envreport.plugin"), "w") as f:
            f.write("name = envreport\nlibrary = libtest-envreport.so\nabi = 1.0\npriority = 1\n")
        control_env = {"BLOBRT_PLUGIN_SYSTEM_PATH": plugins}
        os.chmod(copy, 0o755)
        shutil.copy(scanner, os.path.join(beside, "blobrt-plugin-scanner"))
        seen = run_as_nobody(copy, **control_env)
        check(f"OCL_ICD_VENDORS={evil} HOME={evil}" in seen.stdout and "kit BLOBRT_OPENCL_KERNELS=clblast." in seen.stdout,
              "without setuid the plugin sees the caller's variables (control)", seen.stdout + seen.stderr)
        os.chmod(copy, 0o4755)
        for how in ("in the scanner child", "in process"):
            seen = run_as_nobody(copy)
            own_pid = next((line.split()[-1] for line in seen.stdout.splitlines() if line.startswith("own pid ")), "?")
            check("plugin=envreport" in seen.stdout and (f"pid {own_pid} env:" in seen.stdout) == (how == "in process"),
                  f"setuid: the plugin was probed {how}", seen.stdout + seen.stderr)
            check("OCL_ICD_VENDORS=(unset) HOME=(unset) PATH=/usr/local/sbin:" in seen.stdout
                  and "LANG=C.UTF-8 kit BLOBRT_OPENCL_KERNELS=." in seen.stdout and evil not in seen.stdout,
                  f"setuid: plugin code probed {how} sees the scrubbed environment", seen.stdout + seen.stderr)
            if how == "in the scanner child":
                os.unlink(os.path.join(beside, "blobrt-plugin-scanner"))
    finally:
        shutil.rmtree(beside, ignore_errors=True)

if dist_probe:
    dist_copy = setuid_copy(dist_probe)
    plain = run_as_nobody(dist_copy)
    check(f"nccl_path={evil}/libevil.so" in plain.stdout and "bucket_bytes=4096 (BLOBRT_DIST_BUCKET_BYTES)" in plain.stdout,
          "without setuid, BLOBRT_DIST_NCCL and BLOBRT_DIST_BUCKET_BYTES are used (control)", plain.stdout + plain.stderr)
    os.chmod(dist_copy, 0o4755)
    secure = run_as_nobody(dist_copy)
    check(secure.returncode == 0 and "nccl_path=" in secure.stdout and evil not in secure.stdout,
          "setuid: libblobrt-dist ignores BLOBRT_DIST_NCCL", secure.stdout + secure.stderr)
    check(f"bucket_bytes={25 << 20} (default)" in secure.stdout,
          "setuid: libblobrt-dist ignores BLOBRT_DIST_BUCKET_BYTES", secure.stdout + secure.stderr)

shutil.rmtree(work)
shutil.rmtree(evil)
print(f"setuid: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
