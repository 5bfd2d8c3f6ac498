#!/usr/bin/env python3
"""Prints the SONAMEs of shared libraries, for a plugin manifest's `requires` line.

usage: soname.py DIR[:DIR...] libfoo.so [libbar.so ...]
Each linker name is looked up in the given directories, then the default ones; its
DT_SONAME is read with readelf. A library that cannot be found is printed unchanged.
"""
import os
import subprocess
import sys

DEFAULT_DIRS = ["/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                "/lib/x86_64-linux-gnu"]


def soname(name, dirs):
    for d in dirs:
        path = os.path.join(d, name)
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
