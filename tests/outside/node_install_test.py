#!/usr/bin/env python3
"""blobrt installed as a cluster's nodes get it, each in a clean Debian 12 root made with
mmdebstrap (minbase + python3 + python3-venv, nothing else), with no network but Debian's
mirror and PyPI (docs/packaging.md):

1. The portable wheel, in a venv of the root's own python3, before anything else is there:
   it carries or declares all it links, so `import blobrt`, the wheel's `blobrt` command and
   the pytest suite work on a root without one build dependency. It holds no CUDA file.
2. A CPU node: the runtime, tools, blis and opencl plugins and python3-blobrt from the .debs,
   installed by apt with what they pull from Debian (PoCL through the opencl plugin's
   Recommends): `blobrt info` finds both plugins (and lists a plugin of another ABI major,
   copied beside them, as not loaded), `blobrt-conformance` passes on every device,
   Debian's python3 imports blobrt, and no CUDA file is installed.
3. A GPU node's set: the CUDA plugin and libblobrt-dist's NCCL part from the .debs, the
   CUDA plugin wheel in the venv (`blobrt[cuda13-local]`). Without NVIDIA's libraries
   `blobrt info` gives the missing one as the reason; with the node's own (this machine's
   /usr/local/cuda, mounted read-only as NVIDIA's packages would install it) the reason is
   the missing driver and the CUDA runtime file is named; with NVIDIA's pip runtime in the
   venv, `blobrt info` names pip's file for it (scanner child and in process). A .deb's and
   the wheel's cuda on one search path: one used, the other shown shadowed. Nothing of it
   breaks the CLI or `import blobrt`.

usage: node_install_test.py SOURCE_ROOT DEB_DIR WHEEL_DIR WORK_DIR JUNIT_XML
Prints one line per check and "node-install: N passed, N failed"; writes JUnit."""
import glob
import json
import os
import shutil
import sys
import zipfile

from clean_root import Checks, run

root, debs, wheels, work, junit = (os.path.abspath(a) for a in sys.argv[1:6])
checks = Checks("node-install", junit)

wheel_files = glob.glob(os.path.join(wheels, "blobrt-*manylinux*.whl"))
if not checks.check(len(wheel_files) == 1, "one manylinux wheel was built", f"found {wheel_files}"):
    checks.finish()
wheel = wheel_files[0]
names = zipfile.ZipFile(wheel).namelist()
checks.check(not [n for n in names if "cuda" in n.lower()], "the core wheel holds no CUDA file",
             "\n".join(n for n in names if "cuda" in n.lower()))

chroot_dir = os.path.join(work, "root")
checks.make_root(chroot_dir, "python3,python3-venv")


def in_root(script: str, name: str, want=lambda rc, out: rc == 0) -> tuple[int, str]:
    rc, out, secs = checks.in_root(chroot_dir, "set -e\n" + script)
    checks.check(want(rc, out), name, f"exit {rc}\n{out}", secs)
    return rc, out


def plugins(out: str) -> dict:
    """blobrt info --json's plugins by name ({} when the output is no JSON)."""
    try:
        return {p["name"]: p for p in json.loads(out[out.index("{"):])["plugins"]}
    except (ValueError, KeyError):
        return {}


# 1. The wheel in a venv, on a root with nothing but python3.
os.makedirs(os.path.join(chroot_dir, "tmp/wheel"))
shutil.copy(wheel, os.path.join(chroot_dir, "tmp/wheel"))
for tree in ("tests/python", "tests/data"):
    shutil.copytree(os.path.join(root, tree), os.path.join(chroot_dir, "tmp/blobrt-tests", tree))
in_root("python3 -m venv /opt/venv && /opt/venv/bin/pip install -q /tmp/wheel/*.whl pytest",
        "pip installs the wheel and pytest into a venv of the root's python3")
rc, out = in_root("/opt/venv/bin/blobrt info --json", "the wheel's `blobrt info` runs on the bare root")
found = plugins(out)
checks.check(found.get("blis", {}).get("usable") and "opencl" in found,
             "the wheel's blis plugin is usable and its opencl plugin listed (no ICD on the root)",
             json.dumps(found, indent=1)[:3000])
in_root("cd /tmp/blobrt-tests && BLOBRT_TEST_DATA_DIR=/tmp/blobrt-tests/tests/data BLOBRT_EXPECT_PACKAGED_PLUGINS=1 "
        "/opt/venv/bin/python -m pytest -q -p no:cacheprovider tests/python",
        "the pytest suite passes against the installed wheel")

# 2. A CPU node from the .debs.
# The packages as a site's own apt repository serves them (a flat repository, its Packages
# index made by dpkg-scanpackages), so apt resolves them by name as a node's would.
repo = os.path.join(chroot_dir, "srv/blobrt-debs")
os.makedirs(repo)
for deb in glob.glob(os.path.join(debs, "*.deb")):
    shutil.copy(deb, repo)
rc, out, _ = run(["bash", "-c", "dpkg-scanpackages --multiversion . > Packages"], cwd=repo)
checks.check(rc == 0, "the .debs are indexed as an apt repository (dpkg-scanpackages)", out)
with open(os.path.join(chroot_dir, "etc/apt/sources.list.d/blobrt.list"), "w") as f:
    f.write("deb [trusted=yes] file:/srv/blobrt-debs ./\n")
cpu_set = ["libblobrt1", "blobrt-tools", "blobrt-plugin-blis", "blobrt-plugin-opencl", "python3-blobrt"]
in_root("export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq "
        + " ".join(cpu_set) + " > /tmp/apt-cpu.log; tail -3 /tmp/apt-cpu.log",
        "apt installs the CPU node's packages (" + ", ".join(cpu_set) + ") and what they pull")
rc, out = in_root("blobrt info --json", "`blobrt info` runs on the CPU node")
found = plugins(out)
checks.check(found.get("blis", {}).get("usable") and found.get("opencl", {}).get("usable"),
             "the CPU node's blis and opencl (PoCL) plugins are usable", json.dumps(found, indent=1)[:3000])
checks.check(all(p.get("manifest", "").startswith("/usr/lib/") for n, p in found.items() if not p.get("builtin")),
             "the plugins come from the packages' plugins.d", json.dumps(found, indent=1)[:3000])
# A plugin of another ABI major beside the node's (a newer blobrt's, copied in by hand; the
# packages' blobrt-abi-N dependency keeps apt from doing it): listed with why it is not
# loaded, and it takes nothing from the node's own blis.
rc, out = in_root("mkdir -p /opt/abi2 && sed 's/^abi = .*/abi = 2.0/' /usr/lib/x86_64-linux-gnu/blobrt/plugins.d/blis.plugin "
                  "> /opt/abi2/blis.plugin && cp /usr/lib/x86_64-linux-gnu/blobrt/plugins.d/libblobrt-blis.so /opt/abi2/ && "
                  "BLOBRT_PLUGIN_PATH=/opt/abi2 blobrt info --json",
                  "`blobrt info` runs with a plugin of another ABI major on the search path")
reports = json.loads(out[out.index("{"):])["plugins"] if "{" in out else []
blis = [p for p in reports if p["name"] == "blis"]
checks.check(len(blis) == 2 and "manifest declares ABI 2.0" in (blis[0]["reason"] or "") and blis[1]["usable"]
             and blis[1]["manifest"].startswith("/usr/lib/"),
             "a plugin of another ABI major is listed as not loaded and the packaged blis is used",
             json.dumps(blis, indent=1))
in_root("blobrt-conformance --gtest_brief=1 2>&1 | tail -5", "blobrt-conformance passes on every device of the CPU node",
        lambda rc, out: rc == 0 and "FAILED" not in out)
in_root("cd / && python3 -c 'import blobrt, sys; b = blobrt.Blob([2, 3]); b.data[:] = 1; "
        "print(blobrt.__file__, b.asum_data()); sys.exit(b.asum_data() != 6)'",
        "Debian's python3 imports python3-blobrt and uses a Blob")
rc, out = in_root("dpkg -L $(dpkg-query -W -f '${Package}\\n' | grep blobrt) | grep -i cuda || true; "
                  "find / -xdev -path /srv/blobrt-debs -prune -o \\( -name 'libcudart*' -o -name 'libcublas*' "
                  "-o -name '*blobrt*cuda*' \\) -print",
                  "the CPU node has no CUDA file (the blobrt packages' files, then the whole root)",
                  lambda rc, out: rc == 0 and out.strip() == "")

# 3. A GPU node's set, from the .debs and from the plugin wheel, first without NVIDIA's
# libraries, then with the node's own (this machine's /usr/local/cuda, mounted read-only and
# added to ld.so.conf as NVIDIA's packages do), then with pip's CUDA runtime in the venv.
# There is no driver throughout: the plugin is listed with its reason, never used.
cuda_wheels = glob.glob(os.path.join(wheels, "blobrt_cuda13-*.whl"))
in_root("export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq blobrt-plugin-cuda libblobrt-dist-nccl "
        "> /tmp/apt-gpu.log; tail -3 /tmp/apt-gpu.log",
        "apt adds the GPU node's packages (blobrt-plugin-cuda, libblobrt-dist-nccl)")
if checks.check(len(cuda_wheels) == 1, "the CUDA plugin wheel was built", f"found {cuda_wheels}"):
    shutil.copy(cuda_wheels[0], os.path.join(chroot_dir, "tmp/wheel"))
    in_root("/opt/venv/bin/pip install -q --no-index --find-links /tmp/wheel 'blobrt[cuda13-local]'",
            "pip adds the CUDA plugin wheel to the venv (blobrt[cuda13-local], pinned to the core's version)")

deb_info = "BLOBRT_LOG=error blobrt info --json"
venv_info = "BLOBRT_LOG=error /opt/venv/bin/blobrt info --json"


def cuda_of(script: str, what: str) -> dict:
    rc, out = in_root(script, f"`blobrt info` runs ({what})")
    return plugins(out).get("cuda", {})


cuda = cuda_of(deb_info, "the .debs' CUDA plugin, no CUDA runtime")
checks.check(cuda and not cuda.get("usable") and "missing dependency libcudart" in (cuda.get("reason") or ""),
             "without NVIDIA's libraries the .deb's cuda plugin names the missing runtime", json.dumps(cuda, indent=1))
if cuda_wheels:
    cuda = cuda_of(venv_info, "the wheel's CUDA plugin, no CUDA runtime")
    checks.check(cuda and "/blobrt_plugins/cuda13/" in (cuda.get("manifest") or "")
                 and "nor in the manifest's library_path" in (cuda.get("reason") or ""),
                 "the venv finds the plugin wheel's cuda plugin, which names the missing runtime and where it looked",
                 json.dumps(cuda, indent=1))
cuda_mount = os.path.join(chroot_dir, "usr/local/cuda")
if os.path.isdir("/usr/local/cuda/lib64"):
    os.makedirs(cuda_mount, exist_ok=True)
    rc, out2, _ = run(["mount", "--bind", "-o", "ro", "/usr/local/cuda", cuda_mount])
    if checks.check(rc == 0, "NVIDIA's CUDA libraries mounted in the root (/usr/local/cuda, read-only)", out2):
        checks.mounts.append(cuda_mount)
        in_root("echo /usr/local/cuda/lib64 > /etc/ld.so.conf.d/cuda.conf && ldconfig", "ld.so.conf names CUDA's libraries")
        for script, what in ((deb_info, "the .deb's"), (venv_info, "the wheel's")):
            cuda = cuda_of(script, f"{what} CUDA plugin, the node's CUDA, no driver")
            checks.check(cuda and not cuda.get("usable") and "driver" in (cuda.get("reason") or "").lower()
                         and (cuda.get("requires_found") or [""])[0].startswith("/usr/local/cuda/"),
                         f"{what} cuda plugin is listed with its no-driver reason and the node's CUDA runtime file",
                         json.dumps(cuda, indent=1))
        in_root("blobrt info | grep -A3 '^  cuda' && /opt/venv/bin/python -c 'import blobrt; print(blobrt.__file__)' "
                "&& python3 -c 'import blobrt; print(blobrt.__file__)'",
                "the CLI and `import blobrt` work beside the unusable cuda plugin")
        if cuda_wheels:
            # pip's CUDA runtime beside the node's: the plugin wheel's RUNPATH and library_path
            # prefer pip's, and `blobrt info` says which file each library really came from,
            # from the scanner child and from an in-process probe alike.
            in_root("/opt/venv/bin/pip install -q 'nvidia-cuda-runtime==13.0.*'",
                    "pip installs NVIDIA's CUDA 13 runtime wheel into the venv")
            for probe in ("", "BLOBRT_PLUGIN_PROBE=inprocess "):
                cuda = cuda_of(probe + venv_info, "pip's CUDA runtime, the node's cuBLAS" + (", in process" if probe else ""))
                found = cuda.get("requires_found") or ["", ""]
                checks.check("/opt/venv/lib/" in (found[0] or "") and "/nvidia/cu13/lib/libcudart.so.13" in (found[0] or "")
                             and (found[1] or "").startswith("/usr/local/cuda/"),
                             "`blobrt info` names pip's CUDA runtime and the node's cuBLAS as the files loaded"
                             + (" (in-process probe)" if probe else " (scanner child)"), json.dumps(cuda, indent=1))
            # Two providers of `cuda` (the .deb's and the wheel's): the first in the search
            # path is used, the other listed as shadowed by it.
            rc, out = in_root("BLOBRT_PLUGIN_PATH=/usr/lib/x86_64-linux-gnu/blobrt/plugins.d " + venv_info,
                              "`blobrt info` runs with the .deb's plugins on BLOBRT_PLUGIN_PATH beside the wheel's")
            reports = json.loads(out[out.index("{"):])["plugins"] if "{" in out else []
            cudas = [p for p in reports if p["name"] == "cuda"]
            checks.check(len(cudas) == 2 and cudas[0]["manifest"].startswith("/usr/lib/")
                         and cudas[1]["status"] == "shadowed" and cudas[0]["manifest"] in cudas[1]["reason"],
                         "two providers of cuda: the first in the search path is used, the other shown shadowed by it",
                         json.dumps(cudas, indent=1))
checks.finish()
