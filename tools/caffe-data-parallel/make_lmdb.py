"""Synthetic MNIST-shaped LMDBs of Caffe's Datum, as Caffe's convert_mnist_data writes them
(keys %08d, 1x28x28 uint8, label): digit d is a bright 8x5 patch at a place of its own over
noise, so LeNet learns it. Written through pycaffe's caffe_pb2 and python-lmdb (Debian:
python3-lmdb); CAFFE_PB2_DIR names the folder of a build's caffe_pb2.py where the checkout has
no pycaffe.   make_lmdb.py CAFFE_CHECKOUT OUTDIR   -> OUTDIR/train_lmdb (8192), test_lmdb (1024)"""
import os
import sys

import lmdb
import numpy as np

if os.environ.get("CAFFE_PB2_DIR"):  # a build without pycaffe: its generated caffe_pb2.py
    sys.path.insert(0, os.environ["CAFFE_PB2_DIR"])
    import caffe_pb2  # noqa: E402
else:
    sys.path.insert(0, os.path.join(sys.argv[1], "python"))
    from caffe.proto import caffe_pb2  # noqa: E402  (pycaffe's, from the checkout given)

rng = np.random.default_rng(1701)
for name, count in (("train_lmdb", 8192), ("test_lmdb", 1024)):
    labels = rng.integers(0, 10, count)
    images = (rng.random((count, 28, 28)) * 60).astype(np.uint8)
    env = lmdb.open(os.path.join(sys.argv[2], name), map_size=1 << 30)
    with env.begin(write=True) as txn:
        for i, digit in enumerate(labels):
            row, col = 2 + (digit // 5) * 14, 2 + (digit % 5) * 5
            images[i, row:row + 8, col:col + 5] = 200 + rng.integers(0, 55)
            datum = caffe_pb2.Datum(channels=1, height=28, width=28, label=int(digit), data=images[i].tobytes())
            txn.put(b"%08d" % i, datum.SerializeToString())
    env.close()
