"""compare.py CAFFE_CHECKOUT ONE.caffemodel OTHER.caffemodel [LIMIT]: the largest difference of
OTHER's weights from ONE's, relative to each blob's largest weight; exit 1 above LIMIT
(default 1e-4: float rounding of a different summation order, grown through 100 steps)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(sys.argv[1], "python"))
from caffe.proto import caffe_pb2  # noqa: E402


def load(path: str) -> dict:
    net = caffe_pb2.NetParameter()
    with open(path, "rb") as f:
        net.ParseFromString(f.read())
    return {(layer.name, i): np.array(b.data, dtype=np.float64) for layer in net.layer for i, b in enumerate(layer.blobs)}


one, other = load(sys.argv[2]), load(sys.argv[3])
limit = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
if one.keys() != other.keys() or any(one[k].shape != other[k].shape for k in one):
    sys.exit(f"compare.py: {sys.argv[2]} and {sys.argv[3]} hold different nets")
worst = max(np.abs(one[k] - other[k]).max() / max(np.abs(one[k]).max(), 1e-30) for k in one)
print(f"{sum(v.size for v in one.values())} weights, largest difference {worst:.2e} of its blob's largest weight")
sys.exit(0 if worst <= limit else 1)
