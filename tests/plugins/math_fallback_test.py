#!/usr/bin/env python3
"""A plugin that offers gemm, gemv and elementwise (ABI 1.2) but answers every call
BLOBRT_ERR_UNSUPPORTED still passes the whole conformance suite: each call runs on the host
through copies, and BLOBRT_LOG=info says so once per operation.
usage: math_fallback_test.py CONFORMANCE PLUGIN_MODULE ABI"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

conformance, module, abi = sys.argv[1:4]
with tempfile.TemporaryDirectory() as d:
    os.chmod(d, 0o755)
    shutil.copy(module, os.path.join(d, "libtest-mathunsupported.so"))
    with open(os.path.join(d, "mathunsupported.plugin"), "w") as f:
        f.write(f"name = mathunsupported\nlibrary = libtest-mathunsupported.so\nabi = {abi}\npriority = 1\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLOBRT_")}
    env.update(BLOBRT_PLUGIN_PATH=d, BLOBRT_PLUGIN_SYSTEM_PATH="", BLOBRT_LOG="info", BLOBRT_PLUGIN_CACHE="off",
               BLOBRT_PLUGIN_SCANNER=os.environ.get("BLOBRT_PLUGIN_SCANNER", ""))
    r = subprocess.run([conformance, "--gtest_filter=*mathunsupported*", "--gtest_brief=1"], env=env,
                       capture_output=True, text=True, timeout=600)
out = r.stdout + r.stderr
checks = [
    (r.returncode == 0, "conformance passes on a plugin that answers every math call UNSUPPORTED"),
    (re.search(r"\[==========\] [1-9][0-9]* tests? from", out) is not None, "its cases ran"),
    ("gemm is not offered by the device; it runs on the host through copies" in out, "gemm: the host path is logged"),
    ("element-wise" in out and "runs on the host through copies" in out, "element-wise: the host path is logged"),
]
failed = 0
for ok, what in checks:
    print(("ok: " if ok else "FAIL: ") + what)
    failed += not ok
if failed:
    print(out[-4000:])
print(f"math_fallback: {len(checks) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
