"""blobrt's Blob and runtime (the extension behind the blobrt package)"""

from collections.abc import Callable, Iterable, Sequence
import os
from typing import Any, SupportsIndex

import numpy
import numpy.typing


class Error(RuntimeError):
    """
    Every error blobrt raises (a RuntimeError): a failed Caffe CHECK, a device or plugin failure. The subclasses say the kind and are also the built-in exception of that kind.
    """

class InvalidTypeError(TypeError, Error):
    """
    A dtype blobrt does not offer (float32 and float64 only), dtypes that differ, or an object of the wrong kind: a blobrt.Error and a TypeError.
    """

class InvalidValueError(ValueError, Error):
    """
    An argument's value is out of range (a negative dimension, more than 32 axes, an unknown file format): a blobrt.Error and a ValueError.
    """

class MissingFileError(FileNotFoundError, Error):
    """
    The file does not exist (errno and filename set): a blobrt.Error and a FileNotFoundError.
    """

class OutOfMemoryError(MemoryError, Error):
    """
    The host or the device could not give the memory asked for: a blobrt.Error and a MemoryError.
    """

class UnsupportedError(Error):
    """
    The device does not offer the operation (double precision without fp64, DLPack export of OpenCL buffers): a blobrt.Error.
    """

class DeviceArray:
    """
    A Blob's data or diff on its device, for DLPack consumers (np.from_dlpack, torch.from_dlpack, cupy.from_dlpack): the device memory itself. It keeps the memory alive; __dlpack__ waits for the device's queue first unless stream=-1.
    """

    def __dlpack_device__(self) -> tuple[int, int]:
        """
        (DLPack device type, device index): (1, 0) for host memory, (2, N) for CUDA device N.
        """

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None, dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """
        A DLPack capsule of the memory (versioned when max_version is given); waits for the device unless stream=-1; copy=True copies (CPU arrays only).
        """

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, as a tuple."""

    @property
    def ndim(self) -> int:
        """The number of axes."""

    @property
    def dtype(self) -> numpy.dtype[Any]:
        """numpy.float32 or numpy.float64, as a numpy.dtype."""

    @property
    def device(self) -> str:
        """blobrt's id of the device the memory is on, e.g. 'host:0' or 'cuda:1'."""

    def __repr__(self) -> str: ...

class Blob:
    """
    Caffe's Blob: an N-d array with data and diff, on the active device.

    Blob(shape, dtype=numpy.float32); dtype is float32 or float64.
    """

    def __init__(self, shape: Sequence[int] = [], dtype: object | None = None) -> None:
        """A Blob of the given shape (zero-filled on first touch)."""

    @property
    def dtype(self) -> numpy.dtype[Any]:
        """numpy.float32 or numpy.float64, as a numpy.dtype."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, as a tuple (NumPy's)."""

    @property
    def ndim(self) -> int:
        """The number of axes (NumPy's name for num_axes)."""

    @property
    def size(self) -> int:
        """The number of elements (NumPy's name for count)."""

    @property
    def nbytes(self) -> int:
        """
        The bytes of data (count times the dtype's size); diff has as many again.
        """

    @property
    def device(self) -> str:
        """
        blobrt's id of the device the data lives on, e.g. 'host:0' or 'cuda:0' (the active device for a Blob without memory).
        """

    def __len__(self) -> int:
        """
        The length of the first axis (TypeError for a Blob with no axes, as NumPy).
        """

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> numpy.typing.NDArray[numpy.floating[Any]]:
        """
        np.asarray(blob): the host side of data, as .data (no copy unless copy=True or another dtype).
        """

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None, dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """
        The device memory of data as a DLPack capsule, as device_data.__dlpack__ (np.from_dlpack(blob), torch.from_dlpack(blob)).
        """

    def __dlpack_device__(self) -> tuple[int, int]:
        """
        (DLPack device type, device index) of data: what the device says it is (blobrt.devices()' dlpack_device), asked without exporting anything.
        """

    @property
    def count(self) -> int:
        """The number of elements (Caffe's count())."""

    @property
    def num_axes(self) -> int:
        """The number of axes (Caffe's num_axes())."""

    @property
    def num(self) -> int:
        """Caffe's legacy num(): shape[0] of a 4-d Blob."""

    @property
    def channels(self) -> int:
        """Caffe's legacy channels(): shape[1] of a 4-d Blob."""

    @property
    def height(self) -> int:
        """Caffe's legacy height(): shape[2] of a 4-d Blob."""

    @property
    def width(self) -> int:
        """Caffe's legacy width(): shape[3] of a 4-d Blob."""

    def reshape(self, *shape: SupportsIndex | Iterable[SupportsIndex]) -> None:
        """
        reshape(*shape) or reshape(shape): Caffe's Reshape (keeps memory when it fits).
        """

    @property
    def data(self) -> numpy.typing.NDArray[numpy.floating[Any]]:
        """
        The host side of data as a writable NumPy array (no copy on host-memory devices); each access makes the host side current and marks it newest.
        """

    @property
    def diff(self) -> numpy.typing.NDArray[numpy.floating[Any]]:
        """The host side of diff, like .data."""

    @property
    def device_data(self) -> DeviceArray:
        """
        The active device's data memory as a DLPack exporter (no copy); raises blobrt.UnsupportedError on devices whose buffers are not addresses (OpenCL).
        """

    @property
    def device_diff(self) -> DeviceArray:
        """
        The active device's diff memory as a DLPack exporter, like device_data.
        """

    def asum_data(self) -> float:
        """The sum of |data|, on the active device."""

    def asum_diff(self) -> float:
        """The sum of |diff|, on the active device."""

    def sumsq_data(self) -> float:
        """The sum of data squared, on the active device."""

    def sumsq_diff(self) -> float:
        """The sum of diff squared, on the active device."""

    def scale_data(self, factor: float) -> None:
        """data *= factor, on the active device."""

    def scale_diff(self, factor: float) -> None:
        """diff *= factor, on the active device."""

    def update(self) -> None:
        """data -= diff, on the side where data is newest (Caffe's Update)."""

    def copy_from(self, source: Blob, copy_diff: bool = False, reshape: bool = False) -> None:
        """
        Copies source's data (or diff) into this Blob (Caffe's CopyFrom); reshape=True takes its shape.
        """

    def share_data(self, other: Blob) -> None:
        """
        Makes this Blob's data the other Blob's data memory (Caffe's ShareData).
        """

    def share_diff(self, other: Blob) -> None:
        """
        Makes this Blob's diff the other Blob's diff memory (Caffe's ShareDiff).
        """

    def save(self, path: str | os.PathLike[str], binary: bool = True, write_diff: bool = False) -> None:
        """
        Writes a Caffe BlobProto file (binary or text), as Caffe's WriteProtoTo*File.
        """

    def __repr__(self) -> str: ...

    @staticmethod
    def from_numpy(array: Any) -> Blob:
        """
        A new Blob on the active device with a copy of a float32 or float64 array (or anything numpy.asarray takes); other dtypes raise blobrt.InvalidTypeError.
        """

    @staticmethod
    def from_dlpack(x: Any) -> Blob:
        """
        A new Blob on the active device with a copy of any DLPack exporter's CPU data (read-only ones included); other devices raise blobrt.UnsupportedError.
        """

def load(path: str | os.PathLike[str], format: str | None = None) -> Blob:
    """
    A Blob from a Caffe BlobProto file (double_data gives float64). format None decides binary or text from the file itself (docs/python.md); 'binary' or 'text' reads it as that format only.
    """

def select_backend(spec: str) -> None:
    """
    Selects 'auto', 'host', 'NAME' or 'NAME:INDEX' (as BLOBRT_BACKEND); raises blobrt.Error listing what was found if it cannot be used.
    """

def current_device_id() -> str:
    """
    The calling thread's current device's id, e.g. 'blis:0' (selected per BLOBRT_BACKEND on first use).
    """

def available_devices() -> list[str]:
    """Every backend:index that can be opened here, host first."""

def version() -> str:
    """libblobrt's version, e.g. '1.4.0' (also blobrt.__version__)."""

def set_log_handler(handler: Callable[[str, str], object] | None) -> None:
    """
    Sends blobrt's log messages (at or above the level in force) to handler(level, message) instead of stderr / BLOBRT_LOG_FILE: level is 'error', 'warn', 'info' or 'debug', message has no prefix. Messages from other threads arrive in order through the main thread. None restores the default. blobrt.log_to_logging() puts the logging module behind it.
    """

def set_log_level(level: str) -> None:
    """
    The level in force from now on ('off', 'error', 'warn', 'info', 'debug'; case-insensitive), instead of BLOBRT_LOG's.
    """

def log_level() -> str:
    """The level in force: set_log_level's, else BLOBRT_LOG's, else 'warn'."""
