#!/usr/bin/env python3
"""Writes python/blobrt/_blobrt.pyi from the built extension with nanobind's stubgen.

Every signature a type checker needs is declared in python/src/*.cpp (nb::sig),
so the stub is stubgen's output as it is; tests/python/test_blobrt.py checks that the
checked-in stub is what this writes, and tests/typing/typing_test.py type-checks code against it
(mypy --strict, pyright).

usage: PYTHONPATH=build/python python3 tools/gen_python_stubs.py OUTPUT.pyi"""
import sys

from nanobind.stubgen import StubGen

import blobrt._blobrt as ext


def stub_text() -> str:
    gen = StubGen(ext)
    gen.put(ext)
    return gen.get()


if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        f.write(stub_text())
