// gather_rows and scatter_add_rows (blobrt/math_operations.h): rows of a table picked by an
// index array, and their gradient added back (Caffe's EmbedForward and EmbedBackward kernels,
// embed_layer.cu, and BatchReindex's, batch_reindex_layer.cu). The host kernels and their
// MathSemantics (blobrt_kernels/math_operation.hpp). The index array holds the precision's
// numbers, as Caffe's bottom blob does; what an index means is row_of().
#ifndef BLOBRT_KERNELS_GATHER_ROWS_HPP
#define BLOBRT_KERNELS_GATHER_ROWS_HPP

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/parallel.hpp"

namespace blobrt_kernels {

// Caffe's static_cast<int>(index) (toward zero), or -1 where that is not a row of a table of
// table_rows rows (NaN, ±inf and what int cannot hold included).
template <typename T>
std::int64_t row_of(T index, std::int64_t table_rows) {
  if (!(index >= T(-2147483648.0) && index < T(2147483648.0))) return -1;
  const auto row = static_cast<std::int64_t>(index);
  return row >= 0 && row < table_rows ? row : -1;
}

// What both operations check: rows x columns and table_rows x columns fit in 64 bits.
struct GatherRowsSemantics {
  template <class Args>
  static const char* invalid(const Args& a) {
    std::int64_t n = 0;
    if (__builtin_mul_overflow(a.rows, a.columns, &n) || __builtin_mul_overflow(a.table_rows, a.columns, &n)) {
      return "rows x columns or table_rows x columns overflows 64 bits";
    }
    return nullptr;
  }
  template <class Args>
  static bool only_scales(const Args&, double*) { return false; }
};

template <>
struct MathSemantics<MathOp::gather_rows> : GatherRowsSemantics {
  using Args = MathArgs<MathOp::gather_rows>;
  static std::array<Operand, 3> operands(const Args& a) {
    const std::int64_t n = a.rows * a.columns;
    return {{{"index", a.index, a.index_offset, n == 0 ? 0 : a.rows, true, false},
             {"table", a.table, a.table_offset, n == 0 ? 0 : a.table_rows * a.columns, true, false},
             {"dst", a.dst, a.dst_offset, n, false, true}}};
  }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    const T* index = p[0];
    const T* table = p[1];
    T* dst = p[2];
    const std::int64_t columns = a.columns;
    if (a.rows == 0 || columns == 0) return true;
    parallel_for(a.rows * columns, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const std::int64_t row = row_of(index[i / columns], a.table_rows);
        dst[i] = row < 0 ? std::numeric_limits<T>::quiet_NaN() : table[row * columns + i % columns];
      }
    });
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "gather_rows";
  }
};

template <>
struct MathSemantics<MathOp::scatter_add_rows> : GatherRowsSemantics {
  using Args = MathArgs<MathOp::scatter_add_rows>;
  static std::array<Operand, 3> operands(const Args& a) {
    const std::int64_t n = a.rows * a.columns;
    return {{{"index", a.index, a.index_offset, n == 0 ? 0 : a.rows, true, false},
             {"src", a.src, a.src_offset, n, true, false},
             {"table", a.table, a.table_offset, n == 0 ? 0 : a.table_rows * a.columns, true, true}}};
  }
  // Each column on its own, its rows added in index order (Caffe's CPU order, so the sums are
  // the same on every device); split by columns.
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    const T* index = p[0];
    const T* src = p[1];
    T* table = p[2];
    const std::int64_t columns = a.columns;
    if (a.rows == 0 || columns == 0) return true;
    parallel_for(
        columns,
        [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t r = 0; r < a.rows; ++r) {
            const std::int64_t row = row_of(index[r], a.table_rows);
            if (row < 0) continue;
            for (std::int64_t c = begin; c < end; ++c) table[row * columns + c] += src[r * columns + c];
          }
        },
        std::max<std::int64_t>(1, kParallelThreshold / a.rows));
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "scatter_add_rows";
  }
};

}  // namespace blobrt_kernels

#endif
