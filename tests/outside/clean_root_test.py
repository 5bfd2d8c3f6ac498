#!/usr/bin/env python3
"""The README's quick start on a fresh Debian 12, as its reader has one: a clean root made
with mmdebstrap (minbase + python3, nothing else), the tree copied in, `tools/build.sh demo`
run in it as root with no network but Debian's mirror and PyPI (this machine's pip.conf and
CA bundle are copied in for PyPI, as for any node behind the same proxy). Checks that the
demo installs what it needs, builds, and shows `blobrt info` and the Caffe demo.

usage: clean_root_test.py SOURCE_ROOT WORK_DIR JUNIT_XML
Prints one line per check and "clean-root: N passed, N failed"; writes the checks as JUnit.
"""
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

root, work, junit = (os.path.abspath(a) for a in sys.argv[1:4])
results = []  # (name, ok, detail, seconds)


def check(ok, name, detail="", seconds=0.0):
    results.append((name, bool(ok), detail, seconds))
    print(("ok: " if ok else "FAIL: ") + name + (f" ({seconds:.0f} s)" if seconds else "")
          + ("" if ok or not detail else "\n" + detail[-4000:]), flush=True)
    return ok


def run(cmd, timeout=3600, **kw):
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    return p.returncode, p.stdout + p.stderr, time.monotonic() - start


mounts = []


def finish():
    for m in reversed(mounts):
        subprocess.run(["umount", "-l", m], capture_output=True)
    suite = ET.Element("testsuite", name="clean-root", tests=str(len(results)),
                       failures=str(sum(not ok for _, ok, _, _ in results)))
    for name, ok, detail, seconds in results:
        case = ET.SubElement(suite, "testcase", classname="clean_root", name=name, time=f"{seconds:.1f}")
        if not ok:
            ET.SubElement(case, "failure", message=name).text = detail[-4000:]
    ET.ElementTree(suite).write(junit, encoding="utf-8", xml_declaration=True)
    failed = sum(not ok for _, ok, _, _ in results)
    print(f"clean-root: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if os.geteuid() != 0 or shutil.which("mmdebstrap") is None:
    print("clean-root: needs root and mmdebstrap (ci/deps.sh installs it)")
    check(False, "root and mmdebstrap are there", f"euid {os.geteuid()}, mmdebstrap {shutil.which('mmdebstrap')}")
    finish()

# 1. A clean Debian 12 root: minbase and python3, as the README's reader starts from.
chroot_dir = os.path.join(work, "root")
for m in ("dev/pts", "dev", "proc", "sys"):  # left mounted by an interrupted run
    subprocess.run(["umount", "-l", os.path.join(chroot_dir, m)], capture_output=True)
shutil.rmtree(chroot_dir, ignore_errors=True)
os.makedirs(work, exist_ok=True)
rc, out, secs = run(["mmdebstrap", "--variant=minbase", "--include=python3", "--mode=root", "bookworm", chroot_dir])
if not check(rc == 0, "mmdebstrap makes a Debian 12 root (minbase + python3)", out, secs):
    finish()
rc, listing, _ = run(["chroot", chroot_dir, "dpkg-query", "-W", "-f", "${Package}\n"])
check(rc == 0 and "g++" not in listing.split() and "meson" not in listing.split(),
      "the root has no compiler and no meson before the demo", listing)

# 2. The tree as a clean clone has it (tracked and unignored files), and what the root
# needs to reach the network as this machine does.
src = os.path.join(chroot_dir, "src", "blobrt")
os.makedirs(src)
rc, files, _ = run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"])
if not check(rc == 0, "the tree's files are listed (git ls-files)", files):
    finish()
for rel in filter(None, files.split("\0")):
    source = os.path.join(root, rel)
    if not os.path.lexists(source):  # deleted in the work tree, not yet committed
        continue
    os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
    shutil.copy2(source, os.path.join(src, rel), follow_symlinks=False)
for path in ("/etc/resolv.conf", "/etc/pip.conf", "/etc/ssl/certs/ca-certificates.crt"):
    if os.path.isfile(path):
        os.makedirs(os.path.dirname(chroot_dir + path), exist_ok=True)
        shutil.copy(path, chroot_dir + path)
# The demo installs Debian's ca-certificates, which rewrites that bundle from Debian's own
# authorities and the local ones: this machine's bundle as a local one survives it.
if os.path.isfile("/etc/ssl/certs/ca-certificates.crt"):
    local_ca = os.path.join(chroot_dir, "usr/local/share/ca-certificates")
    os.makedirs(local_ca, exist_ok=True)
    shutil.copy("/etc/ssl/certs/ca-certificates.crt", os.path.join(local_ca, "build-host-bundle.crt"))
for m, how in (("proc", ["-t", "proc", "proc"]), ("sys", ["--rbind", "/sys"]), ("dev", ["--rbind", "/dev"])):
    target = os.path.join(chroot_dir, m)
    rc, out, _ = run(["mount"] + how + [target])
    if not check(rc == 0, f"/{m} mounted in the root", out):
        finish()
    mounts.append(target)

# 3. The README's demo command, as root in the root, with a clean environment.
env = ["env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
       "LANG=C.UTF-8", "TERM=dumb"]
rc, out, secs = run(["chroot", chroot_dir] + env + ["bash", "-c", "cd /src/blobrt && tools/build.sh demo"])
with open(os.path.join(work, "demo.log"), "w") as f:
    f.write(out)
check(rc == 0, "`tools/build.sh demo` passes in the clean root (its log: demo.log)", out, secs)
check("Plugin search path:" in out and "ASUM: " in out,
      "the demo shows `blobrt info` and the Caffe demo's figures", out)
rc, out, _ = run(["chroot", chroot_dir] + env + ["bash", "-c", "cd /src/blobrt && meson devenv -C build blobrt info --json"])
check(rc == 0 and '"blis"' in out and '"opencl"' in out, "the root's build has the blis and opencl plugins", out)
finish()
