"""Caffe model files without Caffe: blobrt.load_caffemodel / save_caffemodel /
caffemodel_layers on the LeNet .caffemodel BVLC Caffe wrote (shared/reference-data beside the
checkout, or BLOBRT_REFERENCE_DATA_DIR), and a model file refused where a BlobProto is read."""
import os
from pathlib import Path

import numpy as np
import pytest

import blobrt

REFERENCE = os.environ.get(
    "BLOBRT_REFERENCE_DATA_DIR",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "reference-data"))
LENET = os.path.join(REFERENCE, "lenet_iter_200.caffemodel")

pytestmark = pytest.mark.skipif(not os.path.exists(LENET), reason=f"no {LENET} (BLOBRT_REFERENCE_DATA_DIR)")


def test_params_as_pycaffe_shows_them() -> None:
    params = blobrt.load_caffemodel(LENET)
    assert list(params) == ["conv1", "conv2", "ip1", "ip2"]
    assert [a.shape for a in params["conv1"]] == [(20, 1, 5, 5), (20,)]
    assert [a.shape for a in params["ip1"]] == [(500, 800), (500,)]
    assert all(a.dtype == np.float32 and a.flags.writeable for v in params.values() for a in v)
    assert np.isfinite(params["ip2"][0]).all() and np.abs(params["ip2"][0]).sum() > 0
    assert blobrt.caffemodel_layers(LENET)[:3] == [("mnist", "Data"), ("conv1", "Convolution"), ("pool1", "Pooling")]


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


def test_a_model_file_is_not_read_as_an_empty_blob() -> None:
    with pytest.raises(blobrt.Error, match="appears to be a Caffe model file"):
        blobrt.load(LENET)


def test_a_blobproto_is_not_a_model_file(tmp_path: Path) -> None:
    path = tmp_path / "blob.binaryproto"
    b = blobrt.Blob((2, 3), dtype=np.float32)
    b.data[...] = 1
    b.save(path)
    with pytest.raises(blobrt.Error, match="not a Caffe model file"):
        blobrt.load_caffemodel(path)
    with pytest.raises(blobrt.MissingFileError):
        blobrt.load_caffemodel(tmp_path / "missing.caffemodel")
