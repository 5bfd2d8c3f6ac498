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
from collections.abc import Mapping
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
    order, for the layers that have blobs (a name the file repeats: the last such layer).
    Read without Caffe. Names are str; bytes that are not UTF-8 come as surrogates
    (surrogateescape, as os.fsdecode). A file that is not a model file, or a corrupt one,
    raises blobrt.Error naming it and saying why; a missing one MissingFileError."""
    params: dict[str, list[Any]] = {}
    for name, _type, blobs in _blobrt._read_caffemodel(_os.fsdecode(path)):
        if blobs:
            params[name] = list(blobs)
    return params


def caffemodel_layers(path: str | _os.PathLike[str]) -> list[tuple[str, str]]:
    """(name, type) of every layer of a Caffe model file, in file order; types as Caffe's
    current names ("Convolution"), V1 and V0 types translated as Caffe upgrades them."""
    return [(name, type_) for name, type_, _ in _blobrt._read_caffemodel(_os.fsdecode(path))]


def save_caffemodel(path: str | _os.PathLike[str],
                    params: Mapping[str, Any] | Mapping[bytes, Any] | Mapping[str | bytes, Any],
                    template: str | _os.PathLike[str] | None = None) -> None:
    """Writes a Caffe model file that Caffe loads: `template` (default: `path` itself) with
    the blobs of the layers named in `params` (name -> list of arrays, as load_caffemodel
    returns) replaced. Everything else in the file (layer parameters, other layers) is kept
    as it was. Each layer must keep its blob count and each blob its shape, as Caffe's
    CopyTrainedLayersFrom requires, else blobrt.InvalidValueError and nothing is written;
    shapes are compared as Caffe's Blob::ShapeEquals does (a V1 model's legacy 1x1x1xN blob
    takes pycaffe's (N,), 1x1xMxN takes (M, N); an empty blob takes an array of no values).
    A name the file repeats means the last layer of that name with blobs, the one
    load_caffemodel returns and Caffe copies last. Names are str (as load_caffemodel gives
    them, bytes that are not UTF-8 as surrogates) or bytes. Values are stored in the file's
    own precision for that blob (float64, long double, any byte order and integers reach a
    double blob as doubles); the write is atomic."""
    source = _os.fsdecode(template if template is not None else path)
    _blobrt._write_caffemodel(source, _os.fsdecode(path), _caffemodel_arrays(source, params))


def _caffemodel_arrays(source: str, params: Any) -> dict[bytes, list[Any]]:
    """save_caffemodel's params as the extension takes them: names as bytes (a str encoded as
    load_caffemodel decoded it: UTF-8, other bytes as surrogates), values lists of C-contiguous
    native arrays, float32 for float32 and float16 (exact), float64 for every other real dtype
    (any byte order, long double, integers) so that a double blob gets every bit a double holds;
    anything else (complex, objects, strings) blobrt.InvalidTypeError naming the file."""
    import numpy as np

    where = f"blobrt.save_caffemodel: {source}"
    if not isinstance(params, Mapping):
        raise InvalidTypeError(f"{where}: params must be a dict of layer name -> list of arrays, "
                               f"got {type(params).__name__}")
    arrays: dict[bytes, list[Any]] = {}
    for name, blobs in params.items():
        if isinstance(name, str):
            key = name.encode("utf-8", "surrogateescape")
        elif isinstance(name, bytes):
            key = name
        else:
            raise InvalidTypeError(f"{where}: a layer name must be str or bytes, got {name!r}")
        if key in arrays:
            raise InvalidValueError(f"{where}: layer {name!r} is given twice (as str and as bytes)")
        shown = key.decode("utf-8", "backslashreplace")
        if isinstance(blobs, (str, bytes)) or not hasattr(blobs, "__iter__"):
            raise InvalidTypeError(f"{where}: layer '{shown}': expected a list of arrays, got {type(blobs).__name__}")
        converted = []
        for i, blob in enumerate(blobs):
            try:
                a = np.asarray(blob)
            except (TypeError, ValueError) as e:
                raise InvalidValueError(f"{where}: layer '{shown}' blob {i} is not an array: {e}") from e
            if a.dtype.kind not in "fiub":
                raise InvalidTypeError(f"{where}: layer '{shown}' blob {i} has dtype {a.dtype}, not real numbers")
            small = a.dtype.kind == "f" and a.dtype.itemsize <= 4
            converted.append(np.ascontiguousarray(a, dtype=np.float32 if small else np.float64))
        arrays[key] = converted
    return arrays


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

