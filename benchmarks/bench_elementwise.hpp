// The element-wise rows of the benchmarks (bench_math.cpp, bench_opencl_math.cpp): one
// per code of the list, blobrt/elementwise_operations.h, so a new code is measured
// without an edit here.
#ifndef BLOBRT_BENCH_ELEMENTWISE_HPP
#define BLOBRT_BENCH_ELEMENTWISE_HPP

#include <string>
#include <vector>

#include "bench_common.hpp"
#include "blobrt/device.hpp"  // ElementwiseOp, from the list

namespace blobrt::bench {

// Every element-wise code of the list (blobrt/elementwise_operations.h), the operands it
// reads and the probe pattern of the bytes it must move: a and b or a and y read, y
// written: triad; a read: copy; y read and written: scale; y written only: fill. Whether it
// is compute-bound (HEAVY: a libm call per element) rides along in the row's label, so
// tools/bench_report.py takes both from the run instead of a list of its own.
struct EwOp {
  ElementwiseOp op;
  Pattern pattern;
  bool a, b;
  bool heavy;
};

// A row's label: its probe pattern, then " heavy" where compute-bound ("copy heavy").
inline std::string ew_label(const EwOp& info) {
  return std::string(to_string(info.pattern)) + (info.heavy ? " heavy" : "");
}
inline std::vector<EwOp> ew_ops() {
  std::vector<EwOp> ops;
#define BLOBRT_BENCH_EW_OP_(CODE, Cxx, name, number, A, B, Y, ALPHA, BETA, HEAVY, ...)                     \
  ops.push_back({ElementwiseOp::k##Cxx,                                                                     \
                 (A) && ((B) || (Y)) ? Pattern::kTriad : (A) ? Pattern::kCopy : (Y) ? Pattern::kScale : Pattern::kFill, \
                 (A) != 0, (B) != 0, (HEAVY) != 0});
  BLOBRT_ELEMENTWISE_OPS(BLOBRT_BENCH_EW_OP_)
#undef BLOBRT_BENCH_EW_OP_
  return ops;
}

}  // namespace blobrt::bench

#endif
