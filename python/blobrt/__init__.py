"""blobrt: Caffe's Blob over pluggable device backends, from Python (docs/python.md).

    import numpy as np, blobrt
    b = blobrt.Blob((2, 3), dtype=np.float32)
    b.data[...] = 1          # a NumPy view of the Blob's host memory, written in place
    b.asum_data()            # 6.0, computed on the active device (BLOBRT_BACKEND)
    t = torch.from_dlpack(b.device_data)   # the device memory itself (CPU or CUDA)
"""
from __future__ import annotations

import numpy as _np

from ._blobrt import (  # noqa: F401  (re-exported)
    Blob,
    DeviceArray,
    Error,
    available_devices,
    load,
    select_backend,
    version,
)
from . import _blobrt

__all__ = ["Blob", "Error", "DeviceArray", "load", "inspect", "info", "devices", "active_device",
           "available_devices", "select_backend", "version"]

_KDL_CPU = 1


def _from_numpy(cls, array):
    """A new Blob with a copy of ``array`` (float32 or float64; other dtypes raise)."""
    a = _np.asarray(array)
    if a.dtype == _np.float32:
        return _blobrt._from_array_f32(_np.require(a, requirements="C"))
    if a.dtype == _np.float64:
        return _blobrt._from_array_f64(_np.require(a, requirements="C"))
    raise Error("blobrt.Blob.from_numpy: dtype %s is not supported (float32 or float64)" % a.dtype)


def _from_dlpack(cls, x):
    """A new Blob on the active device with a copy of any DLPack exporter's CPU data."""
    if not hasattr(x, "__dlpack__"):
        raise Error("blobrt.Blob.from_dlpack: %s has no __dlpack__" % type(x).__name__)
    device_type = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else _KDL_CPU
    if device_type != _KDL_CPU:
        raise Error("blobrt.Blob.from_dlpack: the array is on DLPack device type %d; only CPU arrays are "
                    "imported (copy it to the host first)" % device_type)
    return _from_numpy(cls, _np.from_dlpack(x))


Blob.from_numpy = classmethod(_from_numpy)
Blob.from_dlpack = classmethod(_from_dlpack)


def active_device() -> str:
    """The active device's id, e.g. 'blis:0' (selected per BLOBRT_BACKEND on first use)."""
    return _blobrt.active_device()


def devices() -> list:
    """Every usable device: a dict each (id, backend, index, name, details, type,
    memory_bytes, memory_model, supports_fp64), host first."""
    return _blobrt.devices()


def info() -> dict:
    """What `blobrt info --json` reports: version, search path, plugins with their
    verdicts and devices, the selection log and the active device."""
    out = _blobrt._inventory()
    try:
        out["active"] = _blobrt.active_device()
        out["error"] = None
    except Error as e:
        out["active"] = None
        out["error"] = str(e)
    return out


def inspect(path, format=None) -> dict:
    """Shape, dtype, count and summary statistics of a BlobProto file, read as load() reads
    it: binary or text decided from the file itself unless format is 'binary' or 'text'."""
    r = _blobrt._inspect(str(path), format)
    blob = r.pop("blob")
    for side in ("data",) + (("diff",) if r["has_diff"] else ()):
        values = getattr(blob, side)
        if values.size:
            r[side] = {"min": float(values.min()), "max": float(values.max()), "mean": float(values.mean()),
                       "asum": float(_np.abs(values).sum())}
        else:
            r[side] = None
    return r
