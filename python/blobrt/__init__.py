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
_KDL_CUDA = 2


class DeviceArray:
    """A Blob's data or diff on its device, for DLPack consumers (``np.from_dlpack``,
    ``torch.from_dlpack``, ``cupy.from_dlpack``): the device memory itself, no copy.

    It holds a reference to the memory, so it (and what a consumer made from it) stays
    valid after the Blob is gone. Every operation blobrt queued on the device has finished
    before ``__dlpack__`` returns, so a consumer may read on any stream.
    """

    __slots__ = ("_array",)

    def __init__(self, array):
        self._array = array

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        device_type = self.__dlpack_device__()[0]
        if device_type == _KDL_CPU and stream is not None:
            raise Error("DeviceArray.__dlpack__: stream must be None for a CPU array, got %r" % (stream,))
        if stream != -1:
            # Makes the data ready for any consumer stream (the DLPack contract), at the
            # price of waiting for the device's queue.
            _blobrt._synchronize_active()
        if copy:
            if device_type != _KDL_CPU:
                raise Error("DeviceArray.__dlpack__: copy=True is only offered for CPU arrays")
            return _np.array(_np.from_dlpack(self._array), copy=True).__dlpack__(
                **({} if max_version is None else {"max_version": max_version}))
        kwargs = {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return self._array.__dlpack__(**kwargs)

    @property
    def shape(self):
        return tuple(self._array.shape)

    def __repr__(self):
        return "blobrt.DeviceArray(shape=%s, device=%s)" % (self.shape, self.__dlpack_device__())


def _device_data(self):
    """The active device's data memory as a DLPack exporter (raises blobrt.Error on
    devices whose buffers are not addresses, e.g. OpenCL)."""
    return DeviceArray(self._device_view(False))


def _device_diff(self):
    """The active device's diff memory as a DLPack exporter, like device_data."""
    return DeviceArray(self._device_view(True))


def _from_numpy(cls, array):
    """A new Blob with a copy of ``array`` (float32 or float64; other dtypes raise)."""
    a = _np.asarray(array)
    if a.dtype == _np.float32:
        return _blobrt._from_array_f32(_np.ascontiguousarray(a))
    if a.dtype == _np.float64:
        return _blobrt._from_array_f64(_np.ascontiguousarray(a))
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


Blob.device_data = property(_device_data)
Blob.device_diff = property(_device_diff)
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


def inspect(path) -> dict:
    """Shape, dtype, count and summary statistics of a BlobProto file (binary or text)."""
    r = _blobrt._inspect(str(path))
    blob = r.pop("blob")
    for side in ("data",) + (("diff",) if r["has_diff"] else ()):
        values = getattr(blob, side)
        if values.size:
            r[side] = {"min": float(values.min()), "max": float(values.max()), "mean": float(values.mean()),
                       "asum": float(_np.abs(values).sum())}
        else:
            r[side] = None
    return r
