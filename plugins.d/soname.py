#!/usr/bin/env python3
"""Prints the SONAMEs of shared libraries, for a plugin manifest's `requires` line.

usage: soname.py DIR[:DIR...] libfoo.so [libbar.so ...]
Each linker name is looked up in the given directories, the default ones, then the\ndynamic linker's cache; its
DT_SONAME is read with readelf. A library that cannot be found is printed unchanged.
"""
import os
import subprocess
import sys

DEFAULT_DIRS = ["/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                "/lib/x86_64-linux-gnu"]


def ldconfig_paths(name):
    """Where the dynamic linker's cache says NAME lives (e.g. CUDA's lib dir)."""
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    except OSError:
        return []
    return [line.split("=>", 1)[1].strip() for line in out.splitlines()
            if line.strip().startswith(name + " ") and "=>" in line]


def soname(name, dirs):
    for path in [os.path.join(d, name) for d in dirs] + ldconfig_paths(name):
        if os.path.exists(path):
            out = subprocess.run(["readelf", "-d", os.path.realpath(path)],
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                if "(SONAME)" in line and "[" in line:
                    return line.split("[", 1)[1].split("]", 1)[0]
    return name


def main():
    dirs = [d for d in sys.argv[1].split(":") if d] + DEFAULT_DIRS
    print(" ".join(soname(n, dirs) for n in sys.argv[2:]))


if __name__ == "__main__":
    main()
