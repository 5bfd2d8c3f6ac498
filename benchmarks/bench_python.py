#!/usr/bin/env python3
"""The Python package's costs (issue 15's figures), on the active device:
  - `blob.data` access (a NumPy view: head transition + array creation);
  - `asum_data()` on 2^24 floats, and, with --cpp-bench, the same Blob call from C++
    (blobrt-bench's blob/<device>/asum_data/float/16777216) in the same run, and their ratio;
  - `np.from_dlpack(blob.device_data)`.
usage: meson devenv -C build python3 ../benchmarks/bench_python.py [--cpp-bench PATH]
       (tools/bench-python.sh runs it on every backend)
Medians of repeated timeit runs; no assertion on time (benchmarks are not tests)."""
import argparse
import json
import statistics
import subprocess
import timeit

import numpy as np

import blobrt

ASUM_N = 1 << 24


def median_seconds(stmt, number, repeat=7):
    return statistics.median(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def cpp_asum_seconds(bench, device):
    """Median real time of the C++ Blob::asum_data benchmark on `device`, same size."""
    name = f"blob/{device}/asum_data/float/{ASUM_N}/real_time"
    out = subprocess.run(
        [bench, f"--benchmark_filter=^{name}$", "--benchmark_repetitions=7",
         "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
        check=True, capture_output=True, text=True).stdout
    for row in json.loads(out)["benchmarks"]:
        if row.get("aggregate_name") == "median":
            assert row["time_unit"] == "ns", row["time_unit"]
            return row["real_time"] * 1e-9
    raise RuntimeError(f"{bench} reported no median for {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpp-bench", help="path of blobrt-bench, for the C++ asum_data figure")
    args = parser.parse_args()

    device = blobrt.current_device_id()
    print("device:", device)
    small = blobrt.Blob((16,))
    small.data[...] = 1
    print("blob.data access: %.3f us" % (median_seconds(lambda: small.data, 100000) * 1e6))

    big = blobrt.Blob((ASUM_N,))
    big.data[...] = 1
    big.asum_data()
    py = median_seconds(big.asum_data, 50)
    print("asum_data(), 2^24 floats: %.3f ms" % (py * 1e3))
    if args.cpp_bench:
        del big  # the C++ run gets the memory bandwidth to itself
        cpp = cpp_asum_seconds(args.cpp_bench, device)
        print("asum_data(), 2^24 floats, C++: %.3f ms; Python/C++: %.3f" % (cpp * 1e3, py / cpp))

    try:
        small.device_data
        print("np.from_dlpack(blob.device_data): %.3f us"
              % (median_seconds(lambda: np.from_dlpack(small.device_data), 100000) * 1e6))
    except blobrt.Error as e:
        print("np.from_dlpack(blob.device_data): not offered here (%s)" % str(e).split(":")[0])


if __name__ == "__main__":
    main()
