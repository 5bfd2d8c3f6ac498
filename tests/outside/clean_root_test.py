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
import sys

from clean_root import Checks, copy_tree, run

root, work, junit = (os.path.abspath(a) for a in sys.argv[1:4])
checks = Checks("clean-root", junit)

# 1. A clean Debian 12 root: minbase and python3, as the README's reader starts from.
chroot_dir = os.path.join(work, "root")
checks.make_root(chroot_dir, "python3")
rc, listing, _ = run(["chroot", chroot_dir, "dpkg-query", "-W", "-f", "${Package}\n"])
checks.check(rc == 0 and "g++" not in listing.split() and "meson" not in listing.split(),
             "the root has no compiler and no meson before the demo", listing)

# 2. The tree as a clean clone has it.
error = copy_tree(root, os.path.join(chroot_dir, "src", "blobrt"))
if not checks.check(not error, "the tree's files are copied in (git ls-files)", error):
    checks.finish()

# 3. The README's demo command, as root in the root, with a clean environment.
rc, out, secs = checks.in_root(chroot_dir, "cd /src/blobrt && tools/build.sh demo")
with open(os.path.join(work, "demo.log"), "w") as f:
    f.write(out)
# The demo (its packages installed into the root, then the build) as the stage's compile
# time in CI's table of stage times (ci/lib.sh).
if os.environ.get("BLOBRT_CI_COMPILE_LOG"):
    with open(os.environ["BLOBRT_CI_COMPILE_LOG"], "a") as log:
        log.write(f"clean-root {round(secs)}\n")
checks.check(rc == 0, "`tools/build.sh demo` passes in the clean root (its log: demo.log)", out, secs)
checks.check("Plugin search path:" in out and "ASUM: " in out,
             "the demo shows `blobrt info` and the Caffe demo's figures", out)
rc, out, _ = checks.in_root(chroot_dir, "cd /src/blobrt && meson devenv -C build blobrt info --json")
checks.check(rc == 0 and '"blis"' in out and '"opencl"' in out, "the root's build has the blis and opencl plugins", out)

# 4. The one Caffe build on a node with no CUDA file (issue 45): the root's build installed
# (runtime, devel), a tree laid out as Caffe's CMake build (tests/outside/caffe-cmake) built
# the portable way on it, and its GPU mode run on each backend of the root: Caffe's code of
# a kernel-free .cu on the device, a kernel layer's CPU code, the SGD update, an offset
# handle. No nvcc here, so no Caffe-layers plugin, and configure says why.
rc, out, _ = checks.in_root(chroot_dir, "find / -xdev \\( -name 'libcudart.so*' -o -name 'libcublas.so*' "
                                        "-o -name 'libcuda.so*' -o -name nvcc \\) -print -quit")
checks.check(rc == 0 and out.strip() == "", "the root has no CUDA file (no libcudart, libcublas, libcuda, nvcc)", out)
# The build's libdir is meson's choice for the root (lib64 or lib/<triplet>): found from the hook.
hook = "$(echo /opt/blobrt/usr/local/lib*/cmake/blobrt/caffe-on-blobrt.cmake)"
portable = (
    "set -e; cd /src/blobrt; meson install -C build --no-rebuild --quiet --tags runtime,devel --destdir /opt/blobrt; "
    f"cmake -G Ninja -S tests/outside/caffe-cmake -B /tmp/caffe-portable -DCPU_ONLY=ON -DCMAKE_PROJECT_Caffe_INCLUDE={hook}; "
    "cmake --build /tmp/caffe-portable")
rc, out, secs = checks.in_root(chroot_dir, portable)
if checks.check(rc == 0 and "blobrt: portable build" in out
                and "no Caffe-layers CUDA plugin: no CUDA compiler found" in out,
                "a Caffe-layout tree builds the portable way on the installed blobrt, without a CUDA plugin "
                "(no CUDA compiler, said at configure)", out, secs):
    env = f"hook={hook}; LD_LIBRARY_PATH=${{hook%/cmake/blobrt/*}}"
    rc, out, _ = checks.in_root(chroot_dir, f"{env} ldd /tmp/caffe-portable/src/caffe/libcaffe.so")
    checks.check(rc == 0 and "libblobrt" in out and "not found" not in out and "cuda" not in out.lower(),
                 "its libcaffe links libblobrt and no CUDA library", out)
    for backend in ("host", "blis", "opencl"):
        rc, out, _ = checks.in_root(chroot_dir, f"{env} BLOBRT_BACKEND={backend} /tmp/caffe-portable/tools/caffe_portable")
        checks.check(rc == 0 and f"device={backend}:0 z=364 dy=84 sgd=8.4 offset_asum=15" in out
                     and f"ran: SquareLayer Forward_gpu on {backend}:0: CPU code" in out
                     and "no Caffe-layers plugin in" in out,
                     f"its GPU mode runs on {backend} in the root with no CUDA file", out)
checks.finish()
