#!/usr/bin/env python3
"""Every public header compiles on its own, as the first and only include of a file, in
C++17, C++20 and C++23 (with -Wall -Wextra -pedantic -Werror); plugin_abi.h also as C99, and
C++14 stops with blobrt's own message rather than somewhere inside a header.
usage: header_test.py SOURCE_ROOT BUILD_DIR        ("headers: N passed, N failed")"""
import glob
import os
import subprocess
import sys

root, build = (os.path.abspath(a) for a in sys.argv[1:3])
includes = ["-I", os.path.join(root, "core", "include"), "-I", os.path.join(build, "core", "include"),
            "-I", os.path.join(build, "proto"), "-I", os.path.join(root, "blobrt-dist", "include"),
            "-I", os.path.join(root, "core", "kernels")]  # blobrt_kernels, installed beside blobrt/
flags = ["-fsyntax-only", "-Wall", "-Wextra", "-pedantic", "-Werror"]
passed = failed = 0


def mpi_flags():
    for module in ("ompi-c", "mpich"):
        p = subprocess.run(["pkg-config", "--cflags", module], capture_output=True, text=True)
        if p.returncode == 0:
            return p.stdout.split()
    return []


def compile_one(compiler, std, language, header):
    source = f"#include <{header}>\nint main() {{ return 0; }}\n"
    extra = mpi_flags() if "dist/" in header else []
    if "plugin_kit" in header:
        extra.append("-fopenmp-simd")  # the kit's kernels say `omp simd`, as its docs ask
    p = subprocess.run([compiler, f"-std={std}", "-x", language, *flags, *includes, *extra, "-"], input=source,
                       capture_output=True, text=True)
    return p.returncode, p.stderr


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}\n{detail[-2000:]}")


headers = sorted(os.path.relpath(p, os.path.join(root, "core", "include"))
                 for p in glob.glob(os.path.join(root, "core", "include", "blobrt", "**", "*.hpp"), recursive=True))
headers.append("blobrt/version.hpp")  # generated
if glob.glob(os.path.join(build, "blobrt-dist", "libblobrt-dist.so*")):
    headers.append("blobrt/dist/communicator.hpp")
for header in headers:
    for std in ("c++17", "c++20", "c++2b"):
        rc, err = compile_one("c++", std, "c++", header)
        check(rc == 0, f"{header} alone as {std}", err)
rc, err = compile_one("cc", "c99", "c", "blobrt/plugin_abi.h")
check(rc == 0, "blobrt/plugin_abi.h alone as C99", err)
rc, err = compile_one("c++", "c++14", "c++", "blobrt/blob.hpp")
check(rc != 0 and "need C++17 or later" in err.splitlines()[0] + err[:2000],
      "blobrt/blob.hpp as C++14 stops with blobrt's own message first", err)
print(f"headers: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
