"""pycaffe's one line of data parallelism (docs/dist.md, "Caffe across ranks"):

    import caffe, blobrt.caffe
    blobrt.caffe.data_parallel()                 # before the solver is made
    solver = caffe.get_solver("solver.prototxt")
    solver.solve()

    mpirun -np 2 python3 train.py

The C++ line (blobrt::caffe::DataParallel) for a Caffe built on blobrt with libblobrt-dist:
caffe-on-blobrt.cmake compiles a C entry, blobrt_caffe_data_parallel, into Caffe's own
library, which pycaffe's extension (caffe._caffe) links; this module finds the entry
through that loaded extension and calls it (blobrt's own extension plays no part). Only
solvers made through Caffe's registry (caffe.get_solver) become data-parallel; pycaffe's
typed constructors (caffe.SGDSolver(path), ...) bypass it.
"""
from __future__ import annotations

import ctypes
import sys

__all__ = ["data_parallel"]

_ENTRY = "blobrt_caffe_data_parallel"
_EXTENSION = "caffe._caffe"


def data_parallel() -> int:
    """Makes this process's Caffe training data-parallel across the ranks of its MPI job and
    returns the number of ranks (1 without mpirun). Call it after ``import caffe`` and before
    ``caffe.get_solver(...)``: every solver of Caffe's types made through Caffe's registry
    from then on (``caffe.get_solver``) starts from rank 0's weights and averages each
    layer's gradients across the ranks during backward. The rank is ``caffe.solver_rank()``.

    It starts MPI (MPI_THREAD_SERIALIZED) unless something in the process did, once per
    process; later calls return the same count. Raises RuntimeError when pycaffe is not
    imported, when its Caffe was not built with blobrt's caffe-on-blobrt.cmake and
    libblobrt-dist (no entry), and with the entry's own message when it fails."""
    extension = sys.modules.get(_EXTENSION)
    if extension is None:
        raise RuntimeError("blobrt.caffe.data_parallel(): import caffe first (pycaffe's extension "
                           f"{_EXTENSION} is not loaded in this process)")
    path = getattr(extension, "__file__", None)
    if not isinstance(path, str):
        raise RuntimeError(f"blobrt.caffe.data_parallel(): pycaffe's extension {_EXTENSION} has no file to look in")
    try:
        # The extension is loaded already: this is a handle to it, and a symbol lookup on a
        # handle searches the library and what it links (Caffe's libcaffe.so).
        library = ctypes.CDLL(path)
        entry = getattr(library, _ENTRY)
    except (OSError, AttributeError):
        raise RuntimeError(
            f"blobrt.caffe.data_parallel(): {path} (pycaffe's extension) and the Caffe library it links have no "
            f"{_ENTRY}: this Caffe was not built with blobrt's caffe-on-blobrt.cmake with libblobrt-dist "
            "(or, with Caffe's Makefile, without blobrt's data_parallel_entry.cpp in src/caffe/); "
            "see docs/dist.md, \"Caffe across ranks\"") from None
    entry.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    entry.restype = ctypes.c_int
    error = ctypes.create_string_buffer(4096)
    ranks = int(entry(error, ctypes.sizeof(error)))
    if ranks < 1:
        message = error.value.decode("utf-8", errors="replace") or f"{_ENTRY} returned {ranks}"
        raise RuntimeError(f"blobrt.caffe.data_parallel(): {message}")
    return ranks
