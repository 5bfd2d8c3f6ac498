"""blobrt: Caffe's Blob over pluggable device backends, from Python (docs/python.md).

    import numpy as np, blobrt
    b = blobrt.Blob((2, 3), dtype=np.float32)
    b.data[...] = 1          # a NumPy view of the Blob's host memory, written in place
    b.asum_data()            # 6.0, computed on the active device (BLOBRT_BACKEND)
    t = torch.from_dlpack(b)   # the device memory itself (CPU or CUDA), as b.device_data

Errors are blobrt.Error; its subclasses are also TypeError (InvalidTypeError), ValueError
(InvalidValueError), FileNotFoundError (MissingFileError) and MemoryError (OutOfMemoryError).
"""
from __future__ import annotations

import atexit as _atexit
import json as _json
import logging as _logging
import os as _os
import warnings as _warnings
from typing import Any

from ._blobrt import (  # noqa: F401  (re-exported)
    Blob,
    DeviceArray,
    Error,
    InvalidTypeError,
    InvalidValueError,
    MissingFileError,
    OutOfMemoryError,
    UnsupportedError,
    available_devices,
    current_device_id,
    load,
    log_level,
    select_backend,
    set_log_handler,
    set_log_level,
    version,
)
from . import _blobrt

__all__ = ["Blob", "Error", "InvalidTypeError", "InvalidValueError", "MissingFileError", "OutOfMemoryError",
           "UnsupportedError", "DeviceArray", "load", "inspect", "info", "devices", "current_device_id",
           "active_device", "available_devices", "select_backend", "version", "set_log_handler", "set_log_level",
           "log_level", "log_to_logging", "load_caffemodel", "save_caffemodel", "caffemodel_layers"]

__version__: str = version()
"""libblobrt's version (as blobrt.version() and `blobrt --version`)."""


def active_device() -> str:
    """Deprecated: use current_device_id(), which this returns (the device's id, e.g. 'blis:0',
    not a device object). Warns with DeprecationWarning."""
    _warnings.warn("blobrt.active_device() is deprecated: use blobrt.current_device_id()", DeprecationWarning,
                   stacklevel=2)
    return current_device_id()


def info() -> dict[str, Any]:
    """What `blobrt info --json` reports, as Python data, from the same description (keys in
    docs/blobrt-info.schema.json): schema_version, version, abi, library, search_path, every
    plugin (the built-in host first) with its verdict and devices, active, selection and
    dist (libblobrt-dist, null when not installed)."""
    parsed: dict[str, Any] = _json.loads(_blobrt._info_json())
    return parsed


def devices() -> list[dict[str, Any]]:
    """Every usable device, host first: a dict each with the keys of `info()`'s devices (id,
    backend, index, name, details, type, memory_bytes, memory_model, native_type, dlpack_device,
    addressable_handles, view_alignment, supports_fp64, has_pinned_host)."""
    return [d for p in info()["plugins"] if p["usable"] for d in p["devices"]]


def inspect(path: str | _os.PathLike[str], format: str | None = None) -> dict[str, Any]:
    """What `blobrt inspect --json PATH` reports, as Python data, from the same computation
    (keys in docs/blobrt-inspect.schema.json): schema_version, file, shape (a list), count,
    dtype, legacy_4d, has_diff, and data and diff statistics (min, max, mean, asum, sumsq
    over the finite values, and non_finite; diff None without one). The file is read as
    load() reads it: binary or text decided from the file itself unless format is 'binary'
    or 'text'. A Caffe model file (.caffemodel, a regular file, format None) gives its layers
    instead: kind "caffemodel", name, layers (name, type, layout, blobs with shape, count,
    dtype), blob_count and parameter_count."""
    parsed: dict[str, Any] = _json.loads(_blobrt._inspect_json(_os.fsdecode(path), format))
    return parsed


def load_caffemodel(path: str | _os.PathLike[str]) -> dict[str, list[Any]]:
    """The weights of a Caffe model file (.caffemodel, a binary NetParameter; the current
    `layer` and the V1/V0 `layers` layouts) as pycaffe's `net.params` shows them: layer name
    -> list of NumPy arrays (float32, or float64 where the file has double_data), in file
    order, for the layers that have blobs. Read without Caffe. A file that is not a model
    file raises blobrt.Error saying what it appears to be; a missing one MissingFileError."""
    params: dict[str, list[Any]] = {}
    for name, _type, blobs in _blobrt._read_caffemodel(_os.fsdecode(path)):
        if blobs:
            params[name] = list(blobs)
    return params


def caffemodel_layers(path: str | _os.PathLike[str]) -> list[tuple[str, str]]:
    """(name, type) of every layer of a Caffe model file, in file order; types as Caffe's
    current names ("Convolution"), V1 and V0 types translated as Caffe upgrades them."""
    return [(name, type_) for name, type_, _ in _blobrt._read_caffemodel(_os.fsdecode(path))]


def save_caffemodel(path: str | _os.PathLike[str], params: dict[str, Any],
                    template: str | _os.PathLike[str] | None = None) -> None:
    """Writes a Caffe model file that Caffe loads: `template` (default: `path` itself) with
    the blobs of the layers named in `params` (name -> list of arrays, as load_caffemodel
    returns) replaced. Everything else in the file (layer parameters, other layers) is kept
    as it was. Each layer must keep its blob count and each blob its shape, as Caffe's
    CopyTrainedLayersFrom requires, else blobrt.InvalidValueError and nothing is written.
    Values are stored in the file's own precision for that blob; the write is atomic."""
    import numpy as np

    # C-contiguous, native byte order: float64 stays float64, anything else becomes float32.
    arrays = {name: [np.ascontiguousarray(a, dtype=np.float64 if np.asarray(a).dtype == np.float64 else np.float32)
                     for a in blobs] for name, blobs in params.items()}
    source = _os.fsdecode(template if template is not None else path)
    _blobrt._write_caffemodel(source, _os.fsdecode(path), arrays)


_LOGGING_LEVELS = {"error": _logging.ERROR, "warn": _logging.WARNING, "info": _logging.INFO, "debug": _logging.DEBUG}


def log_to_logging(logger: _logging.Logger | None = None) -> None:
    """Routes blobrt's log into the logging module: each message to `logger` (default
    logging.getLogger("blobrt")) at ERROR, WARNING, INFO or DEBUG. blobrt's own level
    (set_log_level, BLOBRT_LOG; warn by default) still decides which messages are made:
    set_log_level("debug") to let the logger's level decide. set_log_handler(None) undoes it."""
    target = logger if logger is not None else _logging.getLogger("blobrt")

    def handler(level: str, message: str) -> None:
        target.log(_LOGGING_LEVELS.get(level, _logging.WARNING), message)

    set_log_handler(handler)


# No Python handler may outlive the interpreter: libblobrt logs to stderr again at exit.
_atexit.register(set_log_handler, None)

