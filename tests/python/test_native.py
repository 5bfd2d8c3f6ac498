"""A Blob and its views as NumPy and PyTorch users expect them (issue "Native feel for Python
and the command line"): NumPy's attribute names, __array__, DLPack on the Blob itself, a
repr with shape, dtype and device, __version__, and errors that are also the built-in
exception of their kind."""
import errno
import re
from pathlib import Path

import numpy as np
import pytest

import blobrt
from conftest import cuda_memory, host_memory


def test_numpy_attributes(device: str) -> None:
    b = blobrt.Blob((2, 3, 4, 5), dtype=np.float64)
    assert b.shape == (2, 3, 4, 5) and isinstance(b.shape, tuple)
    assert (b.ndim, b.size, b.nbytes, len(b)) == (4, 120, 960, 2)
    assert b.dtype == np.float64 and blobrt.Blob((3,)).nbytes == 12
    assert b.device == device
    with pytest.raises(TypeError, match="0-d"):
        len(blobrt.Blob(()))


def test_repr_shows_shape_dtype_and_device(device: str) -> None:
    assert repr(blobrt.Blob((2, 3, 4, 5))) == "blobrt.Blob(shape=(2, 3, 4, 5), dtype=float32, device='%s')" % device
    assert repr(blobrt.Blob((7,), dtype=np.float64)) == \
        "blobrt.Blob(shape=(7,), dtype=float64, device='%s')" % device
    assert "shape=()" in repr(blobrt.Blob())


def test_asarray_is_the_zero_copy_host_view(device: str) -> None:
    b = blobrt.Blob((2, 3))
    a = np.asarray(b)
    assert a.dtype == np.float32 and a.shape == (2, 3)     # not a 0-d object array
    a[...] = 2
    assert b.asum_data() == 12 and np.shares_memory(a, b.data)
    c = np.array(b, copy=True)
    assert not np.shares_memory(c, b.data)
    d = np.asarray(b, dtype=np.float64)
    assert d.dtype == np.float64 and not np.shares_memory(d, b.data)
    with pytest.raises(ValueError):
        np.array(b, dtype=np.float64, copy=False)


def test_dlpack_on_the_blob_itself(device: str) -> None:
    b = blobrt.Blob((4, 2))
    described = next(d for d in blobrt.devices() if d["id"] == device)["dlpack_device"]
    # What the device says it is, asked without exporting: (4, 0) on OpenCL, whose buffers
    # are then not handed out.
    if described is None:  # a device whose plugin does not say (simgpu): no DLPack type to give
        with pytest.raises(blobrt.UnsupportedError, match="does not say what kind of device it is"):
            b.__dlpack_device__()
    else:
        assert list(b.__dlpack_device__()) == described
    if cuda_memory(device):  # exported as kDLCUDA, which numpy (BufferError from 2.5, RuntimeError before) refuses
        with pytest.raises((BufferError, RuntimeError), match="Unsupported device"):
            np.from_dlpack(b)
        return
    if not host_memory(device):
        with pytest.raises(blobrt.UnsupportedError, match="cannot be exported through DLPack"):
            np.from_dlpack(b)
        return
    assert b.__dlpack_device__() == (1, 0)
    t = np.from_dlpack(b)
    t[...] = 1
    assert t.shape == (4, 2) and b.asum_data() == 8
    assert t.ctypes.data == b.data.ctypes.data


def test_device_array_shape_dtype_device_and_repr(device: str) -> None:
    if not host_memory(device):
        pytest.skip("%s cannot export" % device)
    b = blobrt.Blob((2, 3), dtype=np.float64)
    d = b.device_data                       # typing it at the prompt shows the repr
    assert d.shape == (2, 3) and d.ndim == 2 and d.dtype == np.float64 and d.device == device
    assert repr(d) == "blobrt.DeviceArray(shape=(2, 3), dtype=float64, device='%s')" % device
    assert b.device_diff.shape == (2, 3)


def test_version() -> None:
    assert blobrt.__version__ == blobrt.version()
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", blobrt.__version__)


def test_errors_are_typed(device: str, tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="dtype int32") as type_error:
        blobrt.Blob((2,), dtype=np.int32)
    assert isinstance(type_error.value, blobrt.InvalidTypeError)
    with pytest.raises(ValueError, match="dimension -1") as value_error:
        blobrt.Blob((2, -1))
    assert isinstance(value_error.value, blobrt.InvalidValueError)
    with pytest.raises(ValueError, match="33 axes"):
        blobrt.Blob((1,) * 33)
    with pytest.raises(ValueError, match="format must be"):
        blobrt.load(tmp_path / "x", format="json")
    missing = tmp_path / "missing.binaryproto"
    with pytest.raises(FileNotFoundError) as file_error:
        blobrt.load(missing)
    assert isinstance(file_error.value, blobrt.MissingFileError)
    assert file_error.value.errno == errno.ENOENT and file_error.value.filename == str(missing)
    with pytest.raises(MemoryError) as memory_error:
        blobrt.Blob((1 << 21, 1 << 21)).data      # 16 TiB
    assert isinstance(memory_error.value, blobrt.OutOfMemoryError)
    with pytest.raises(TypeError, match="dtypes differ"):
        blobrt.Blob((2,)).copy_from(blobrt.Blob((2,), dtype=np.float64))
    # each is still a blobrt.Error (a RuntimeError), as before
    for e in (type_error.value, value_error.value, file_error.value, memory_error.value):
        assert isinstance(e, blobrt.Error) and isinstance(e, RuntimeError)
    assert issubclass(blobrt.UnsupportedError, blobrt.Error)


def test_from_dlpack_names_itself(device: str) -> None:
    with pytest.raises(blobrt.InvalidTypeError, match=r"^blobrt\.Blob\.from_dlpack: dtype int64"):
        blobrt.Blob.from_dlpack(np.arange(3))
    with pytest.raises(TypeError, match=r"^blobrt\.Blob\.from_dlpack: int has no __dlpack__"):
        blobrt.Blob.from_dlpack(3)
    with pytest.raises(TypeError, match=r"^blobrt\.Blob\.from_numpy: dtype int64"):
        blobrt.Blob.from_numpy(np.arange(3))


def test_paths_may_be_path_objects(device: str, tmp_path: Path) -> None:
    b = blobrt.Blob((3,))
    b.data[...] = 2
    b.save(tmp_path / "b.binaryproto")
    assert blobrt.load(tmp_path / "b.binaryproto").asum_data() == 6


def test_every_public_name_has_a_docstring() -> None:
    undocumented = []
    for name in blobrt.__all__:
        obj = getattr(blobrt, name)
        if not (obj.__doc__ or "").strip():
            undocumented.append(name)
        if isinstance(obj, type):
            for member, value in vars(obj).items():
                if member.startswith("_") and member not in ("__array__", "__dlpack__", "__dlpack_device__", "__len__"):
                    continue
                if not (getattr(value, "__doc__", None) or "").strip():
                    undocumented.append(name + "." + member)
    assert not undocumented, undocumented
