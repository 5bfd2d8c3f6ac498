"""Caffe model files without Caffe: blobrt.load_caffemodel / save_caffemodel /
caffemodel_layers on the LeNet .caffemodel BVLC Caffe wrote (shared/reference-data beside the
checkout, or BLOBRT_REFERENCE_DATA_DIR) and on small models written here byte by byte, and a
model file refused where a BlobProto is read."""
import os
import random
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import blobrt

REFERENCE = os.environ.get(
    "BLOBRT_REFERENCE_DATA_DIR",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "reference-data"))
LENET = os.path.join(REFERENCE, "lenet_iter_200.caffemodel")

needs_lenet = pytest.mark.skipif(not os.path.exists(LENET), reason=f"no {LENET} (BLOBRT_REFERENCE_DATA_DIR)")


@needs_lenet
def test_params_as_pycaffe_shows_them() -> None:
    params = blobrt.load_caffemodel(LENET)
    assert list(params) == ["conv1", "conv2", "ip1", "ip2"]
    assert [a.shape for a in params["conv1"]] == [(20, 1, 5, 5), (20,)]
    assert [a.shape for a in params["ip1"]] == [(500, 800), (500,)]
    assert all(a.dtype == np.float32 and a.flags.writeable for v in params.values() for a in v)
    assert np.isfinite(params["ip2"][0]).all() and np.abs(params["ip2"][0]).sum() > 0
    assert blobrt.caffemodel_layers(LENET)[:3] == [("mnist", "Data"), ("conv1", "Convolution"), ("pool1", "Pooling")]


@needs_lenet
def test_changed_weights_written_back_and_the_rest_kept(tmp_path: Path) -> None:
    params = blobrt.load_caffemodel(LENET)
    bias = np.arange(10, dtype=np.float64) * 0.5  # float64 given: stored in the file's float
    out = tmp_path / "changed.caffemodel"
    blobrt.save_caffemodel(out, {"ip2": [params["ip2"][0], bias]}, template=LENET)
    again = blobrt.load_caffemodel(out)
    assert np.array_equal(again["ip2"][1], bias.astype(np.float32))
    for name in ("conv1", "conv2", "ip1"):
        assert all(np.array_equal(a, b) for a, b in zip(again[name], params[name]))
    # Layer parameters blobrt does not declare are carried through: same size as Caffe's file.
    assert out.stat().st_size == os.path.getsize(LENET)
    assert blobrt.inspect(out)["layers"][1]["type"] == "Convolution"


@needs_lenet
def test_a_wrong_shape_or_name_writes_nothing(tmp_path: Path) -> None:
    params = blobrt.load_caffemodel(LENET)
    out = tmp_path / "never.caffemodel"
    with pytest.raises(blobrt.InvalidValueError, match="shape"):
        blobrt.save_caffemodel(out, {"ip2": [np.zeros((3, 3), np.float32), params["ip2"][1]]}, template=LENET)
    with pytest.raises(blobrt.InvalidValueError, match="no layer 'nope'"):
        blobrt.save_caffemodel(out, {"nope": []}, template=LENET)
    with pytest.raises(blobrt.InvalidValueError, match="blobs"):
        blobrt.save_caffemodel(out, {"ip2": params["ip2"][:1]}, template=LENET)
    assert not out.exists()


@needs_lenet
def test_a_model_file_is_not_read_as_an_empty_blob() -> None:
    with pytest.raises(blobrt.Error, match="appears to be a Caffe model file"):
        blobrt.load(LENET)


@needs_lenet
def test_a_blobproto_is_not_a_model_file(tmp_path: Path) -> None:
    path = tmp_path / "blob.binaryproto"
    b = blobrt.Blob((2, 3), dtype=np.float32)
    b.data[...] = 1
    b.save(path)
    with pytest.raises(blobrt.Error, match="not a Caffe model file"):
        blobrt.load_caffemodel(path)
    with pytest.raises(blobrt.MissingFileError):
        blobrt.load_caffemodel(tmp_path / "missing.caffemodel")


# ---- Protobuf's wire format by hand: model files without Caffe or protobuf (issue 48) ----

def _varint(n: int) -> bytes:
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([low])
        out += bytes([low | 0x80])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _field_varint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _blob(shape: "tuple[int, ...]", values: "list[float]", double: bool = False) -> bytes:
    packed = struct.pack(f"<{len(values)}{'d' if double else 'f'}", *values)
    return _field(7, _field(1, b"".join(_varint(d) for d in shape))) + (_field(8 if double else 5, packed) if values else b"")


def _legacy_blob(nchw: "tuple[int, int, int, int]", values: "list[float]") -> bytes:
    head = b"".join(_field_varint(i + 1, d) for i, d in enumerate(nchw))
    return head + _field(5, struct.pack(f"<{len(values)}f", *values))


def _layer(name: bytes, type_: bytes, *blobs: bytes) -> bytes:
    return _field(100, _field(1, name) + _field(2, type_) + b"".join(_field(7, b) for b in blobs))


def _v1_layer(name: bytes, type_: int, *blobs: bytes) -> bytes:
    return _field(2, _field(4, name) + _field_varint(5, type_) + b"".join(_field(6, b) for b in blobs))


def test_a_repeated_name_and_an_empty_blob_save_back(tmp_path: Path) -> None:
    # save_caffemodel refused what load_caffemodel had just returned: a name the file repeats
    # (train and test copies, one without blobs) and an empty blob (given back as shape (0,)).
    model = tmp_path / "repeats.caffemodel"
    model.write_bytes(_field(1, b"repeats") + _layer(b"ip", b"InnerProduct", _blob((2, 3), [1.0] * 6), _blob((2,), [0.5, 0.5]))
                      + _layer(b"ip", b"InnerProduct") + _layer(b"odd", b"Scale", b""))
    params = blobrt.load_caffemodel(model)
    assert [a.shape for a in params["ip"]] == [(2, 3), (2,)] and params["odd"][0].shape == (0,)
    params["ip"][1][:] = [7, 8]
    out = tmp_path / "out.caffemodel"
    blobrt.save_caffemodel(out, params, template=model)
    again = blobrt.load_caffemodel(out)
    assert again["ip"][1].tolist() == [7, 8] and again["odd"][0].shape == (0,)
    assert blobrt.caffemodel_layers(out) == [("ip", "InnerProduct"), ("ip", "InnerProduct"), ("odd", "Scale")]


def test_pycaffe_shapes_fit_a_v1_models_legacy_blobs(tmp_path: Path) -> None:
    # A V1 model's InnerProduct blobs are legacy 1x1xMxN / 1x1x1xN; pycaffe shows (M, N) and
    # (N,), and Caffe's CopyTrainedLayersFrom takes them (Blob::ShapeEquals' legacy rule).
    model = tmp_path / "v1.caffemodel"
    model.write_bytes(_v1_layer(b"fc", 14, _legacy_blob((1, 1, 2, 3), [0.0] * 6), _legacy_blob((1, 1, 1, 2), [0.0] * 2)))
    weights = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = tmp_path / "out.caffemodel"
    blobrt.save_caffemodel(out, {"fc": [weights, np.array([1, 2], np.float32)]}, template=model)
    again = blobrt.load_caffemodel(out)["fc"]
    assert again[0].shape == (1, 1, 2, 3) and again[0].reshape(2, 3).tolist() == weights.tolist()
    assert again[1].ravel().tolist() == [1, 2]
    blobrt.save_caffemodel(out, {"fc": blobrt.load_caffemodel(model)["fc"]}, template=model)  # the 4-D form too
    with pytest.raises(blobrt.InvalidValueError, match="legacy"):
        blobrt.save_caffemodel(out, {"fc": [weights.T.copy(), np.zeros(2, np.float32)]}, template=model)


@pytest.mark.parametrize("dtype", [">f8", np.longdouble, np.int64])
def test_every_real_dtype_reaches_a_double_blob_unrounded(tmp_path: Path, dtype: Any) -> None:
    # '>f8' and np.longdouble were stored into a double blob rounded to float32.
    model = tmp_path / "double.caffemodel"
    model.write_bytes(_layer(b"w", b"InnerProduct", _blob((2,), [0.0, 0.0], double=True)))
    exact = [0.1 + 2.0 ** -40, 3.0] if np.dtype(dtype).kind == "f" else [2 ** 40 + 1, 3]
    out = tmp_path / "out.caffemodel"
    blobrt.save_caffemodel(out, {"w": [np.array(exact, dtype=dtype)]}, template=model)
    again = blobrt.load_caffemodel(out)["w"][0]
    assert again.dtype == np.float64 and again.tolist() == [float(v) for v in exact]
    with pytest.raises(blobrt.InvalidTypeError, match="complex"):
        blobrt.save_caffemodel(out, {"w": [np.array([1j, 2], dtype=complex)]}, template=model)


def test_names_that_are_not_utf8_or_not_str(tmp_path: Path) -> None:
    # A non-UTF-8 layer name gave a bare UnicodeDecodeError, an int or bytes key
    # RuntimeError('std::bad_cast'): names round-trip as surrogates (or bytes), and a key of
    # another type is a blobrt.InvalidTypeError naming the file.
    model = tmp_path / "names.caffemodel"
    model.write_bytes(_layer(b"w\xff", b"InnerProduct", _blob((2,), [1.0, 2.0])))
    params = blobrt.load_caffemodel(model)
    assert list(params) == ["w\udcff"]
    out = tmp_path / "out.caffemodel"
    blobrt.save_caffemodel(out, {"w\udcff": [np.array([3, 4], np.float32)]}, template=model)
    assert blobrt.load_caffemodel(out)["w\udcff"][0].tolist() == [3, 4]
    blobrt.save_caffemodel(out, {b"w\xff": [np.array([5, 6], np.float32)]}, template=model)
    assert blobrt.load_caffemodel(out)["w\udcff"][0].tolist() == [5, 6]
    for key in (3, None):
        with pytest.raises(blobrt.InvalidTypeError, match=str(model)):
            blobrt.save_caffemodel(out, {key: [np.zeros(2, np.float32)]}, template=model)  # type: ignore[arg-type]
    with pytest.raises(blobrt.InvalidValueError, match=r"no layer 'w\\xfe'"):
        blobrt.save_caffemodel(out, {b"w\xfe": [np.zeros(2, np.float32)]}, template=model)


def test_a_forks_extra_fields_are_kept(tmp_path: Path) -> None:
    # Forks add fields to NetParameter: such a model was refused; it is read, and written
    # back with the extra fields' bytes still there.
    extra = _field_varint(999, 7) + _field(1000, b"a fork's field")
    model = tmp_path / "fork.caffemodel"
    model.write_bytes(_layer(b"w", b"InnerProduct", _blob((2,), [1.0, 2.0])) + extra)
    assert blobrt.load_caffemodel(model)["w"][0].tolist() == [1, 2]
    assert blobrt.inspect(model)["kind"] == "caffemodel"
    out = tmp_path / "out.caffemodel"
    blobrt.save_caffemodel(out, {"w": [np.array([3, 4], np.float32)]}, template=model)
    assert extra in out.read_bytes()
    with pytest.raises(blobrt.Error, match="appears to be a Caffe model file"):
        blobrt.load(model)


def test_a_datum_and_a_solverstate_are_not_blobs(tmp_path: Path) -> None:
    # They were read as the made-up Blobs (1, 28, 28, 0) and (200, 0, 0, 0).
    datum = tmp_path / "image.datum"
    datum.write_bytes(_field_varint(1, 1) + _field_varint(2, 28) + _field_varint(3, 28) + _field(4, bytes(784))
                      + _field_varint(5, 3))
    state = tmp_path / "lenet_iter_200.solverstate"
    state.write_bytes(_field_varint(1, 200) + _field(2, b"lenet_iter_200.caffemodel") + _field(3, _blob((2,), [1, 2]))
                      + _field_varint(4, 0))
    for path in (datum, state):
        for format in (None, "binary"):
            with pytest.raises(blobrt.Error, match="not a BlobProto"):
                blobrt.load(path, format=format)
        with pytest.raises(blobrt.Error, match=str(path)):
            blobrt.inspect(path)
        with pytest.raises(blobrt.Error, match=f"{path}: not a Caffe model file"):
            blobrt.load_caffemodel(path)


def _structure_offsets(data: bytes) -> "list[int]":
    """Offsets of a model's tags, lengths and names: every byte but the blobs' packed values."""
    out: "list[int]" = []

    def varint(i: int) -> "tuple[int, int]":
        n = shift = 0
        while True:
            c = data[i]
            i += 1
            n |= (c & 0x7F) << shift
            shift += 7
            if c < 0x80:
                return n, i

    def walk(start: int, end: int, messages: "dict[int, Any]") -> None:
        i = start
        while i < end:
            first = i
            tag, i = varint(i)
            wire = tag & 7
            if wire == 0:
                i = varint(i)[1]
            elif wire in (1, 5):
                i += 8 if wire == 1 else 4
            length = 0
            if wire == 2:
                length, i = varint(i)
            out.extend(range(first, i))
            inner = messages.get(tag >> 3) if wire == 2 else None
            if isinstance(inner, dict):
                walk(i, i + length, inner)
            elif inner is None and wire == 2:
                out.extend(range(i, i + length))
            i += length

    blob = {7: {}, 5: "values", 6: "values", 8: "values", 9: "values"}
    walk(0, len(data), {100: {7: blob}})
    return out


@needs_lenet
def test_corrupt_lenet_is_an_error_or_a_whole_model(tmp_path: Path) -> None:
    # One to three corrupt bytes in LeNet's structure (tags, lengths, names) made `blobrt.load`
    # and `blobrt inspect` read an empty Blob about one time in eleven. Each corrupt file is now
    # refused by blobrt.load; load_caffemodel and inspect give every layer or a blobrt.Error.
    data = Path(LENET).read_bytes()
    offsets = _structure_offsets(data)
    rng = random.Random(48)
    path = tmp_path / "corrupt.caffemodel"
    outcomes = {"model": 0, "error": 0}
    for _ in range(150):
        corrupt = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            corrupt[rng.choice(offsets)] = rng.randrange(256)
        path.write_bytes(bytes(corrupt))
        with pytest.raises(blobrt.Error, match=str(path)):
            blobrt.load(path)
        try:
            params = blobrt.load_caffemodel(path)
        except blobrt.Error as e:
            assert str(path) in str(e)
            outcomes["error"] += 1
            continue
        outcomes["model"] += 1
        report = blobrt.inspect(path)
        assert report["kind"] == "caffemodel" and len(report["layers"]) == 9, report
        assert sum(a.size for v in params.values() for a in v) == report["parameter_count"] == 431080
    assert outcomes["error"] > 0 and outcomes["model"] > 0, outcomes

