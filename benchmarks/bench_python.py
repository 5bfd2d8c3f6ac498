#!/usr/bin/env python3
"""The Python package's costs (issue 15's figures), on the active device:
  - `blob.data` access (a NumPy view: head transition + array creation);
  - `asum_data()` on 2^24 floats, against the same call from C++ in the same process
    run through `blobrt-bench` separately (see docs/python.md);
  - `np.from_dlpack(blob.device_data)`.
usage: PYTHONPATH=build/python python3 benchmarks/bench_python.py
Medians of repeated timeit runs; no assertion on time (benchmarks are not tests)."""
import statistics
import timeit

import numpy as np

import blobrt


def median_seconds(stmt, number, repeat=7):
    return statistics.median(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def main():
    print("device:", blobrt.active_device())
    small = blobrt.Blob((16,))
    small.data[...] = 1
    print("blob.data access: %.3f us" % (median_seconds(lambda: small.data, 100000) * 1e6))
    big = blobrt.Blob((1 << 24,))
    big.data[...] = 1
    big.asum_data()
    print("asum_data(), 2^24 floats: %.3f ms" % (median_seconds(big.asum_data, 50) * 1e3))
    try:
        small.device_data
        print("np.from_dlpack(blob.device_data): %.3f us"
              % (median_seconds(lambda: np.from_dlpack(small.device_data), 100000) * 1e6))
    except blobrt.Error as e:
        print("np.from_dlpack(blob.device_data): not offered here (%s)" % str(e).split(":")[0])


if __name__ == "__main__":
    main()
