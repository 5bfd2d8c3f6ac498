"""BlobProto files: binary or text is decided once, from the file itself (blobrt/io.hpp,
BlobProtoFormatSniffer), by blobrt.load, blobrt.inspect and `blobrt inspect` alike; a
valid file never loads as a different Blob, and a pipe or FIFO is read once."""
from pathlib import Path
from typing import Any

import numpy.typing as npt
import math
import os
import random
import subprocess
import sys

import numpy as np
import pytest

import blobrt

TOOL = os.path.join(os.path.dirname(blobrt.__file__), "..", "..", "cli", "blobrt")


def _value_text(rng: random.Random, v: float) -> str:
    if math.isnan(v):
        return rng.choice(["nan", "NaN", "-nan"])
    if math.isinf(v):
        return ("-" if v < 0 else "") + rng.choice(["inf", "infinity", "Infinity"])
    return rng.choice([repr(v), "%.9g" % v, "%e" % v])


def _space(rng: random.Random) -> str:
    return "".join(rng.choice([" ", "\n", "\t", "  ", "\r\n", "# a comment\n", ""]) for _ in range(rng.randint(0, 3)))


def random_text_blob(rng: random.Random) -> "tuple[str, tuple[int, ...], Any, npt.NDArray[Any], npt.NDArray[Any] | None]":
    """A valid text BlobProto with its expected shape, dtype and values (float64 exact)."""
    ndim = rng.randint(0, 4)
    shape = [rng.randint(0, 4) for _ in range(ndim)]
    count = int(np.prod(shape)) if shape else 1
    double = rng.random() < 0.3
    pool = [0.0, -0.0, 1.0, -2.5, 100.0, 1e-3, 3.25, float("nan"), float("inf"), float("-inf")]
    values = [rng.choice(pool) for _ in range(count)]
    diff = [rng.choice(pool) for _ in range(count)] if rng.random() < 0.3 else None
    prefix = "double_" if double else ""
    if rng.random() < 0.5 and count > 0:
        data_parts = [prefix + "data: [" + ", ".join(_value_text(rng, v) for v in values) + "]"]
    else:
        data_parts = [prefix + "data: " + _value_text(rng, v) for v in values]
    diff_parts = [] if diff is None else [prefix + "diff:" + _space(rng) + _value_text(rng, v) for v in diff]
    # Fields come in any order; the values of one field keep theirs.
    parts = []
    while data_parts or diff_parts:
        source = data_parts if data_parts and (not diff_parts or rng.random() < 0.5) else diff_parts
        parts.append(source.pop(0))
    parts.insert(rng.randint(0, len(parts)),
                 "shape {" + _space(rng) + "".join("dim: %d " % d + _space(rng) for d in shape) + "}")
    text = _space(rng) + "".join(p + rng.choice(["\n", " ", "\t", "\n\n"]) for p in parts) + _space(rng)
    # A file without values does not say its precision: it loads as float32 (docs/python.md).
    dtype = np.float64 if double and count > 0 else np.float32
    return text, tuple(shape), dtype, np.array(values, dtype=dtype).reshape(shape), \
        None if diff is None else np.array(diff, dtype=dtype).reshape(shape)


def _same(a: npt.NDArray[Any], b: npt.NDArray[Any]) -> bool:
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def test_generated_text_files_load_as_themselves(device: str, tmp_path: Path) -> None:
    rng = random.Random(20000)
    wrong = []
    for i in range(3000):
        text, shape, dtype, data, diff = random_text_blob(rng)
        path = tmp_path / ("t%d.prototxt" % (i % 50))
        path.write_text(text)
        try:
            b = blobrt.load(str(path))
        except blobrt.Error as e:
            wrong.append((text, "refused: %s" % e))
            continue
        if b.shape != shape or b.dtype != dtype or not _same(b.data, data) or \
                (diff is not None and not _same(b.diff, diff)):
            wrong.append((text, "loaded as shape %s dtype %s" % (b.shape, b.dtype)))
    assert not wrong, "%d of 3000 text files misread, e.g. %r" % (len(wrong), wrong[:3])


def test_text_that_also_parses_as_binary_loads_as_text(device: str, tmp_path: Path) -> None:
    # Found by the test above under "binary first": '\n' is a tag of field 1, 'd' a length
    # of 100, the rest fields BlobProto does not define; as text it is the Blob it says.
    text = ("\ndata: [0.0, 3.25, 1.000000e-03, 1.000000e+02, -0.0, 1, 1, 3.250000e+00]\tshape {\n\tdim: 4 dim: 2 "
            "\n\r\ndim: 1 # a comment\n\t\tdim: 1   }\n\n\t  \n")
    path = tmp_path / "ambiguous.prototxt"
    path.write_text(text)
    b = blobrt.load(str(path))
    assert b.shape == (4, 2, 1, 1) and b.data[1, 0, 0, 0] == 1e-3 and b.data[3, 1, 0, 0] == 3.25
    assert blobrt.inspect(str(path))["shape"] == [4, 2, 1, 1]
    # Forced to binary, it is refused: its binary parse is fields BlobProto does not define or
    # of the wrong wire type, which was once returned as an empty Blob (issue 48).
    with pytest.raises(blobrt.Error, match="not a BlobProto"):
        blobrt.load(str(path), format="binary")


def test_binary_files_load_as_binary(device: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    for shape in [(), (0,), (3,), (2, 0, 3), (2, 3, 4)]:
        for dtype in (np.float32, np.float64):
            b = blobrt.Blob(shape, dtype=dtype)
            b.data[...] = rng.standard_normal(shape)
            b.save(str(tmp_path / "b.binaryproto"), write_diff=True)
            back = blobrt.load(str(tmp_path / "b.binaryproto"))
            assert back.shape == shape and _same(back.data, b.data) and _same(back.diff, b.diff)
            if b.count:
                assert back.dtype == dtype   # a Blob without values has no precision in the file


FIFO_WRITER = """
import os, sys, time
path, payload = sys.argv[1], open(sys.argv[2], "rb").read()
with open(path, "wb") as f:
    f.write(payload)
time.sleep(3)
while True:   # until killed: lets a reader blocked in a second open() see an empty input
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass
    time.sleep(0.1)
"""


def _fifo(tmp_path: Path, payload_file: Path) -> "tuple[str, subprocess.Popen[bytes]]":
    """A FIFO with the payload written into it once, by another process. A reader that opens
    it a second time (a second guess at the format) would wait forever: after a few seconds
    the writer opens and closes it again so that such a reader sees an empty input and fails."""
    path = str(tmp_path / "fifo")
    os.mkfifo(path)
    return path, subprocess.Popen([sys.executable, "-c", FIFO_WRITER, path, str(payload_file)])


@pytest.mark.parametrize("binary", [True, False])
def test_fifo_and_pipe_are_read_once(device: str, tmp_path: Path, binary: bool) -> None:
    b = blobrt.Blob((2, 3))
    b.data[...] = np.arange(6).reshape(2, 3)
    b.save(str(tmp_path / "src"), binary=binary)
    payload = (tmp_path / "src").read_bytes()
    path, writer = _fifo(tmp_path, tmp_path / "src")
    try:
        back = blobrt.load(path)                # a FIFO can be read only once: no second guess
    finally:
        writer.kill()
        writer.wait()
    assert back.shape == (2, 3) and _same(back.data, b.data)
    # inspect of a FIFO too: a model file is tried first only where the path is a regular file.
    os.unlink(path)
    path, writer = _fifo(tmp_path, tmp_path / "src")
    try:
        report = blobrt.inspect(path)
    finally:
        writer.kill()
        writer.wait()
    assert report["shape"] == [2, 3] and report["data"]["asum"] == 15, report
    r = subprocess.run([TOOL if os.path.exists(TOOL) else "false", "inspect", "-"], input=payload,
                       capture_output=True)
    if os.path.exists(TOOL):
        assert r.returncode == 0 and b"shape 2 3 (6)" in r.stdout, r.stderr


def test_blobrt_inspect_reads_both_formats(tmp_path: Path) -> None:
    if not os.path.exists(TOOL):
        pytest.skip("no blobrt tool next to the build's package")
    b = blobrt.Blob((4,))
    b.data[...] = 2
    for binary in (True, False):
        b.save(str(tmp_path / "f"), binary=binary)
        r = subprocess.run([TOOL, "inspect", str(tmp_path / "f")], capture_output=True, text=True)
        assert r.returncode == 0 and "shape 4 (4)" in r.stdout and "asum 8" in r.stdout, r.stderr


def test_load_refuses_an_unknown_format(tmp_path: Path) -> None:
    blobrt.Blob((1,)).save(str(tmp_path / "f"))
    with pytest.raises(blobrt.Error, match="format must be"):
        blobrt.load(str(tmp_path / "f"), format="json")
