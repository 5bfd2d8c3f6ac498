"""The blobrt Python package on every device this machine has (docs/python.md)."""
from pathlib import Path
import ctypes
import gc
import os
import subprocess
import sys
import tempfile
import threading

import numpy as np
import pytest

import blobrt
from conftest import DATA, cuda_memory, host_memory

REF = os.path.join(DATA, "ref_float_2x3x4x5_diff")


def capsule_name(capsule: object) -> str:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    return str(get_name(capsule).decode())


# --- construction and shape -------------------------------------------------------

def test_shape_and_legacy_accessors(device: str) -> None:
    b = blobrt.Blob((2, 3, 4, 5))
    assert b.shape == (2, 3, 4, 5) and b.count == 120 and b.num_axes == 4
    assert (b.num, b.channels, b.height, b.width) == (2, 3, 4, 5)
    assert b.dtype == np.float32
    assert blobrt.Blob((2,), dtype=np.float64).dtype == np.float64
    b.reshape(6, 20)
    assert tuple(b.shape) == (6, 20)      # tuple(): a type checker keeps b.shape narrowed across reshape
    b.reshape((120,))
    assert tuple(b.shape) == (120,)


def test_first_touch_is_zero(device: str) -> None:
    b = blobrt.Blob((7,), dtype=np.float64)
    assert b.asum_data() == 0 and not b.data.any()


# --- zero copy ------------------------------------------------------------------------

def test_data_is_a_view_written_in_place(device: str) -> None:
    b = blobrt.Blob((4, 5))
    view = b.data
    view[...] = 1.5
    assert b.asum_data() == 30.0              # computed on the device, from the view's writes
    assert np.shares_memory(view, b.data)     # the same memory on every access
    b.scale_data(2.0)                         # on the device; the next access sees it
    assert b.data[0, 0] == 3.0


def test_views_follow_reshape_and_new_memory(device: str) -> None:
    b = blobrt.Blob((2, 3))
    assert b.data.shape == (2, 3)
    b.reshape(3, 2)                       # same memory, new shape
    assert tuple(b.data.shape) == (3, 2)
    b.reshape(100)                        # larger: new memory
    b.data[...] = 1
    assert tuple(b.data.shape) == (100,) and b.asum_data() == 100


def test_data_pointer_is_the_device_buffer_on_host_memory_devices(device: str) -> None:
    if not host_memory(device):
        pytest.skip("%s keeps its own buffers (the host side is a mirror or an alias)" % device)
    b = blobrt.Blob((1000,))
    b.data[...] = 2.0
    dev = np.from_dlpack(b.device_data)
    assert dev.ctypes.data == b.data.ctypes.data
    assert np.shares_memory(dev, b.data)


def test_view_outlives_the_blob(device: str) -> None:
    b = blobrt.Blob((3, 3))
    b.data[...] = 4.0
    view = b.data
    del b
    gc.collect()
    view += 1
    assert view.sum() == 45.0


def test_diff_and_update(device: str) -> None:
    b = blobrt.Blob((10,), dtype=np.float64)
    b.data[...] = np.arange(10)
    b.diff[...] = 1
    b.update()
    np.testing.assert_array_equal(b.data, np.arange(10) - 1)
    assert b.asum_diff() == 10 and b.sumsq_diff() == 10


# --- DLPack ---------------------------------------------------------------------------

def test_dlpack_round_trip_with_numpy(device: str) -> None:
    a = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    b = blobrt.Blob.from_dlpack(a)                 # a copy into a new Blob
    assert b.shape == (2, 3, 4)
    np.testing.assert_array_equal(b.data, a)
    a[0, 0, 0] = 99
    assert b.data[0, 0, 0] != 99                   # copied, not shared
    if cuda_memory(device):                        # exported as kDLCUDA, which numpy cannot read
        assert b.device_data.__dlpack_device__()[0] == 2
        assert capsule_name(b.device_data.__dlpack__()) == "dltensor"
        # numpy >= 2.5 raises BufferError, older ones RuntimeError, with this message
        with pytest.raises((BufferError, RuntimeError), match="Unsupported device"):
            np.from_dlpack(b.device_data)
        return
    if not host_memory(device):
        with pytest.raises(blobrt.Error, match="cannot be exported through DLPack"):
            b.device_data
        return
    back = np.from_dlpack(b.device_data)
    np.testing.assert_array_equal(back, b.data)
    back[0, 0, 0] = -5                             # the device memory itself
    assert b.asum_data() == pytest.approx(np.abs(b.data).sum())
    assert b.data[0, 0, 0] == -5


def test_dlpack_versioned_and_legacy_protocols(device: str) -> None:
    if not host_memory(device):
        pytest.skip("%s cannot export" % device)
    b = blobrt.Blob((5,))
    exporter = b.device_data
    assert exporter.__dlpack_device__() == (1, 0)
    assert capsule_name(exporter.__dlpack__()) == "dltensor"
    assert capsule_name(exporter.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    with pytest.raises(blobrt.Error, match="stream must be None"):
        exporter.__dlpack__(stream=1)
    copy = np.from_dlpack(exporter, copy=True)
    assert not np.shares_memory(copy, b.data)


def test_dlpack_with_torch(device: str) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed here")
    if not host_memory(device):
        pytest.skip("%s cannot export" % device)
    b = blobrt.Blob((3, 4))
    b.data[...] = 1
    t = torch.from_dlpack(b.device_data)
    assert t.data_ptr() == b.data.ctypes.data
    t.mul_(3)
    assert b.asum_data() == 36
    c = blobrt.Blob.from_dlpack(torch.arange(6, dtype=torch.float64))
    np.testing.assert_array_equal(c.data, np.arange(6))



def test_dlpack_with_jax(device: str) -> None:
    jnp = pytest.importorskip("jax.numpy", reason="JAX is not installed here")
    if not host_memory(device):
        pytest.skip("%s cannot export" % device)
    b = blobrt.Blob((4, 8))
    b.data[...] = np.arange(32, dtype=np.float32).reshape(4, 8)
    x = jnp.from_dlpack(b.device_data)             # JAX shares CPU memory it is handed
    assert x.shape == (4, 8) and x.dtype == jnp.float32
    assert x.unsafe_buffer_pointer() == b.data.ctypes.data
    assert float(x.sum()) == 496.0
    # JAX arrays are immutable: they export read-only DLPack tensors, which import (a copy).
    c = blobrt.Blob.from_dlpack(jnp.arange(10, dtype=jnp.float32) * 2)
    assert c.shape == (10,) and c.asum_data() == 90.0


def test_from_numpy_accepts_read_only_arrays(device: str) -> None:
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    a.flags.writeable = False
    b = blobrt.Blob.from_numpy(a)
    assert b.dtype == np.float64 and b.shape == (2, 3)
    np.testing.assert_array_equal(b.data, a)
    b.data[...] = 0                                # the Blob's own copy stays writable
    assert a.sum() == 15

def test_from_numpy_reads_big_endian_arrays(device: str, tmp_path: Path) -> None:
    # As np.fromfile(..., dtype='>f4') gives them: values, not bytes, are what arrive.
    path = tmp_path / "values.be"
    np.arange(6, dtype=">f4").tofile(path)
    for dtype in (">f4", ">f8"):
        a = np.fromfile(path, dtype=">f4").astype(dtype).reshape(2, 3)
        b = blobrt.Blob.from_numpy(a)
        assert b.shape == (2, 3) and b.dtype == np.dtype(dtype).newbyteorder("=")
        np.testing.assert_array_equal(b.data, np.arange(6).reshape(2, 3))


def test_reshape_takes_numpy_integers(device: str) -> None:
    b = blobrt.Blob((2, 3), dtype=np.float32)
    shapes: list[tuple[int, ...]] = []
    b.reshape(np.int64(6))                         # arr.size and np.prod give NumPy integers
    shapes.append(b.shape)
    b.reshape(np.int64(2), np.int32(3))
    shapes.append(b.shape)
    b.reshape(np.array([3, 2]))
    shapes.append(b.shape)
    b.reshape(int(np.prod((1, 6))))
    shapes.append(b.shape)
    assert shapes == [(6,), (2, 3), (3, 2), (6,)]
    with pytest.raises(blobrt.InvalidTypeError, match="must be an integer"):
        b.reshape(2.5)  # type: ignore[arg-type]


# --- files ----------------------------------------------------------------------------

def expect_reference(b: blobrt.Blob) -> None:
    assert b.shape == (2, 3, 4, 5) and b.dtype == np.float32
    i = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    np.testing.assert_array_equal(b.data, i * 0.5 - 7)          # exact: written by Caffe
    np.testing.assert_array_equal(b.diff, (120 - i) * 0.25)
    assert b.asum_data() == 2835 and b.sumsq_data() == 98105     # Caffe's own figures
    b.update()
    assert b.asum_data() == 2777.5 and b.sumsq_data() == 87971.25


def test_caffe_reference_files_load_exactly(device: str) -> None:
    expect_reference(blobrt.load(REF + ".binaryproto"))
    expect_reference(blobrt.load(REF + ".prototxt"))


def test_save_writes_what_caffe_wrote(device: str, tmp_path: Path) -> None:
    b = blobrt.load(REF + ".binaryproto")
    out = tmp_path / "again.binaryproto"
    b.save(str(out), binary=True, write_diff=True)
    with open(REF + ".binaryproto", "rb") as f:
        assert out.read_bytes() == f.read()         # byte-identical to BVLC Caffe's file
    b.save(str(tmp_path / "t.prototxt"), binary=False)
    t = blobrt.load(str(tmp_path / "t.prototxt"))
    np.testing.assert_array_equal(t.data, b.data)


def test_double_blobs_round_trip_as_double_data(device: str, tmp_path: Path) -> None:
    b = blobrt.Blob.from_numpy(np.array([1e-300, 2.5, -3.0]))
    b.save(str(tmp_path / "d.binaryproto"))
    back = blobrt.load(str(tmp_path / "d.binaryproto"))
    assert back.dtype == np.float64
    np.testing.assert_array_equal(back.data, [1e-300, 2.5, -3.0])


def test_inspect(device: str) -> None:
    r = blobrt.inspect(REF + ".binaryproto")
    assert r["shape"] == [2, 3, 4, 5] and r["dtype"] == "float32" and r["has_diff"]
    assert r["data"]["asum"] == 2835 and r["diff"]["max"] == 30.0


# --- runtime --------------------------------------------------------------------------

def test_info_and_devices() -> None:
    info = blobrt.info()
    assert info["version"] == blobrt.version()
    assert {"schema_version", "search_path", "plugins", "selection", "active"} <= set(info)
    ids = [d["id"] for d in blobrt.devices()]
    assert ids == blobrt.available_devices() and ids[0] == "host:0"
    assert blobrt.current_device_id() == "host:0"


def test_active_device_is_a_deprecated_alias() -> None:
    # The older name still answers, with the new name's value, and says it is deprecated.
    with pytest.warns(DeprecationWarning, match="current_device_id"):
        assert blobrt.active_device() == blobrt.current_device_id()


def test_backend_from_the_environment() -> None:
    # A fresh interpreter picks its backend from BLOBRT_BACKEND, as C++ does.
    env = dict(os.environ, BLOBRT_BACKEND="blis" if "blis:0" in blobrt.available_devices() else "host")
    out = subprocess.run([sys.executable, "-c", "import blobrt; print(blobrt.current_device_id())"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out == env["BLOBRT_BACKEND"] + ":0"


# --- errors ---------------------------------------------------------------------------

def test_every_error_is_blobrt_error(device: str, tmp_path: Path) -> None:
    assert issubclass(blobrt.Error, RuntimeError)
    with pytest.raises(blobrt.Error, match="dtype int32 is not supported"):
        blobrt.Blob((2,), dtype=np.int32)
    with pytest.raises(blobrt.Error, match="dimension -1"):
        blobrt.Blob((2, -1))
    with pytest.raises(blobrt.Error, match="33 axes exceed"):
        blobrt.Blob((1,) * 33)
    with pytest.raises(blobrt.Error, match="missing.binaryproto"):
        blobrt.load(str(tmp_path / "missing.binaryproto"))
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\xff\x00not a proto")
    with pytest.raises(blobrt.Error):
        blobrt.load(str(garbage))
    a, c = blobrt.Blob((2, 3)), blobrt.Blob((4,))
    with pytest.raises(blobrt.Error, match="[Tt]rying to copy blobs of different sizes|shape"):
        a.copy_from(c)
    with pytest.raises(blobrt.Error, match="dtypes differ"):
        a.copy_from(blobrt.Blob((2, 3), dtype=np.float64))
    with pytest.raises(blobrt.Error, match="dtype int64"):
        blobrt.Blob.from_numpy(np.arange(3))
    with pytest.raises(blobrt.Error):
        blobrt.select_backend("nosuchbackend")


def test_share_data_and_copy_from(device: str) -> None:
    a, b = blobrt.Blob((2, 2)), blobrt.Blob((2, 2))
    a.data[...] = 3
    b.share_data(a)
    assert b.asum_data() == 12
    c = blobrt.Blob((1,))
    c.copy_from(a, reshape=True)
    assert c.shape == (2, 2) and c.asum_data() == 12


# --- threads --------------------------------------------------------------------------

def test_many_threads(device: str) -> None:
    errors: list[Exception] = []

    def work(seed: int) -> None:
        try:
            for _ in range(20):
                b = blobrt.Blob((257,), dtype=np.float64)
                b.data[...] = seed
                b.diff[...] = 1
                b.update()
                assert b.asum_data() == pytest.approx(257 * abs(seed - 1))
        except Exception as e:  # noqa: BLE001  (collected and reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


# --- stubs ----------------------------------------------------------------------------

def test_type_stubs_are_current() -> None:
    pytest.importorskip("nanobind.stubgen")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
    import gen_python_stubs  # type: ignore[import-not-found]  # tools/, put on sys.path above
    shipped = os.path.join(os.path.dirname(blobrt.__file__), "_blobrt.pyi")
    with open(shipped) as f:
        assert f.read() == gen_python_stubs.stub_text(), \
            "python/blobrt/_blobrt.pyi is stale: rerun tools/gen_python_stubs.py"


# --- the installed package ---------------------------------------------------------------

@pytest.mark.skipif(os.environ.get("BLOBRT_EXPECT_PACKAGED_PLUGINS") != "1",
                    reason="run from the build tree (the pip-installed package is checked by tools/build.sh test)")
def test_plugins_come_from_inside_the_installed_package() -> None:
    package_root = os.path.dirname(os.path.dirname(blobrt.__file__))  # site-packages
    plugins = [p for p in blobrt.info()["plugins"] if p["usable"] and not p["builtin"]]
    assert plugins, blobrt.info()
    for p in plugins:
        assert p["manifest"].startswith(package_root), p["manifest"]
    origins = [d["origin"] for d in blobrt.info()["search_path"]]
    assert "next to libblobrt" in origins


def test_from_numpy_keeps_zero_axes_and_copies_strided_arrays(device: str) -> None:
    scalar = blobrt.Blob.from_numpy(np.float32(3))
    assert scalar.shape == () and scalar.num_axes == 0 and scalar.count == 1
    assert scalar.asum_data() == 3
    t = np.arange(12.0).reshape(3, 4).T            # not C-contiguous
    b = blobrt.Blob.from_numpy(t)
    assert b.shape == (4, 3)
    np.testing.assert_array_equal(b.data, t)
