"""blobrt.inspect() and `blobrt inspect --json` are one computation (report/inspect_report.cpp):
the same keys and the same numbers, for binary and text files, float32 and float64, with
and without a diff, empty, non-finite and legacy 4-D ones (docs/blobrt-inspect.schema.json)."""
from pathlib import Path
from typing import Any
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import blobrt
import blobrt.__main__
from conftest import DATA

REF = os.path.join(DATA, "ref_float_2x3x4x5_diff")
BUILD_TOOL = os.path.join(os.path.dirname(blobrt.__file__), "..", "..", "cli", "blobrt")


def tool() -> str:
    """The build tree's `blobrt`, else the one beside the installed package's libblobrt."""
    found = BUILD_TOOL if os.path.exists(BUILD_TOOL) else blobrt.__main__.program()
    if found is None:
        pytest.skip("no blobrt program with this package")
    return found


def cli_inspect(path: str) -> dict[str, Any]:
    r = subprocess.run([tool(), "inspect", "--json", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    parsed: dict[str, Any] = json.loads(r.stdout)
    return parsed


def saved(tmp_path: Path, name: str, values: Any, dtype: Any, diff: Any = None, binary: bool = True) -> str:
    b = blobrt.Blob.from_numpy(np.asarray(values, dtype=dtype))
    if diff is not None:
        b.diff[...] = diff
    path = str(tmp_path / name)
    b.save(path, binary=binary, write_diff=diff is not None)
    return path


def files(tmp_path: Path) -> list[str]:
    legacy = tmp_path / "legacy.prototxt"
    legacy.write_text("num: 1 channels: 2 height: 1 width: 2\ndata: [1.5, -2.25, 3, 0.1]\n")
    return [
        REF + ".binaryproto",                                                    # binary, float32, diff
        REF + ".prototxt",                                                       # text
        saved(tmp_path, "double", [[1e-300, 2.5, -3.0], [0.1, 7, 8]], np.float64,
              diff=[[0.5, 0.25, 1 / 3], [1e10, -1e-10, 0]]),                     # float64 with diff
        saved(tmp_path, "double.txt", [0.1, 0.2, 0.3], np.float64, binary=False),
        saved(tmp_path, "float", np.arange(24).reshape(2, 3, 4) / 7, np.float32),  # no diff
        saved(tmp_path, "nonfinite", [1.0, np.nan, np.inf, -2.0], np.float32, diff=[np.nan] * 4),
        saved(tmp_path, "empty", np.zeros((2, 0, 3)), np.float32),
        str(legacy),
    ]


def test_inspect_is_what_the_command_prints(tmp_path: Path) -> None:
    for path in files(tmp_path):
        mine, theirs = blobrt.inspect(path), cli_inspect(path)
        assert list(mine) == list(theirs), path          # the same keys, in the same order
        for key in theirs:
            assert mine[key] == theirs[key], (path, key, mine[key], theirs[key])


def test_inspect_statistics(tmp_path: Path) -> None:
    r = blobrt.inspect(REF + ".binaryproto")
    assert r["schema_version"] == 1 and r["shape"] == [2, 3, 4, 5] and r["count"] == 120
    assert r["dtype"] == "float32" and r["has_diff"] and not r["legacy_4d"]
    assert r["data"]["asum"] == 2835 and r["diff"]["max"] == 30.0 and r["diff"]["sumsq"] == 36451.25

    paths = files(tmp_path)
    double = blobrt.inspect(Path(paths[2]))                      # os.PathLike too
    assert double["dtype"] == "float64" and double["data"]["min"] == -3.0 and double["diff"]["max"] == 1e10
    assert double["diff"]["asum"] == 0.5 + 0.25 + 1 / 3 + 1e10 + 1e-10  # in double, summed in order
    nonfinite = blobrt.inspect(paths[5])
    assert nonfinite["data"] == {"min": -2.0, "max": 1.0, "mean": -0.5, "asum": 3.0, "sumsq": 5.0, "non_finite": 2}
    assert nonfinite["diff"]["min"] is None and nonfinite["diff"]["non_finite"] == 4
    assert blobrt.inspect(paths[4])["diff"] is None
    assert blobrt.inspect(paths[6])["data"] is None
    assert blobrt.inspect(paths[7])["legacy_4d"] and blobrt.inspect(paths[7])["shape"] == [1, 2, 1, 2]


def test_inspect_format_and_errors(tmp_path: Path) -> None:
    assert blobrt.inspect(REF + ".prototxt", format="text")["data"] == blobrt.inspect(REF + ".binaryproto")["data"]
    with pytest.raises(blobrt.MissingFileError):
        blobrt.inspect(str(tmp_path / "nothing"))
    with pytest.raises(blobrt.InvalidValueError, match="format must be"):
        blobrt.inspect(REF + ".prototxt", format="json")
    bad = tmp_path / "mismatch.prototxt"
    bad.write_text("shape { dim: 3 }\ndata: [1, 2]\n")   # 3 values promised, 2 given
    with pytest.raises(blobrt.Error, match=str(bad)):
        blobrt.inspect(str(bad))
    r = subprocess.run([tool(), "inspect", "--json", str(bad)], capture_output=True, text=True)
    assert r.returncode == 1 and str(bad) in r.stderr


def test_a_file_over_2gib_is_refused_at_once(tmp_path: Path) -> None:
    # Issue 48: a 2 GiB + 4 KiB file took `blobrt inspect` 34 s and 3.1 GB before it was
    # refused. No message is that large: refused from its size, naming the file and the size.
    import time
    path = tmp_path / "huge.caffemodel"
    with open(path, "wb") as f:
        f.truncate(2 * 1024 ** 3 + 4096)  # sparse: 4 KiB on disk
    start = time.monotonic()
    for read in (blobrt.load, blobrt.inspect, blobrt.load_caffemodel):
        with pytest.raises(blobrt.Error, match=f"{path}: the file is 2147487744 bytes"):
            read(path)
    r = subprocess.run([tool(), "inspect", str(path)], capture_output=True, text=True)
    assert r.returncode == 1 and f"{path}: the file is 2147487744 bytes (2.0 GiB)" in r.stderr, r.stderr
    assert time.monotonic() - start < 5


def test_running_out_of_memory_names_the_file(tmp_path: Path) -> None:
    # Issue 48: a model read under a memory limit gave a bare MemoryError naming no file. A
    # child process under a small RLIMIT_AS reads a 512 MiB file: blobrt.OutOfMemoryError (a
    # MemoryError and a blobrt.Error) naming the file and its size.
    if os.environ.get("ASAN_OPTIONS") is not None or "asan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("AddressSanitizer reserves more address space than any small RLIMIT_AS")
    path = tmp_path / "big.caffemodel"
    with open(path, "wb") as f:
        f.truncate(512 * 1024 ** 2)
    script = (
        "import os, resource, sys, blobrt\n"
        "pages = int(open('/proc/self/statm').read().split()[0])\n"
        "limit = pages * os.sysconf('SC_PAGE_SIZE') + (128 << 20)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "for read in (blobrt.load, blobrt.load_caffemodel):\n"
        "    try:\n"
        "        read(sys.argv[1])\n"
        "        sys.exit('read anyway: the limit did not bite')\n"
        "    except blobrt.OutOfMemoryError as e:\n"
        "        assert isinstance(e, MemoryError) and sys.argv[1] in str(e) and '536870912 bytes' in str(e), str(e)\n")
    r = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
