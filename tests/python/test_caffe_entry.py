"""pycaffe's one line of data parallelism, blobrt.caffe.data_parallel() (docs/dist.md,
"Caffe across ranks"), against a stand-in for pycaffe built with the test suite
(tests/python/caffe_stand_in): a package `caffe` whose extension `caffe._caffe` links a
stand-in Caffe library compiled from blobrt's real data_parallel_entry.cpp, Caffe-shaped
solver headers and libblobrt-dist, as pycaffe's _caffe.so links Caffe's libcaffe.so.
Each case runs in a Python process of its own (MPI starts once per process): one process
without mpirun (Open MPI's singleton, 1 rank), and 2 ranks under mpirun.

The stand-in is found through BLOBRT_TEST_CAFFE_STAND_IN (tests/python/meson.build); where
it is not built (an installed wheel, the GPU bundle, a build without libblobrt-dist or
blobrt-caffe) those cases skip. The errors that need no Caffe run everywhere."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from typing import Any

import pytest

import blobrt
import blobrt.caffe

STAND_IN = os.environ.get("BLOBRT_TEST_CAFFE_STAND_IN", "")
needs_stand_in = pytest.mark.skipif(
    not STAND_IN or not os.path.isdir(os.path.join(STAND_IN, "caffe")),
    reason="no stand-in pycaffe (built in the build tree's tests/python/caffe_stand_in where libblobrt-dist "
           "and blobrt-caffe are; BLOBRT_TEST_CAFFE_STAND_IN)")


def _run(code: str, mpirun: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """`code` in a new Python process that imports the stand-in `caffe` and this `blobrt`."""
    package_parent = os.path.dirname(os.path.dirname(blobrt.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([STAND_IN, package_parent]))
    return subprocess.run([*(mpirun or []), sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=180)


def _results(process: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """Every JSON object the ranks printed. mpirun forwards each rank's output as it comes,
    so one rank's line may end up glued to another's (`{...}{...}` on a busy machine): the
    objects are read wherever they start, not line by line."""
    assert process.returncode == 0, process.stdout + process.stderr
    decoder, text, results = json.JSONDecoder(), process.stdout, []
    start = text.find("{")
    while start != -1:
        try:
            found, end = decoder.raw_decode(text, start)
        except ValueError:  # a brace in other output
            start = text.find("{", start + 1)
            continue
        if isinstance(found, dict):
            results.append(found)
        start = text.find("{", end)
    return results


# --- errors that need no Caffe -------------------------------------------------------------

def test_without_import_caffe_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "caffe._caffe", raising=False)
    with pytest.raises(RuntimeError, match="import caffe first"):
        blobrt.caffe.data_parallel()


def test_a_caffe_without_the_entry_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    # An extension module whose library (and what it links) has no entry: blobrt's own.
    library = blobrt._blobrt.__file__
    assert library is not None
    fake = types.ModuleType("caffe._caffe")
    fake.__file__ = library
    monkeypatch.setitem(sys.modules, "caffe._caffe", fake)
    with pytest.raises(RuntimeError) as raised:
        blobrt.caffe.data_parallel()
    message = str(raised.value)
    assert library in message
    assert "blobrt_caffe_data_parallel" in message
    assert "caffe-on-blobrt.cmake" in message and "libblobrt-dist" in message


# --- the real entry, in the stand-in Caffe -------------------------------------------------

@needs_stand_in
def test_one_process_is_one_rank() -> None:
    results = _results(_run(
        "import json, caffe, blobrt.caffe\n"
        "before = caffe.solve('SGD')\n"
        "ranks = blobrt.caffe.data_parallel()\n"
        "again = blobrt.caffe.data_parallel()\n"
        "print(json.dumps({'ranks': ranks, 'again': again, 'count': caffe.solver_count(),\n"
        "                  'rank': caffe.solver_rank(), 'before': before, 'after': caffe.solve('SGD')}))\n"))
    assert len(results) == 1
    r = results[0]
    assert (r["ranks"], r["again"], r["count"], r["rank"]) == (1, 1, 1, 0)
    # Caffe's registry made its own solver before the line, a data-parallel one after; with
    # one rank the gradients are the rank's own (layer i: i + 1, parameter 10 - (i + 1)).
    assert r["before"][0] is False and r["after"][0] is True
    assert r["after"][1] == [9.0, 8.0, 7.0] and r["after"][2] == [1.0, 2.0, 3.0]


@needs_stand_in
def test_a_solver_type_that_is_not_caffes_is_refused() -> None:
    results = _results(_run(
        "import json, caffe, blobrt.caffe\n"
        "blobrt.caffe.data_parallel()\n"
        "try:\n"
        "    caffe.solve('Custom')\n"
        "except RuntimeError as e:\n"
        "    print(json.dumps({'error': str(e)}))\n"))
    assert len(results) == 1
    assert "solver type 'Custom' is not one of Caffe's" in results[0]["error"]


@needs_stand_in
def test_the_entrys_error_comes_through() -> None:
    # MPI started and finalised by the program before the line: MPI cannot start again, and
    # DataParallel's error (a blobrt::Error in C++) arrives as the RuntimeError's message.
    results = _results(_run(
        "import ctypes, json, os, caffe, blobrt.caffe\n"
        "libmpi = next(p for p in (l.split()[-1] for l in open('/proc/self/maps') if '/' in l)\n"
        "              if os.path.basename(p).startswith('libmpi.so'))\n"
        "mpi = ctypes.CDLL(libmpi)\n"
        "assert mpi.MPI_Init(None, None) == 0 and mpi.MPI_Finalize() == 0\n"
        "errors = []\n"
        "for _ in range(2):\n"
        "    try:\n"
        "        blobrt.caffe.data_parallel()\n"
        "    except RuntimeError as e:\n"
        "        errors.append(str(e))\n"
        "print(json.dumps({'errors': errors}))\n"))
    assert len(results) == 1
    errors = results[0]["errors"]
    assert len(errors) == 2, errors
    for message in errors:
        assert message.startswith("blobrt.caffe.data_parallel(): ")
        assert "MPI was already finalised in this process" in message


@needs_stand_in
def test_two_ranks_under_mpirun() -> None:
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("no mpirun")
    process = _run(
        "import json, caffe, blobrt.caffe\n"
        "ranks = blobrt.caffe.data_parallel()\n"
        "parallel, data, diff = caffe.solve('SGD')\n"
        "print(json.dumps({'ranks': ranks, 'rank': caffe.solver_rank(), 'parallel': parallel,\n"
        "                  'data': data, 'diff': diff}))\n",
        mpirun=[mpirun, "--allow-run-as-root", "--oversubscribe", "--timeout", "120", "-np", "2",
                "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"])
    # mpirun's status 0 also says every rank finalised MPI at exit (the entry's DataParallel
    # lives until then); a rank that exits without MPI_Finalize fails the job.
    results = _results(process)
    assert sorted(r["rank"] for r in results) == [0, 1], process.stdout
    for r in results:
        assert r["ranks"] == 2 and r["parallel"] is True
        # Rank r's gradient of layer i is (r + 1)(i + 1): the mean of the two is 1.5 (i + 1);
        # both start from rank 0's parameters (10; rank 1's were 20) and take the same step.
        assert r["diff"] == [1.5, 3.0, 4.5], r
        assert r["data"] == [8.5, 7.0, 5.5], r
