#!/usr/bin/env python3
"""blobrt as a user meets it from outside the tree: configured with a real prefix, installed
there, then used by small programs (tests/outside/) built the three ways a C++ project
does — pkg-config + g++, meson's dependency(), CMake's find_package — for libblobrt,
libblobrt-dist and blobrt-caffe (Caffe's header names), and run on every backend the install has. Also: the installed `blobrt`
command works and needs no MPI, blobrt-dp-sgd is installed.

usage: outside_in_test.py SOURCE_ROOT WORK_DIR JUNIT_XML
Prints one line per check and "outside-in: N passed, N failed"; writes the checks as JUnit.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

root, work, junit = (os.path.abspath(a) for a in sys.argv[1:4])
results = []  # (name, ok, detail)


def check(ok, name, detail=""):
    results.append((name, bool(ok), detail))
    print(("ok: " if ok else "FAIL: ") + name + ("" if ok or not detail else "\n" + detail[-3000:]))
    return ok


def run(cmd, env=None, cwd=None, timeout=1800):
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def finish():
    suite = ET.Element("testsuite", name="outside-in", tests=str(len(results)),
                       failures=str(sum(not ok for _, ok, _ in results)))
    for name, ok, detail in results:
        case = ET.SubElement(suite, "testcase", classname="outside_in", name=name)
        if not ok:
            ET.SubElement(case, "failure", message=name).text = detail[-3000:]
    ET.ElementTree(suite).write(junit, encoding="utf-8", xml_declaration=True)
    failed = sum(not ok for _, ok, _ in results)
    print(f"outside-in: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


# A user's environment: nothing of the build tree's.
base_env = {k: v for k, v in os.environ.items()
            if not k.startswith(("BLOBRT_", "MESON", "PKG_CONFIG", "LD_LIBRARY_PATH", "CMAKE_"))}
prefix = os.path.join(work, "prefix")
# Beside WORK_DIR, not in it: CI's build directories are all one level below the checkout,
# so their compile lines name the sources alike and ccache reuses the build stage's objects.
build = work + "-meson"

# 1. Configure with a real prefix (the baked-in plugin path is the installed one), install.
compile_start = time.monotonic()
shutil.rmtree(prefix, ignore_errors=True)
if not os.path.exists(os.path.join(build, "build.ninja")):
    rc, out = run(["meson", "setup", build, root, f"--prefix={prefix}", "-Dtests=disabled",
                   "-Dpython=disabled", "-Dcuda=disabled", "-Dmpi=auto"], env=base_env)
    if not check(rc == 0, "meson setup with --prefix", out):
        finish()
rc, out = run(["ninja", "-C", build], env=base_env)
if not check(rc == 0, "the prefix build compiles", out):
    finish()
rc, out = run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--tags", "runtime,devel"], env=base_env)
if not check(rc == 0, "meson install --tags runtime,devel into the prefix", out):
    finish()
# The stage's compile time, for CI's table of stage times (ci/lib.sh).
if os.environ.get("BLOBRT_CI_COMPILE_LOG"):
    with open(os.environ["BLOBRT_CI_COMPILE_LOG"], "a") as log:
        log.write(f"outside-in {round(time.monotonic() - compile_start)}\n")

pcs = glob.glob(os.path.join(prefix, "lib*", "**", "pkgconfig", "blobrt.pc"), recursive=True)
if not check(len(pcs) == 1, "the prefix has blobrt.pc", str(pcs)):
    finish()
pc_dir = os.path.dirname(pcs[0])
libdir = os.path.dirname(pc_dir)
has_dist = os.path.exists(os.path.join(pc_dir, "blobrt-dist.pc"))
# blobrt-caffe is built where gflags and glog are (-Dcaffe=auto): tools/install-deps.sh installs them.
has_caffe = os.path.exists(os.path.join(pc_dir, "blobrt-caffe.pc"))
if not has_caffe:
    print("skipped: the Caffe consumer (the prefix has no blobrt-caffe.pc: built without gflags or glog)")
user_env = dict(base_env, PKG_CONFIG_PATH=pc_dir, LD_LIBRARY_PATH=libdir)
blobrt_cmd = os.path.join(prefix, "bin", "blobrt")

# 2. The installed command: works, sees the installed plugins, needs no MPI.
rc, info = run([blobrt_cmd, "info"], env=user_env)
check(rc == 0 and "[installed]" in info, "the installed `blobrt info` searches the installed plugins.d", info)
rc, as_json = run([blobrt_cmd, "info", "--json"], env=user_env)
try:
    backends = [p["name"] for p in json.loads(as_json)["plugins"] if p.get("usable") is True]
except (ValueError, KeyError, TypeError) as e:
    backends = ["host"]
    check(False, "`blobrt info --json` parses", f"{e}: {as_json}")
check("blis" in backends, f"the installed blis plugin is usable (backends: {backends})", info)
rc, needed = run(["objdump", "-p", blobrt_cmd])
check(rc == 0 and "libmpi" not in needed, "the `blobrt` command does not need libmpi", needed)
if has_dist:
    check("libblobrt-dist:\n  MPI: " in info, "`blobrt info` finds the installed libblobrt-dist at run time", info)
    check(os.path.exists(os.path.join(prefix, "bin", "blobrt-dp-sgd")), "blobrt-dp-sgd is installed")

# 3. Consumers, three ways.
outside = os.path.join(root, "tests", "outside")
consumers = {}  # "how: program" -> path
bin_dir = os.path.join(work, "pkg-config")
os.makedirs(bin_dir, exist_ok=True)
for program, module in (("consumer", "blobrt"), ("dist_consumer", "blobrt-dist"), ("caffe_consumer", "blobrt-caffe")):
    if (module == "blobrt-dist" and not has_dist) or (module == "blobrt-caffe" and not has_caffe):
        continue
    rc, flags = run(["pkg-config", "--cflags", "--libs", module], env=user_env)
    if not check(rc == 0, f"pkg-config --cflags --libs {module}", flags):
        continue
    exe = os.path.join(bin_dir, program)
    rc, out = run(["g++", "-std=c++17", os.path.join(outside, program + ".cpp"), "-o", exe] + flags.split(),
                  env=user_env)
    if check(rc == 0, f"g++ $(pkg-config {module}) builds and links {program}", out):
        consumers["pkg-config: " + program] = exe

meson_dir = os.path.join(work, "meson-consumer")
shutil.rmtree(meson_dir, ignore_errors=True)
rc, out = run(["meson", "setup", meson_dir, outside], env=user_env)
if check(rc == 0, "a meson project finds dependency('blobrt')" + (" and 'blobrt-dist'" if has_dist else ""), out):
    rc, out = run(["ninja", "-C", meson_dir], env=user_env)
    if check(rc == 0, "the meson consumer builds", out):
        for program in ["consumer"] + ["dist_consumer"] * has_dist + ["caffe_consumer"] * has_caffe:
            consumers["meson: " + program] = os.path.join(meson_dir, program)

cmake_dir = os.path.join(work, "cmake-consumer")
shutil.rmtree(cmake_dir, ignore_errors=True)
rc, out = run(["cmake", "-S", outside, "-B", cmake_dir, f"-DCMAKE_PREFIX_PATH={prefix}"], env=user_env)
if check(rc == 0, "a CMake project finds find_package(blobrt CONFIG)", out):
    rc, out = run(["cmake", "--build", cmake_dir], env=user_env)
    if check(rc == 0, "the CMake consumer builds (C++17 from blobrt::blobrt)", out):
        for program in ["consumer"] + ["dist_consumer"] * has_dist + ["caffe_consumer"] * has_caffe:
            path = os.path.join(cmake_dir, program)
            if check(os.path.exists(path), f"CMake built {program} (blobrt::dist found: {has_dist}, "
                                           f"blobrt::caffe found: {has_caffe})"):
                consumers["cmake: " + program] = path

def check_cuda_layer_plugin(caffe_build):
    """The Caffe-layers CUDA plugin of a portable build (cmake/caffe-layer-plugin.cmake): built
    beside libcaffe, linking libcudart where libcaffe links none, its calls of the layers' GPU
    methods bound to its own definitions, installed by its component alone. Returns its path."""
    plugin = os.path.join(caffe_build, "src", "caffe", "blobrt-caffe-layers", "libcaffe-layers-cuda.so")
    if not check(os.path.exists(plugin), "the portable build with nvcc builds the Caffe-layers CUDA plugin "
                 "beside libcaffe", plugin):
        return None
    rc, out = run(["ldd", plugin], env=user_env)
    check(rc == 0 and "libcudart.so" in out and "not found" not in out,
          "the Caffe-layers plugin links libcudart (shared, as blobrt's cuda plugin)", out)
    # -Bsymbolic-functions: no relocation of the plugin names SquareLayer's GPU methods, which
    # libcaffe defines too (its dispatching ones: calling those would call the plugin again).
    rc, out = run(["readelf", "-rW", plugin])
    check(rc == 0 and "JUMP_SLOT" in out and not re.search(r"SquareLayer.*_gpu", out),
          "the plugin's calls of the layers' GPU methods are bound to its own .cu code", out[-2000:])
    installed = os.path.join(work, "caffe-cmake-install")
    shutil.rmtree(installed, ignore_errors=True)
    rc, out = run(["cmake", "--install", caffe_build, "--prefix", installed], env=user_env)
    everything = [os.path.relpath(os.path.join(d, f), installed) for d, _, fs in os.walk(installed) for f in fs]
    check(rc == 0 and not any("layers-cuda" in f for f in everything),
          "cmake --install (a CPU node's) installs no Caffe-layers CUDA plugin", out + str(everything))
    rc, out = run(["cmake", "--install", caffe_build, "--prefix", installed, "--component", "blobrt_cuda_layers"],
                  env=user_env)
    check(rc == 0 and os.path.exists(os.path.join(installed, "lib", "blobrt-caffe-layers",
                                                  "libcaffe-layers-cuda.so")),
          "cmake --install --component blobrt_cuda_layers (a GPU node's) installs it beside Caffe's library", out)
    return plugin


def check_layer_plugin_loading(exe, plugin):
    """What the portable libcaffe does with the plugin on a node without a GPU: leaves it
    unloaded saying why, loads it when asked for CUDA memory (no driver needed to load), and
    skips a broken file and another build's plugin with the reason."""
    # How a user checks a node: `blobrt info --caffe LIBCAFFE`.
    libcaffe = os.path.join(os.path.dirname(os.path.dirname(plugin)), "libcaffe.so")
    rc, out = run([blobrt_cmd, "info", "--caffe", libcaffe], env=user_env)
    memory = {"host": "cpu", "blis": "cpu", "opencl": "opencl"}
    check(rc == 0 and "Caffe layers:\n  1 layer classes with kernels: SquareLayer" in out
          and f"{plugin}: not loaded: no device with cuda memory needed it" in out
          and all(f"{b}:0 ({memory.get(b, '')} memory): 0 of 1 on the device (none); CPU code in GPU mode: SquareLayer"
                  in out for b in backends),
          "blobrt info --caffe lists the library's layers per device, and its Caffe-layers plugin", out)
    rc, out = run([blobrt_cmd, "info", "--caffe", os.path.join(work, "no-such-libcaffe.so")], env=user_env)
    check(rc == 1 and "--caffe " in out and "cannot be loaded" in out, "blobrt info --caffe of a missing file: "
          "exit 1 naming it", out)
    rc, out = run([blobrt_cmd, "info", "--caffe", libcaffe, "--json"], env=user_env)
    check(rc == 2, "blobrt info --caffe with --json is a usage error", out)
    for backend in backends:
        rc, out = run([exe], env=dict(user_env, BLOBRT_BACKEND=backend))
        check(rc == 0 and f"plugin: {plugin}: not loaded: no device with cuda memory needed it" in out,
              f"on {backend} the Caffe-layers CUDA plugin is not loaded, and the report says why", out)
    rc, out = run([exe, "--load_layer_plugins=cuda"], env=dict(user_env, BLOBRT_BACKEND="host"))
    check(rc == 0 and "plugins loaded: 1" in out and f"plugin: {plugin}: loaded: 1 layer classes (CUDA " in out
          and "z=364 dy=84" in out, "asked for CUDA memory's plugins, libcaffe loads it and registers its layer", out)
    strange = os.path.join(work, "strange-layer-plugins")
    shutil.rmtree(strange, ignore_errors=True)
    os.makedirs(strange)
    with open(os.path.join(strange, "libcaffe-layers-cuda.so"), "w") as f:
        f.write("not a library\n")
    other = os.path.join(work, "other-build-layer-plugins")
    shutil.rmtree(other, ignore_errors=True)
    os.makedirs(other)
    # The same plugin carrying another build's id (the hash of other headers): refused.
    with open(plugin, "rb") as f:
        image = f.read()
    with open(os.path.join(work, "caffe-cmake-keyword", "blobrt-portable-gpu", "layer_plugins_folder.cpp")) as f:
        build_id = re.search(r'"blobrt-caffe-layers", "([0-9a-f]{16})"', f.read()).group(1)
    with open(os.path.join(other, "libcaffe-layers-cuda.so"), "wb") as f:
        f.write(image.replace(build_id.encode(), b"0123456789abcdef"))
    for what, folder, said in (("a file that is no library", strange, "skipped: cannot be loaded: "),
                               ("another build's plugin", other,
                                f"skipped: built for another Caffe build (its id 0123456789abcdef, "
                                f"this libcaffe's {build_id})")):
        rc, out = run([exe, "--load_layer_plugins=cuda"],
                      env=dict(user_env, BLOBRT_BACKEND="host", BLOBRT_CAFFE_LAYER_PLUGIN_PATH=folder))
        check(rc == 0 and f"plugin: {os.path.join(folder, 'libcaffe-layers-cuda.so')}: {said}" in out
              and "z=364 dy=84" in out, f"{what} in BLOBRT_CAFFE_LAYER_PLUGIN_PATH is skipped with the reason, "
              "and GPU mode runs on", out)


def check_makefile_route_layer_plugin(caffe_tree, generator, cmake_plugin):
    """The Caffe-layers CUDA plugin of a libcaffe built by Caffe's Makefile: the tree's library
    compiled by g++ as the Makefile would (the generator's sources, blobrt's four files left
    out), then the installed caffe-layers-cuda project, as docs/caffe-on-blobrt.md says. The
    plugin lands beside that libcaffe, which loads it; a libcaffe of other headers (the CMake
    build's, whose id also covers its compile definitions) or none is refused at configure."""
    tree = os.path.join(work, "caffe-make")
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(caffe_tree, tree)
    rc_flags, flags = run(["pkg-config", "--cflags", "blobrt-caffe"], env=user_env)
    rc_libs, libs = run(["pkg-config", "--libs", "blobrt-caffe"], env=user_env)
    # Makefile.config's COMMON_FLAGS (blobrt-caffe's ahead of include/), as make prints them.
    cflags = ["-std=c++17", "-fPIC", "-DCPU_ONLY", "-DBLOBRT_CAFFE_PORTABLE"] + flags.split() + ["-Iinclude"]
    common_flags = " ".join(cflags[2:])
    rc, out = run(["cmake", "-DCAFFE_ROOT=.", "-DOUTPUT_DIR=blobrt-portable-gpu", f"-DCAFFE_COMMON_FLAGS={common_flags}",
                   "-P", generator], env=user_env, cwd=tree)
    if not check(rc == 0 and rc_flags == 0 and rc_libs == 0, "the Makefile route's generator runs in the tree",
                 out + flags + libs):
        return
    sources = sorted(os.path.relpath(os.path.join(d, f), tree)
                     for top in ("src/caffe", "blobrt-portable-gpu") for d, _, fs in os.walk(os.path.join(tree, top))
                     for f in fs if f.endswith(".cpp"))
    sources = [f for f in sources if not re.match(r"src/caffe/((blob|common|syncedmem)|util/math_functions)\.cpp$", f)]
    lib_dir = os.path.join(tree, ".build_release", "lib")
    os.makedirs(lib_dir)
    library = os.path.join(lib_dir, "libcaffe.so.1.0.0")
    rc, out = run(["g++", "-shared", *cflags, *sources, "-o", library, "-Wl,-soname,libcaffe.so.1.0.0",
                   *libs.split()], env=user_env, cwd=tree)
    if not check(rc == 0, "the tree's libcaffe compiles the Makefile's way (g++, the generator's sources)", out):
        return
    os.symlink("libcaffe.so.1.0.0", os.path.join(lib_dir, "libcaffe.so"))
    project = os.path.join(libdir, "cmake", "blobrt", "caffe-layers-cuda")
    layers_build = os.path.join(tree, ".build_release", "blobrt-cuda-layers")
    rc, out = run(["cmake", "-S", project, "-B", layers_build, f"-DCAFFE_ROOT={tree}",
                   f"-DCAFFE_LIBRARY={os.path.join(lib_dir, 'libcaffe.so')}", f"-DCAFFE_COMMON_FLAGS={common_flags}"],
                  env=user_env)
    if check(rc == 0 and "Caffe-layers CUDA plugin: 1 layer .cu files compiled by nvcc" in out,
             "the installed caffe-layers-cuda project configures on the Makefile's libcaffe", out):
        rc, out = run(["cmake", "--build", layers_build], env=user_env)
        plugin = os.path.join(lib_dir, "blobrt-caffe-layers", "libcaffe-layers-cuda.so")
        check(rc == 0 and os.path.exists(plugin), "it builds the Caffe-layers CUDA plugin beside that libcaffe", out)
        rc, needed = run(["readelf", "-dW", plugin])
        check(rc == 0 and "[libcudart.so" in needed and "[libblobrt-caffe.so" in needed,
              "the Makefile route's plugin links libcudart and libblobrt-caffe", needed)
        installed = os.path.join(work, "caffe-make-install")
        shutil.rmtree(installed, ignore_errors=True)
        rc, out = run(["cmake", "--install", layers_build, "--prefix", installed, "--component", "blobrt_cuda_layers"],
                      env=user_env)
        check(rc == 0 and os.path.exists(os.path.join(installed, "lib", "blobrt-caffe-layers", "libcaffe-layers-cuda.so")),
              "cmake --install --component blobrt_cuda_layers puts it in PREFIX/lib/blobrt-caffe-layers", out)
        exe = os.path.join(tree, "caffe_portable")
        rc, out = run(["g++", *cflags, "tools/caffe_portable.cpp", "-o", exe, "-L" + lib_dir, "-lcaffe",
                       *libs.split(), "-Wl,-rpath," + lib_dir], env=user_env, cwd=tree)
        if check(rc == 0, "a tool links the Makefile's libcaffe", out):
            rc, out = run([exe, "--load_layer_plugins=cuda"], env=dict(user_env, BLOBRT_BACKEND="host"))
            check(rc == 0 and "plugins loaded: 1" in out and f"plugin: {plugin}: loaded: 1 layer classes (CUDA " in out
                  and "z=364 dy=84" in out, "the Makefile's libcaffe loads the plugin built for it", out)
    # Refused before any compile: a libcaffe of another build id (the CMake build's of the same
    # tree, whose id covers its own definitions; this one with other definitions), a library
    # that is no portable libcaffe, and a static one.
    archive = os.path.join(work, "libcaffe.a")
    with open(archive, "w") as f:
        f.write("!<arch>\n")
    other_library = os.path.join(os.path.dirname(os.path.dirname(cmake_plugin)), "libcaffe.so")
    for what, library, extra, said in (
            ("the CMake build's libcaffe", other_library, common_flags, "carries build id"),
            ("a libcaffe compiled with other definitions", os.path.join(lib_dir, "libcaffe.so"),
             common_flags + " -DUSE_LMDB", "and CAFFE_COMMON_FLAGS' definitions (BLOBRT_CAFFE_PORTABLE;CPU_ONLY;USE_LMDB)"),
            ("a library that is no portable libcaffe", os.path.join(libdir, "libblobrt.so"), common_flags,
             "is not a portable libcaffe"),
            ("a static library", archive, common_flags, "is not a shared library")):
        refused = os.path.join(work, "caffe-make-refused")
        shutil.rmtree(refused, ignore_errors=True)
        rc, out = run(["cmake", "-S", project, "-B", refused, f"-DCAFFE_ROOT={tree}", f"-DCAFFE_LIBRARY={library}",
                       f"-DCAFFE_COMMON_FLAGS={extra}"], env=user_env)
        # (CMake folds a message's lines: compared with the words rejoined.)
        check(rc != 0 and said in " ".join(out.split()) and "CMake Error" in out,
              f"caffe-layers-cuda refuses {what}, saying why", out)


# Caffe's own CMake build (a tree laid out as BVLC Caffe's: tests/outside/caffe-cmake) with
# nothing edited but one -D: caffe-on-blobrt.cmake leaves blobrt's four files out of
# target caffe and puts blobrt-caffe's headers ahead of Caffe's include/. Without that -D
# the same tree must not build (its stand-ins for blobrt's files and Caffe's blob.hpp #error).
if has_caffe:
    caffe_tree = os.path.join(outside, "caffe-cmake")
    hook = glob.glob(os.path.join(libdir, "cmake", "blobrt", "caffe-on-blobrt.cmake"))
    # Both signatures of target_link_libraries, as BVLC Caffe (keyword) and SSD's Caffe (plain);
    # the second also with -std=c++11 in CMAKE_CXX_FLAGS, as OpenPose's Caffe.
    # The keyword one with -DCPU_ONLY=ON, as the recipe says: where nvcc is (/usr/local/cuda),
    # its .cu kernels also become the Caffe-layers CUDA plugin.
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    layer_plugin = None
    for signature, flags in (("keyword", ["-DCPU_ONLY=ON"]),
                             ("plain", ["-DCAFFE_PLAIN_LINK=ON", "-DCAFFE_CXX11_FLAGS=ON"])):
        if not check(len(hook) == 1, "the prefix has cmake/blobrt/caffe-on-blobrt.cmake", str(hook)):
            break
        caffe_build = os.path.join(work, f"caffe-cmake-{signature}")
        shutil.rmtree(caffe_build, ignore_errors=True)
        rc, out = run(["cmake", "-S", caffe_tree, "-B", caffe_build, f"-DCMAKE_PROJECT_Caffe_INCLUDE={hook[0]}",
                       *flags], env=user_env)
        if check(rc == 0 and "4 of Caffe's files replaced by blobrt" in out
                 and (signature == "keyword" or "are compiled as c++17" in out),
                 f"a Caffe-layout CMake tree ({signature} target_link_libraries) configures with "
                 "-DCMAKE_PROJECT_Caffe_INCLUDE=caffe-on-blobrt.cmake", out):
            # The portable build (the default where Caffe builds no CUDA): the tree's .cu
            # files become C++ sources of the library, one kind each.
            check("1 .cu files without kernels compiled as C++, 1 layers' kernels dispatched" in out
                  and "blobrt: portable build" in out,
                  f"the Caffe-layout tree ({signature}) configures as the portable build", out)
            rc, out = run(["cmake", "--build", caffe_build], env=user_env)
            if check(rc == 0, f"the Caffe-layout tree ({signature}) builds: blobrt's files left out, blobrt-caffe's "
                     "headers first", out):
                consumers[f"Caffe's CMake layout ({signature}): caffe_tool"] = os.path.join(caffe_build, "tools",
                                                                                             "caffe_tool")
                consumers[f"Caffe's CMake layout ({signature}): caffe_portable"] = os.path.join(
                    caffe_build, "tools", "caffe_portable")
                rc, out = run(["ldd", os.path.join(caffe_build, "src", "caffe", "libcaffe.so")], env=user_env)
                check(rc == 0 and "libblobrt" in out and not re.search(r"libcuda|libcublas|libcurand|libOpenCL", out),
                      f"the portable libcaffe ({signature}) links libblobrt and no CUDA or OpenCL library", out)
                if signature == "keyword" and nvcc:
                    layer_plugin = check_cuda_layer_plugin(caffe_build)
    # A fork with CUDA functions of its own outside its layers (as SSD's bbox_util.cu), which
    # blobrt-caffe has no portable form of, stays Caffe's CPU_ONLY build, and says why.
    fork_tree = os.path.join(work, "caffe-cmake-fork")
    shutil.rmtree(fork_tree, ignore_errors=True)
    shutil.copytree(caffe_tree, fork_tree)
    with open(os.path.join(fork_tree, "src", "caffe", "fork_only.cu"), "w") as f:
        f.write("namespace caffe {\n__global__ void ForkOnlyKernel(int n, float* x) {}\n}  // namespace caffe\n")
    if hook:
        fork_build = os.path.join(work, "caffe-cmake-fork-build")
        shutil.rmtree(fork_build, ignore_errors=True)
        rc, out = run(["cmake", "-S", fork_tree, "-B", fork_build, f"-DCMAKE_PROJECT_Caffe_INCLUDE={hook[0]}"],
                      env=user_env)
        if check(rc == 0 and "not the portable build: blobrt-caffe has no portable form of src/caffe/fork_only.cu"
                 in out, "a tree with a .cu blobrt-caffe has no form of configures as CPU_ONLY, saying why", out):
            rc, out = run(["cmake", "--build", fork_build], env=user_env)
            if check(rc == 0, "that tree builds as CPU_ONLY", out):
                rc, out = run([os.path.join(fork_build, "tools", "caffe_portable")], env=user_env)
                check(rc == 1 and "not a portable build" in out, "its programs are not the portable build", out)
                rc, out = run([blobrt_cmd, "info", "--caffe", os.path.join(fork_build, "src", "caffe", "libcaffe.so")],
                              env=user_env)
                # (The test tree's CPU_ONLY library uses nothing of libblobrt-caffe: --as-needed drops it.)
                check(rc == 0 and ("this Caffe library dispatches no layer's GPU methods (not a portable build" in out
                                   or "libcaffe.so is not a portable Caffe build (it does not link libblobrt-caffe)"
                                   in out),
                      "blobrt info --caffe says a CPU_ONLY libcaffe is not the portable build", out)
    # Caffe's Makefile route runs the same generator as a script (docs/caffe-on-blobrt.md):
    # one source per .cu of the tree's (test_*.cu and math_functions.cu have none), and a
    # .cu blobrt-caffe has no portable form of named when its source compiles.
    generator = glob.glob(os.path.join(libdir, "cmake", "blobrt", "caffe-portable-gpu.cmake"))
    if check(len(generator) == 1, "the prefix has cmake/blobrt/caffe-portable-gpu.cmake", str(generator)):
        generated = os.path.join(work, "caffe-portable-gpu")
        shutil.rmtree(generated, ignore_errors=True)
        rc, out = run(["cmake", f"-DCAFFE_ROOT={fork_tree}", f"-DOUTPUT_DIR={generated}", "-P", generator[0]],
                      env=user_env)
        made = sorted(os.listdir(generated)) if os.path.isdir(generated) else []
        fork_source = os.path.join(generated, "fork_only.cu.cpp")
        named = os.path.exists(fork_source) and "no portable form of src/caffe/fork_only.cu" in open(fork_source).read()
        check(rc == 0 and named and made == ["fork_only.cu.cpp", "layer_plugins_folder.cpp",
                                             "layers_double_layer.cu.cpp", "layers_square_layer.cu.cpp",
                                             "solvers_sgd_solver.cu.cpp"],
              "caffe-portable-gpu.cmake run as a script writes one source per .cu", out + str(made))
        rc, out = run(["cmake", f"-DCAFFE_ROOT={work}", f"-DOUTPUT_DIR={generated}", "-P", generator[0]],
                      env=user_env)
        check(rc != 0 and "has no src/caffe" in out, "caffe-portable-gpu.cmake refuses a folder with no src/caffe",
              out)
        if nvcc and layer_plugin:
            check_makefile_route_layer_plugin(caffe_tree, generator[0], layer_plugin)
    unhooked_build = os.path.join(work, "caffe-cmake-unhooked")
    shutil.rmtree(unhooked_build, ignore_errors=True)
    rc, out = run(["cmake", "-S", caffe_tree, "-B", unhooked_build, f"-DCMAKE_PREFIX_PATH={prefix}"], env=user_env)
    if rc == 0:
        rc, out = run(["cmake", "--build", unhooked_build], env=user_env)
    check(rc != 0 and "#error" in out, "without caffe-on-blobrt.cmake the same tree does not build", out)

# blobrt as a meson subproject: dependency('blobrt') resolves to the subproject's library
# (meson.override_dependency), built with the consumer.
sub_dir = os.path.join(work, "subproject-consumer")
shutil.rmtree(sub_dir, ignore_errors=True)
os.makedirs(os.path.join(sub_dir, "subprojects"))
os.symlink(root, os.path.join(sub_dir, "subprojects", "blobrt"))
shutil.copy(os.path.join(outside, "consumer.cpp"), sub_dir)
with open(os.path.join(sub_dir, "meson.build"), "w") as f:
    f.write("project('blobrt-subproject-consumer', 'cpp', default_options: ['cpp_std=c++17'])\n"
            "subproject('blobrt', default_options: ['tests=disabled', 'python=disabled', 'cuda=disabled'])\n"
            "executable('consumer', 'consumer.cpp', dependencies: dependency('blobrt'))\n")
rc, out = run(["meson", "setup", os.path.join(sub_dir, "build"), sub_dir], env=base_env)
if check(rc == 0, "a meson project with blobrt as a subproject configures", out):
    rc, out = run(["ninja", "-C", os.path.join(sub_dir, "build"), "consumer"], env=base_env)
    if check(rc == 0, "dependency('blobrt') resolves to the subproject's library and builds", out):
        consumers["meson subproject: consumer"] = os.path.join(sub_dir, "build", "consumer")

# 4. Run them: the core consumer on every backend, the dist one on two ranks.
mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--timeout", "120", "--mca", "btl", "self,vader",
          "--mca", "btl_vader_single_copy_mechanism", "none", "-np", "2"]
for how, exe in sorted(consumers.items()):
    if how.endswith(": caffe_tool"):
        # rows (1, 2, 3), (4, 5, 6), (7, 8, 9) times a 4x3 weight of ones: --rows=3 was parsed.
        for backend in backends:
            rc, out = run([exe, "--rows=3"], env=dict(user_env, BLOBRT_BACKEND=backend))
            # fork-label-7: the tree's own io.hpp (a fork's API) was the one its files saw.
            check(rc == 0 and f"device={backend}:0 top=(3, 4) asum=180 fork-label-7" in out, f"{how} runs on {backend}",
                  out)
    elif how.endswith(": caffe_portable"):
        if layer_plugin and "(keyword)" in how:
            check_layer_plugin_loading(exe, layer_plugin)
        # GPU mode on every backend: 2x on the device by Caffe's own code, the square by the
        # CPU code (no backend registered one) or by the registered implementation, the
        # gradient (4x) and the SGD step (0.4x) on the device, a handle offset as Caffe's
        # GPU code offsets them (x + 3: 4 + 5 + 6) on every device; the CUDA runtime's device
        # count and a refused device number answer for the backend's devices.
        for backend in backends:
            for register, forward_ran in ((False, "CPU code"), (True, "device")):
                rc, out = run([exe] + ["--register_square"] * register, env=dict(user_env, BLOBRT_BACKEND=backend))
                check(rc == 0 and f"device={backend}:0 z=364 dy=84 sgd=8.4 offset_asum=15 cuda_devices=" in out
                      and "'invalid device ordinal" in out
                      and f"ran: SquareLayer Forward_gpu on {backend}:0: {forward_ran}" in out
                      and f"ran: SquareLayer Backward_gpu on {backend}:0: CPU code" in out,
                      f"{how} runs GPU mode on {backend} (square forward: {forward_ran})", out)
    elif how.endswith(": caffe_consumer"):
        # Caffe's 0.5 * (0 + 2 + ... + 46) with --scale=2: GlobalInit parsed the flag.
        for backend in backends:
            rc, out = run([exe, "--scale=2", "left"], env=dict(user_env, BLOBRT_BACKEND=backend))
            check(rc == 0 and f"device={backend}:0 asum=276 argc=2" in out, f"{how} runs on {backend}", out)
    elif how.endswith(": consumer"):
        # A subproject build is not installed: its plugins are nowhere a program looks.
        for backend in (["host"] if how.startswith("meson subproject") else backends):
            rc, out = run([exe], env=dict(user_env, BLOBRT_BACKEND=backend))
            check(rc == 0 and f"device={backend}:0 asum=254" in out, f"{how} runs on {backend}", out)
    else:
        rc, out = run(mpirun + [exe], env=user_env)
        check(rc == 0 and out.count("sum right") == 2, f"{how} sums across 2 ranks", out)

# 5. An out-of-tree plugin (examples/out-of-tree-plugin) on the installed SDK: its own meson
# project, dependency('blobrt') for the kit's headers, put in a plugins.d of its own and
# checked from the prefix with the conformance suite (or `blobrt selftest` where the prefix
# was built without GoogleTest, which leaves blobrt-conformance out).
plugin_src = os.path.join(root, "examples", "out-of-tree-plugin")
plugin_build = os.path.join(work, "out-of-tree-plugin")
shutil.rmtree(plugin_build, ignore_errors=True)
rc, out = run(["meson", "setup", plugin_build, plugin_src], env=user_env)
if check(rc == 0, "the out-of-tree plugin configures against the installed SDK", out):
    rc, out = run(["ninja", "-C", plugin_build], env=user_env)
    if check(rc == 0, "the out-of-tree plugin builds from the installed headers alone", out):
        plugin_dir = os.path.join(work, "plugins.d")
        shutil.rmtree(plugin_dir, ignore_errors=True)
        os.makedirs(plugin_dir)
        for name in ("libblobrt-tinycpu.so", "tinycpu.plugin"):
            shutil.copy(os.path.join(plugin_build, name), plugin_dir)
        plugin_env = dict(user_env, BLOBRT_PLUGIN_PATH=plugin_dir, BLOBRT_PLUGIN_CACHE="off")
        rc, info = run([blobrt_cmd, "info"], env=plugin_env)
        check(rc == 0 and "tinycpu" in info, "the installed `blobrt info` lists the out-of-tree plugin", info)
        conformance = os.path.join(prefix, "bin", "blobrt-conformance")
        if os.path.exists(conformance):
            rc, out = run([conformance, "--gtest_filter=*tinycpu*"], env=plugin_env)
            check(rc == 0 and "PASSED" in out and "tinycpu" in out,
                  "blobrt-conformance --gtest_filter='*tinycpu*' passes on the out-of-tree plugin", out)
        else:
            rc, out = run([blobrt_cmd, "selftest", "--backend", "tinycpu"], env=plugin_env)
            check(rc == 0, "`blobrt selftest --backend tinycpu` passes on the out-of-tree plugin", out)

finish()
