#!/usr/bin/env python3
"""The version rules of docs/packaging.md, held where they are written, so that a core and a
plugin of different ABI majors can never be installed together by apt or pip:
- the plugin ABI major (blobrt/plugin_abi.h) is the virtual package libblobrt<major> provides
  (blobrt-abi-<major>), which every blobrt-plugin-* package depends on;
- the runtime package's name carries the soname major (libblobrt1: libblobrt.so.1);
- meson's project version, debian/changelog's, the core wheel's and the CUDA plugin wheel's
  are one version; the core's cuda13 extras pin the plugin wheel to it, and the plugin wheel
  requires a core of its ABI major.

usage: packaging_versions_test.py SOURCE_ROOT      ("packaging: N passed, N failed")"""
import os
import re
import sys
import tomllib

root = sys.argv[1]
passed = failed = 0


def check(ok, what):
    global passed, failed
    print(("ok: " if ok else "FAIL: ") + what)
    passed, failed = passed + bool(ok), failed + (not ok)


def read(path):
    with open(os.path.join(root, path)) as f:
        return f.read()


abi_major = int(re.search(r"#define BLOBRT_PLUGIN_ABI_MAJOR (\d+)", read("core/include/blobrt/plugin_abi.h")).group(1))
version = re.search(r"^project\('blobrt'.*?version: '([^']+)'", read("meson.build"), re.S | re.M).group(1)
soversion = re.search(r"'soversion': '(\d+)'", read("core/meson.build")).group(1)

stanzas = [dict(re.findall(r"^([A-Za-z-]+): ?((?:.*\n?)(?: .*\n?)*)", s, re.M)) for s in read("debian/control").split("\n\n")]
packages = {s["Package"].strip(): s for s in stanzas if "Package" in s}
runtime = f"libblobrt{soversion}"
check(runtime in packages, f"the runtime package is named after the soname major ({runtime})")
provides = packages.get(runtime, {}).get("Provides", "")
check(f"blobrt-abi-{abi_major}" in provides, f"{runtime} provides blobrt-abi-{abi_major} (plugin_abi.h's major)")
plugins = [name for name in packages if name.startswith("blobrt-plugin-")]
check(len(plugins) >= 3, f"there are plugin packages ({plugins})")
for name in plugins:
    depends = re.sub(r"\s+", " ", packages[name].get("Depends", ""))
    check(f"blobrt-abi-{abi_major}" in depends and "blobrt-abi-" + str(abi_major + 1) not in depends,
          f"{name} depends on blobrt-abi-{abi_major}")
changelog = re.match(r"blobrt \(([^)]+)\)", read("debian/changelog")).group(1)
check(changelog.split("-")[0] == version, f"debian/changelog's version ({changelog}) is meson's ({version})")

core = tomllib.loads(read("pyproject.toml"))["project"]
plugin = tomllib.loads(read("packaging/blobrt-cuda13/pyproject.toml"))["project"]
check(core["version"] == version, f"the core wheel's version ({core['version']}) is meson's")
check(plugin["version"] == version, f"the CUDA plugin wheel's version ({plugin['version']}) is meson's")
extras = core.get("optional-dependencies", {})
for extra in ("cuda13", "cuda13-local"):
    pins = extras.get(extra, [])
    check(any(re.fullmatch(r"blobrt-cuda13(\[[a-z-]+\])?==" + re.escape(version), p) for p in pins),
          f"blobrt[{extra}] pins blobrt-cuda13 to the core's version ({pins})")
requirement = [d for d in plugin["dependencies"] if d.startswith("blobrt")]
check(requirement == [f"blobrt>={abi_major}.0.0,<{abi_major + 1}"],
      f"blobrt-cuda13 requires a core of ABI major {abi_major} ({requirement})")
check(not any("cuda" in str(a).lower() for a in tomllib.loads(read("pyproject.toml"))["tool"]["meson-python"]["args"]["install"]),
      "the core wheel's install tags leave CUDA out")

print(f"packaging: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
