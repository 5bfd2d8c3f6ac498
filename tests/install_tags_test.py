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
    if os.path.exists(os.path.join(build, "dist", "libblobrt-dist.so")):
        check(any(os.path.basename(f).startswith("libblobrt-dist.so") for f in files), "runtime installs libblobrt-dist")
    check(any(f.endswith("/blobrt") for f in files), "runtime installs the blobrt command")
    check(any(f.endswith("blobrt-conformance") for f in files), "runtime installs blobrt-conformance")
    check(any(f.endswith("include/blobrt/blob.hpp") for f in files), "devel installs the headers")
    check(any(f.endswith("include/blobrt/blobrt.pb.h") for f in files), "devel installs the generated proto header")
    check(any(f.endswith("pkgconfig/blobrt.pc") for f in files), "devel installs blobrt.pc")
    check(any(f.endswith("plugins.d/blis.plugin") for f in files), "runtime installs the blis manifest")
    # A program written against Caffe builds against the installed tree via pkg-config.
    pc_dir = cpu_node + os.path.join(prefix, libdir, "pkgconfig")
    env = dict(os.environ, PKG_CONFIG_PATH=pc_dir, PKG_CONFIG_SYSROOT_DIR=cpu_node)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "blobrt"], env=env, capture_output=True,
                           text=True)
    check(flags.returncode == 0, f"pkg-config finds blobrt.pc ({flags.stderr.strip()})")
    demo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "caffe_demo.cpp")
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

if cuda == "with-cuda":
    with tempfile.TemporaryDirectory() as gpu_node:
        files = install("runtime,devel,cuda", gpu_node)
        check(any(f.endswith("plugins.d/libblobrt-cuda.so") for f in files), "cuda tag adds the plugin")
        check(any(f.endswith("plugins.d/cuda.plugin") for f in files), "cuda tag adds its manifest")
        if os.path.exists(os.path.join(build, "dist", "libblobrt-dist-nccl.so")):
            check(any(f.endswith("blobrt/libblobrt-dist-nccl.so") for f in files), "cuda tag adds the NCCL part")
        info = run_info(gpu_node)
        check(info.returncode == 0, "blobrt info on the GPU install exits 0")
        check("cuda  " in info.stdout, "blobrt info on the GPU install lists cuda")

print(f"install_tags: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
