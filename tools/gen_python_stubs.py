#!/usr/bin/env python3
"""Writes python/blobrt/_blobrt.pyi from the built extension with nanobind's stubgen,
declaring the members blobrt/__init__.py adds to Blob (from_numpy, from_dlpack) in the
class, where type checkers look for them.

usage: PYTHONPATH=build/python python3 tools/gen_python_stubs.py OUTPUT.pyi
(tests/python/test_blobrt.py checks that the checked-in stub is what this writes)."""
import re
import sys

from nanobind.stubgen import StubGen

import blobrt._blobrt as ext


def stub_text():
    gen = StubGen(ext)
    gen.put(ext)
    text = gen.get()
    # stubgen sees the Python-level members as imports from blobrt; declare them instead.
    text = re.sub(r"from blobrt import \([^)]*\)\n\n?", "", text)
    text = text.replace("from collections.abc import Sequence\n",
                        "from collections.abc import Sequence\n\nimport numpy\n", 1)
    members = '''
    @classmethod
    def from_numpy(cls, array: numpy.ndarray) -> "Blob":
        """A new Blob with a copy of a float32 or float64 array."""

    @classmethod
    def from_dlpack(cls, x: object) -> "Blob":
        """A new Blob with a copy of any DLPack exporter's CPU data."""
'''
    marker = "    def __repr__(self) -> str: ..."
    if marker not in text:
        sys.exit("gen_stubs: stubgen output changed shape (no __repr__ in Blob)")
    text = text.replace(marker, marker + "\n" + members, 1)
    return "import blobrt\n" + text


if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        f.write(stub_text())
