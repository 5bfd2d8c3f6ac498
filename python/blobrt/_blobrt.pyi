import blobrt
"""blobrt's Blob and runtime (the extension behind the blobrt package)"""

from collections.abc import Sequence

import numpy


class Error(RuntimeError):
    pass

class DeviceArray:
    """
    A Blob's data or diff on its device, for DLPack consumers (np.from_dlpack, torch.from_dlpack, cupy.from_dlpack): the device memory itself. It keeps the memory alive; __dlpack__ waits for the device's queue first unless stream=-1.
    """

    def __dlpack_device__(self) -> tuple: ...

    def __dlpack__(self, *, stream: object | None = None, max_version: object | None = None, dl_device: object | None = None, copy: object | None = None) -> object: ...

    @property
    def shape(self) -> tuple: ...

    def __repr__(self) -> str: ...

    @classmethod
    def from_numpy(cls, array: numpy.ndarray) -> "Blob":
        """A new Blob with a copy of a float32 or float64 array."""

    @classmethod
    def from_dlpack(cls, x: object) -> "Blob":
        """A new Blob with a copy of any DLPack exporter's CPU data."""


class Blob:
    """
    Caffe's Blob: an N-d array with data and diff, on the active device.

    Blob(shape, dtype=numpy.float32); dtype is float32 or float64.
    """

    def __init__(self, shape: Sequence[int] = [], dtype: object | None = None) -> None:
        """A Blob of the given shape (zero-filled on first touch)."""

    @property
    def dtype(self) -> object: ...

    @property
    def shape(self) -> tuple: ...

    @property
    def count(self) -> int: ...

    @property
    def num_axes(self) -> int: ...

    @property
    def num(self) -> int: ...

    @property
    def channels(self) -> int: ...

    @property
    def height(self) -> int: ...

    @property
    def width(self) -> int: ...

    def reshape(self, *args) -> None:
        """
        reshape(*shape) or reshape(shape): Caffe's Reshape (keeps memory when it fits).
        """

    @property
    def data(self) -> object:
        """
        The host side of data as a writable NumPy array (no copy on host-memory devices); each access makes the host side current and marks it newest.
        """

    @property
    def diff(self) -> object:
        """The host side of diff, like .data."""

    @property
    def device_data(self) -> object:
        """
        The active device's data memory as a DLPack exporter (no copy); raises blobrt.Error on devices whose buffers are not addresses (OpenCL).
        """

    @property
    def device_diff(self) -> object:
        """
        The active device's diff memory as a DLPack exporter, like device_data.
        """

    def asum_data(self) -> float: ...

    def asum_diff(self) -> float: ...

    def sumsq_data(self) -> float: ...

    def sumsq_diff(self) -> float: ...

    def scale_data(self, factor: float) -> None: ...

    def scale_diff(self, factor: float) -> None: ...

    def update(self) -> None:
        """data -= diff, on the side where data is newest (Caffe's Update)."""

    def copy_from(self, source: Blob, copy_diff: bool = False, reshape: bool = False) -> None: ...

    def share_data(self, other: Blob) -> None: ...

    def share_diff(self, other: Blob) -> None: ...

    def save(self, path: str, binary: bool = True, write_diff: bool = False) -> None:
        """
        Writes a Caffe BlobProto file (binary or text), as Caffe's WriteProtoTo*File.
        """

    def __repr__(self) -> str: ...

def load(path: str, format: str | None = None) -> Blob:
    """
    A Blob from a Caffe BlobProto file (double_data gives float64). format None decides binary or text from the file itself (docs/python.md); 'binary' or 'text' reads it as that format only.
    """

def select_backend(spec: str) -> None:
    """
    Selects 'auto', 'host', 'NAME' or 'NAME:INDEX' (as BLOBRT_BACKEND); raises blobrt.Error listing what was found if it cannot be used.
    """

def active_device() -> str:
    """The active device's id, e.g. 'blis:0'."""

def available_devices() -> list[str]:
    """Every backend:index that can be opened here, host first."""

def devices() -> list: ...

def version() -> str: ...
