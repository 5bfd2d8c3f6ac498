"""``python -m blobrt info|selftest|inspect ...`` and the ``blobrt`` command of a wheel: runs the
`blobrt` program shipped with this package (next to its libblobrt), with the same arguments.

A wheel keeps its compiled programs inside the package, beside libblobrt and the plugins
(where their library paths are right wherever the venv lives), and `pip` puts a small
`blobrt` launcher on the venv's PATH that comes here.
"""
from __future__ import annotations

import os
import shutil
import sys


def _libblobrt_directory() -> str | None:
    """The directory of the libblobrt this package loaded (the extension links it)."""
    from . import _blobrt  # noqa: F401  (loads libblobrt)

    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ", 5)[-1].strip()
                if os.path.basename(path).startswith("libblobrt.so"):
                    return os.path.dirname(path)
    except OSError:
        pass
    return None


def program(name: str = "blobrt") -> str | None:
    """The path of one of blobrt's programs: the one beside this package's libblobrt (a
    wheel ships them in <libdir>/blobrt), else the one on PATH (a system install)."""
    directory = _libblobrt_directory()
    if directory:
        candidate = os.path.join(directory, "blobrt", name)
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    # Not this launcher itself (a wheel's console script has the same name).
    if found and os.path.realpath(found) != os.path.realpath(sys.argv[0]):
        return found
    return None


def main() -> None:
    path = program()
    if path is None:
        sys.stderr.write("blobrt: the blobrt program is not installed with this Python package "
                         "(build it with meson, or pip install the blobrt wheel)\n")
        sys.exit(127)
    os.execv(path, ["blobrt"] + sys.argv[1:])


if __name__ == "__main__":
    main()
