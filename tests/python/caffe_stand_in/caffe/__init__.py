"""A stand-in for pycaffe (blobrt's tests/python/test_caffe_entry.py): the package `caffe`
whose extension `caffe._caffe` links a stand-in Caffe library holding blobrt's
data_parallel_entry.cpp, as pycaffe's _caffe.so links libcaffe.so."""
from ._caffe import solve, solver_count, solver_rank  # noqa: F401
