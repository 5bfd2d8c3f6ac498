// copy_rows (blobrt/math_operations.h): `rows` rows of `columns` elements from one strided
// layout to another, Caffe's Concat and Slice kernels (concat_layer.cu, slice_layer.cu) in
// one form. The host kernel and its MathSemantics (blobrt_kernels/math_operation.hpp).
#ifndef BLOBRT_KERNELS_COPY_ROWS_HPP
#define BLOBRT_KERNELS_COPY_ROWS_HPP

#include <algorithm>
#include <array>
#include <cstdint>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/parallel.hpp"

namespace blobrt_kernels {

// The elements a strided operand spans from its offset: (rows - 1) * stride + columns, 0 when
// nothing is copied; -1 when that does not fit in 64 bits.
inline std::int64_t rows_extent(std::int64_t rows, std::int64_t columns, std::int64_t stride) {
  if (rows == 0 || columns == 0) return 0;
  std::int64_t n = 0;
  if (__builtin_mul_overflow(rows - 1, stride, &n) || __builtin_add_overflow(n, columns, &n)) return -1;
  return n;
}

template <>
struct MathSemantics<MathOp::copy_rows> {
  using Args = MathArgs<MathOp::copy_rows>;
  static std::array<Operand, 2> operands(const Args& a) {
    return {{{"src", a.src, a.src_offset, rows_extent(a.rows, a.columns, a.src_stride), true, false},
             // Read as well: the elements between its rows stay as they were, so a device that
             // runs the host kernel through copies must copy them in before it copies dst back.
             {"dst", a.dst, a.dst_offset, rows_extent(a.rows, a.columns, a.dst_stride), true, true}}};
  }
  static const char* invalid(const Args& a) {
    if (rows_extent(a.rows, a.columns, a.src_stride) < 0 || rows_extent(a.rows, a.columns, a.dst_stride) < 0) {
      return "the rows' extent overflows 64 bits";
    }
    if (a.rows > 1 && a.columns > a.dst_stride) return "dst's rows overlap (columns > dst_stride)";
    return nullptr;
  }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    const T* src = p[0];
    T* dst = p[1];
    if (a.rows == 0 || a.columns == 0) return true;
    // Split by elements, not rows: an axis-0 Concat is one long row.
    parallel_for(a.rows * a.columns, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end;) {
        const std::int64_t r = i / a.columns, c = i % a.columns, n = std::min(a.columns - c, end - i);
        std::copy_n(src + r * a.src_stride + c, n, dst + r * a.dst_stride + c);
        i += n;
      }
    });
    return true;
  }
  static void routine(std::ostream& s, const Args& a) { s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "copy_rows"; }
};

}  // namespace blobrt_kernels

#endif
