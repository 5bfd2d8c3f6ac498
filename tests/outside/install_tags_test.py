#!/usr/bin/env python3
"""Installs the build into temporary DESTDIRs with meson install tags and checks them:
- `runtime,devel` (a CPU node): no CUDA file anywhere, and `blobrt info` works from it;
- `runtime,devel,cuda` (a GPU node): the CUDA plugin and its manifest are added.
usage: install_tags_test.py BUILD PLUGINS_DIR PREFIX BINDIR LIBDIR with-cuda|no-cuda
"""
import json
import os
import subprocess
import sys
import tempfile

build, plugins_dir, prefix, bindir, libdir, cuda = sys.argv[1:7]
passed = failed = 0


def check(condition, what):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}")


def install(tags, dest):
    subprocess.run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--tags", tags,
                    "--destdir", dest], check=True, stdout=subprocess.DEVNULL)
    return [os.path.relpath(os.path.join(r, f), dest) for r, _, fs in os.walk(dest) for f in fs]


def run_info(dest, *extra):
    root = lambda p: dest + (p if os.path.isabs(p) else os.path.join(prefix, p))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLOBRT_")}
    env["LD_LIBRARY_PATH"] = root(libdir)
    # The installed tree lives under DESTDIR, not at the baked-in path.
    env["BLOBRT_PLUGIN_SYSTEM_PATH"] = dest + plugins_dir
    return subprocess.run([os.path.join(root(bindir), "blobrt"), "info", *extra], env=env,
                          capture_output=True, text=True)


with tempfile.TemporaryDirectory() as cpu_node:
    files = install("runtime,devel", cpu_node)
    cuda_files = [f for f in files if "cuda" in os.path.basename(f).lower() or "nccl" in os.path.basename(f).lower()]
    check(not cuda_files, f"runtime,devel installs no CUDA or NCCL file {cuda_files}")
    if os.path.exists(os.path.join(build, "blobrt-dist", "libblobrt-dist.so")):
        check(any(os.path.basename(f).startswith("libblobrt-dist.so") for f in files), "runtime installs libblobrt-dist")
    check(any(f.endswith("/blobrt") for f in files), "runtime installs the blobrt command")
    check(any(f.endswith("blobrt-conformance") for f in files), "runtime installs blobrt-conformance")
    check(any(f.endswith("include/blobrt/blob.hpp") for f in files), "devel installs the headers")
    check(any(f.endswith("include/blobrt/blobrt.pb.h") for f in files), "devel installs the generated proto header")
    check(any(f.endswith("pkgconfig/blobrt.pc") for f in files), "devel installs blobrt.pc")
    check(any(f.endswith("include/blobrt/version.hpp") for f in files), "devel installs blobrt/version.hpp")
    check(any(f.endswith("cmake/blobrt/blobrtConfig.cmake") for f in files) and
          any(f.endswith("cmake/blobrt/blobrtConfigVersion.cmake") for f in files), "devel installs the CMake package")
    python_files = [f for f in files if "/blobrt/_blobrt" in f or f.endswith("blobrt/__init__.py")]
    check(not python_files, f"runtime,devel installs no part of the Python package {python_files}")
    check(any(f.endswith("plugins.d/blis.plugin") for f in files), "runtime installs the blis manifest")
    # A program written against Caffe builds against the installed tree via pkg-config.
    pc_dir = cpu_node + os.path.join(prefix, libdir, "pkgconfig")
    env = dict(os.environ, PKG_CONFIG_PATH=pc_dir, PKG_CONFIG_SYSROOT_DIR=cpu_node)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "blobrt"], env=env, capture_output=True,
                           text=True)
    check(flags.returncode == 0, f"pkg-config finds blobrt.pc ({flags.stderr.strip()})")
    demo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cli", "caffe_demo.cpp")
    compiled = subprocess.run(["c++", "-std=c++17", demo, "-o", os.path.join(cpu_node, "demo")]
                              + flags.stdout.split(), capture_output=True, text=True)
    check(compiled.returncode == 0, f"the Caffe demo compiles against the install ({compiled.stderr[-500:]})")
    info = run_info(cpu_node)
    check(info.returncode == 0, f"blobrt info on the CPU install exits 0 ({info.stderr.strip()})")
    check("blis  " in info.stdout and "usable" in info.stdout, "blobrt info finds the installed blis plugin")
    check("\n  cuda  " not in info.stdout, "blobrt info on the CPU install lists no cuda plugin")
    as_json = run_info(cpu_node, "--json")
    try:
        parsed = json.loads(as_json.stdout)
        check(parsed["active"] is not None and parsed["plugins"][0]["name"] == "host",
              "blobrt info --json is valid JSON naming the active device")
    except ValueError as e:
        check(False, f"blobrt info --json is valid JSON ({e})")

    # The blobrt command never needs MPI: it loads libblobrt-dist at run time where it is.
    needed = subprocess.run(["objdump", "-p", os.path.join(cpu_node + os.path.join(prefix, bindir), "blobrt")],
                            capture_output=True, text=True).stdout
    check("NEEDED" in needed and "libmpi" not in needed, "the blobrt command does not link libmpi")
    for f in files:
        if os.path.basename(f).startswith("libblobrt-dist.so"):
            os.remove(os.path.join(cpu_node, f))
    without_dist = run_info(cpu_node)
    check(without_dist.returncode == 0 and "libblobrt-dist: not installed here" in without_dist.stdout,
          f"blobrt info without libblobrt-dist works and says so ({without_dist.stderr.strip()[-300:]})")

# A CPU node with Python: the package is whole (extension and __init__.py), and imports.
if os.path.exists(os.path.join(build, "python", "blobrt", "__init__.py")):
    with tempfile.TemporaryDirectory() as py_node:
        files = install("runtime,devel,python-runtime", py_node)
        init = [f for f in files if f.endswith("blobrt/__init__.py")]
        ext = [f for f in files if "/blobrt/_blobrt" in f and f.endswith(".so")]
        check(len(init) == 1 and len(ext) == 1 and os.path.dirname(init[0]) == os.path.dirname(ext[0]),
              f"python-runtime installs the extension beside __init__.py ({init}, {ext})")
        if init:
            site = os.path.join(py_node, os.path.dirname(os.path.dirname(init[0])))
            root = lambda p: py_node + (p if os.path.isabs(p) else os.path.join(prefix, p))
            env = {k: v for k, v in os.environ.items() if not k.startswith("BLOBRT_")}
            env.update(PYTHONPATH=site, LD_LIBRARY_PATH=root(libdir),
                       BLOBRT_PLUGIN_SYSTEM_PATH=py_node + plugins_dir)
            imported = subprocess.run([sys.executable, "-c", "import blobrt; print(blobrt.Blob((2, 3)).data.size)"],
                                      env=env, capture_output=True, text=True, cwd=py_node)
            check(imported.returncode == 0 and imported.stdout.strip() == "6",
                  f"import blobrt works from the install ({imported.stderr.strip()[-300:]})")

if cuda == "with-cuda":
    with tempfile.TemporaryDirectory() as gpu_node:
        files = install("runtime,devel,cuda", gpu_node)
        check(any(f.endswith("plugins.d/libblobrt-cuda.so") for f in files), "cuda tag adds the plugin")
        check(any(f.endswith("plugins.d/cuda.plugin") for f in files), "cuda tag adds its manifest")
        if os.path.exists(os.path.join(build, "blobrt-dist", "libblobrt-dist-nccl.so")):
            check(any(f.endswith("blobrt/libblobrt-dist-nccl.so") for f in files), "cuda tag adds the NCCL part")
        info = run_info(gpu_node)
        check(info.returncode == 0, "blobrt info on the GPU install exits 0")
        check("cuda  " in info.stdout, "blobrt info on the GPU install lists cuda")

print(f"install_tags: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
