"""What the clean-root tests share (clean_root_test.py, node_install_test.py): checks that
print a line each and end as JUnit, and a clean Debian 12 root made with mmdebstrap, with
/proc, /sys and /dev mounted and this machine's way to the package registries copied in
(its pip.conf and CA bundle, as for any node behind the same proxy)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

# A clean environment for commands in the root, as root.
CLEAN_ENV = ["env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
             "HOME=/root", "LANG=C.UTF-8", "TERM=dumb"]


def run(cmd: list[str], timeout: float = 3600, **kw) -> tuple[int, str, float]:
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    return p.returncode, p.stdout + p.stderr, time.monotonic() - start


class Checks:
    """One line per check; finish() writes JUnit, prints 'NAME: N passed, N failed' and exits."""

    def __init__(self, suite: str, junit: str) -> None:
        self.suite, self.junit = suite, junit
        self.results: list[tuple[str, bool, str, float]] = []
        self.mounts: list[str] = []

    def check(self, ok: object, name: str, detail: str = "", seconds: float = 0.0) -> bool:
        self.results.append((name, bool(ok), detail, seconds))
        print(("ok: " if ok else "FAIL: ") + name + (f" ({seconds:.0f} s)" if seconds else "")
              + ("" if ok or not detail else "\n" + detail[-4000:]), flush=True)
        return bool(ok)

    def finish(self) -> None:
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", m], capture_output=True)
        failed = sum(not ok for _, ok, _, _ in self.results)
        suite = ET.Element("testsuite", name=self.suite, tests=str(len(self.results)), failures=str(failed))
        for name, ok, detail, seconds in self.results:
            case = ET.SubElement(suite, "testcase", classname=self.suite.replace("-", "_"), name=name,
                                 time=f"{seconds:.1f}")
            if not ok:
                ET.SubElement(case, "failure", message=name).text = detail[-4000:]
        ET.ElementTree(suite).write(self.junit, encoding="utf-8", xml_declaration=True)
        print(f"{self.suite}: {len(self.results) - failed} passed, {failed} failed")
        sys.exit(1 if failed else 0)

    def make_root(self, chroot_dir: str, include: str) -> None:
        """A clean Debian 12 root (minbase plus INCLUDE, comma-separated) at CHROOT_DIR, ready
        for chroot: mounts and the registries' access copied in. Ends the run if it fails."""
        if os.geteuid() != 0 or shutil.which("mmdebstrap") is None:
            self.check(False, "root and mmdebstrap are there (ci/deps.sh installs it)",
                       f"euid {os.geteuid()}, mmdebstrap {shutil.which('mmdebstrap')}")
            self.finish()
        for m in ("dev/pts", "dev", "proc", "sys"):  # left mounted by an interrupted run
            subprocess.run(["umount", "-l", os.path.join(chroot_dir, m)], capture_output=True)
        shutil.rmtree(chroot_dir, ignore_errors=True)
        os.makedirs(os.path.dirname(chroot_dir), exist_ok=True)
        rc, out, secs = run(["mmdebstrap", "--variant=minbase", f"--include={include}", "--mode=root",
                             "bookworm", chroot_dir])
        if not self.check(rc == 0, f"mmdebstrap makes a Debian 12 root (minbase + {include})", out, secs):
            self.finish()
        for path in ("/etc/resolv.conf", "/etc/pip.conf", "/etc/ssl/certs/ca-certificates.crt"):
            if os.path.isfile(path):
                os.makedirs(os.path.dirname(chroot_dir + path), exist_ok=True)
                shutil.copy(path, chroot_dir + path)
        # Installing Debian's ca-certificates rewrites that bundle from Debian's own
        # authorities and the local ones: this machine's bundle as a local one survives it.
        if os.path.isfile("/etc/ssl/certs/ca-certificates.crt"):
            local_ca = os.path.join(chroot_dir, "usr/local/share/ca-certificates")
            os.makedirs(local_ca, exist_ok=True)
            shutil.copy("/etc/ssl/certs/ca-certificates.crt", os.path.join(local_ca, "build-host-bundle.crt"))
        for m, how in (("proc", ["-t", "proc", "proc"]), ("sys", ["--rbind", "/sys"]), ("dev", ["--rbind", "/dev"])):
            target = os.path.join(chroot_dir, m)
            rc, out, _ = run(["mount"] + how + [target])
            if not self.check(rc == 0, f"/{m} mounted in the root", out):
                self.finish()
            self.mounts.append(target)

    def in_root(self, chroot_dir: str, script: str, timeout: float = 3600) -> tuple[int, str, float]:
        """Runs a bash SCRIPT as root in the root with a clean environment."""
        return run(["chroot", chroot_dir] + CLEAN_ENV + ["bash", "-c", script], timeout=timeout)


def copy_tree(root: str, dest: str) -> str:
    """The tree as a clean clone has it (tracked and unignored files) into DEST; '' or git's error."""
    rc, files, _ = run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    if rc != 0:
        return files or "git ls-files failed"
    for rel in filter(None, files.split("\0")):
        source = os.path.join(root, rel)
        if not os.path.lexists(source):  # deleted in the work tree, not yet committed
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(source, os.path.join(dest, rel), follow_symlinks=False)
    return ""
