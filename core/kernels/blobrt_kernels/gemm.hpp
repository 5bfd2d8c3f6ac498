// gemm and gemv on host memory with Caffe's row-major conventions (plugin_abi.h): what the
// built-in host device and the core's host fallback run where no BLAS is loaded. Rows are
// split across cores; the inner loops run along contiguous rows so they vectorise. A BLAS
// (the BLIS plugin) is faster on large matrices: the CPU half of Caffe's math runs there
// when it is installed (host_math_device()).
// Header-only, shared by libblobrt and the plugins.
#ifndef BLOBRT_KERNELS_GEMM_HPP
#define BLOBRT_KERNELS_GEMM_HPP

#include <algorithm>
#include <array>
#include <cstdint>
#include <ostream>
#include <vector>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/parallel.hpp"
#include "blobrt_kernels/small_gemm.hpp"

namespace blobrt_kernels {

// Rows per split: enough that each thread gets at least ~2^20 multiply-adds.
inline std::int64_t row_threshold(std::int64_t work_per_row) {
  return std::max<std::int64_t>(2, (std::int64_t(1) << 21) / std::max<std::int64_t>(1, work_per_row));
}

namespace gemm_detail {

// Register tile of C: kMr rows by kNr columns, kept in registers across the k loop (two
// SSE vectors per row for float, one AVX or two SSE for double: 8 accumulator registers).
constexpr std::int64_t kMr = 4;
template <typename T>
constexpr std::int64_t kNr = 32 / sizeof(T);
// Cache blocks: a kKc x kNc panel of B (256 KiB of float) stays in L2 while every row
// band of C passes over it; a kMr x kKc sliver of A (4 KiB) in L1.
constexpr std::int64_t kKc = 256;
template <typename T>
constexpr std::int64_t kNc = 256 * 4 / sizeof(T);

// op(A)[i][p], op(B)[p][j] whatever the storage.
template <typename T>
struct Operands {
  bool trans_a, trans_b;
  std::int64_t m, n, k;
  const T* a;
  const T* b;
  T at_a(std::int64_t i, std::int64_t p) const { return trans_a ? a[p * m + i] : a[i * k + p]; }
  T at_b(std::int64_t p, std::int64_t j) const { return trans_b ? b[j * k + p] : b[p * n + j]; }
};

// Packs op(B)[p0, p1) x [j0, j1) as panels of kNr columns, each [p][kNr], zero-padded.
template <typename T>
void pack_b(const Operands<T>& o, std::int64_t p0, std::int64_t p1, std::int64_t j0, std::int64_t j1, T* out) {
  constexpr std::int64_t nr = kNr<T>;
  const std::int64_t depth = p1 - p0;
  for (std::int64_t jp = j0; jp < j1; jp += nr) {
    T* panel = out + (jp - j0) * depth;
    const std::int64_t width = std::min(nr, j1 - jp);
    for (std::int64_t p = 0; p < depth; ++p) {
      T* row = panel + p * nr;
      if (!o.trans_b && width == nr) {
        std::copy(o.b + (p0 + p) * o.n + jp, o.b + (p0 + p) * o.n + jp + nr, row);
        continue;
      }
      for (std::int64_t c = 0; c < nr; ++c) row[c] = c < width ? o.at_b(p0 + p, jp + c) : T(0);
    }
  }
}

// Packs alpha * op(A)[i0, i0 + kMr) x [p0, p1) as [p][kMr], zero-padded past row m.
template <typename T>
void pack_a(const Operands<T>& o, T alpha, std::int64_t i0, std::int64_t p0, std::int64_t p1, T* out) {
  const std::int64_t rows = std::min(kMr, o.m - i0);
  for (std::int64_t p = p0; p < p1; ++p) {
    T* col = out + (p - p0) * kMr;
    for (std::int64_t r = 0; r < kMr; ++r) col[r] = r < rows ? alpha * o.at_a(i0 + r, p) : T(0);
  }
}

// C[0, rows) x [0, cols) += the packed sliver times the packed panel (ldc = n).
template <typename T>
void micro_kernel(std::int64_t depth, const T* ap, const T* bp, T* c, std::int64_t ldc, std::int64_t rows,
                  std::int64_t cols) {
  constexpr std::int64_t nr = kNr<T>;
  T acc[kMr][nr] = {};
  for (std::int64_t p = 0; p < depth; ++p) {
    const T* bv = bp + p * nr;
    const T* av = ap + p * kMr;
    for (std::int64_t r = 0; r < kMr; ++r) {
#pragma omp simd
      for (std::int64_t j = 0; j < nr; ++j) acc[r][j] += av[r] * bv[j];
    }
  }
  if (rows == kMr && cols == nr) {
    for (std::int64_t r = 0; r < kMr; ++r) {
#pragma omp simd
      for (std::int64_t j = 0; j < nr; ++j) c[r * ldc + j] += acc[r][j];
    }
    return;
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < cols; ++j) c[r * ldc + j] += acc[r][j];
  }
}

// Rows [row_begin, row_end) of C += alpha * op(A) * op(B), blocked for the caches.
template <typename T>
void gemm_rows(const Operands<T>& o, T alpha, T* c, std::int64_t row_begin, std::int64_t row_end) {
  constexpr std::int64_t nr = kNr<T>, nc = kNc<T>;
  std::vector<T> b_pack(static_cast<std::size_t>(kKc * nc));
  std::vector<T> a_pack(static_cast<std::size_t>(kKc * kMr));
  for (std::int64_t j0 = 0; j0 < o.n; j0 += nc) {
    const std::int64_t j1 = std::min(o.n, j0 + nc);
    for (std::int64_t p0 = 0; p0 < o.k; p0 += kKc) {
      const std::int64_t p1 = std::min(o.k, p0 + kKc);
      pack_b(o, p0, p1, j0, j1, b_pack.data());
      for (std::int64_t i0 = row_begin; i0 < row_end; i0 += kMr) {
        const std::int64_t rows = std::min(kMr, row_end - i0);
        pack_a(o, alpha, i0, p0, p1, a_pack.data());
        for (std::int64_t jp = j0; jp < j1; jp += nr) {
          micro_kernel(p1 - p0, a_pack.data(), b_pack.data() + (jp - j0) * (p1 - p0), c + i0 * o.n + jp, o.n, rows,
                       std::min(nr, j1 - jp));
        }
      }
    }
  }
}

}  // namespace gemm_detail

// C = alpha * op(A) * op(B) + beta * C; op(A) m x k, op(B) k x n, C m x n;
// lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n. beta == 0 ignores C's old values
// (NaN included), and alpha == 0 or k == 0 reads neither A nor B, as BLAS does.
// Blocked as BLIS is (packed panels of B in L2, slivers of A in L1, a register tile of C),
// in portable C++ the compiler vectorises: several times slower than BLIS, which has
// hand-written kernels for each CPU; row bands of C are split across cores.
template <typename T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          const T* b, T beta, T* c) {
  if (is_small_gemm(m, n, k)) {  // blocking and splitting would cost more than the work
    small_gemm(trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
    return;
  }
  const gemm_detail::Operands<T> o{trans_a, trans_b, m, n, k, a, b};
  parallel_for(
      m,
      [&](std::int64_t row_begin, std::int64_t row_end) {
        for (std::int64_t i = row_begin; i < row_end; ++i) {
          T* ci = c + i * n;
          if (beta == T(0)) {
            std::fill(ci, ci + n, T(0));
          } else if (beta != T(1)) {
#pragma omp simd
            for (std::int64_t j = 0; j < n; ++j) ci[j] *= beta;
          }
        }
        if (alpha == T(0) || k == 0) return;
        gemm_detail::gemm_rows(o, alpha, c, row_begin, row_end);
      },
      std::max<std::int64_t>(row_threshold(n * k), gemm_detail::kMr * 4));
}

// y = alpha * op(A) * x + beta * y; A m x n (lda = n). Without transposition x has n
// elements and y m; with it, x has m and y n.
template <typename T>
void gemv(bool trans_a, std::int64_t m, std::int64_t n, T alpha, const T* a, const T* x, T beta, T* y) {
  const std::int64_t rows = trans_a ? n : m;
  auto scale_y = [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) y[i] = beta == T(0) ? T(0) : beta * y[i];
  };
  if (alpha == T(0) || (trans_a ? m : n) == 0) {  // y = beta * y; A and x are not read (BLAS)
    parallel_for(rows, scale_y);
    return;
  }
  if (!trans_a) {
    parallel_for(
        m,
        [&](std::int64_t begin, std::int64_t end) {
          scale_y(begin, end);
          for (std::int64_t i = begin; i < end; ++i) {
            const T* ai = a + i * n;
            T sum = 0;
#pragma omp simd reduction(+ : sum)
            for (std::int64_t j = 0; j < n; ++j) sum += ai[j] * x[j];
            y[i] += alpha * sum;
          }
        },
        row_threshold(n));
    return;
  }
  // y[j] += alpha * sum_i A[i][j] x[i]: each thread owns a range of y and walks A's rows.
  parallel_for(
      rows,
      [&](std::int64_t begin, std::int64_t end) {
        scale_y(begin, end);
        for (std::int64_t i = 0; i < m; ++i) {
          const T axi = alpha * x[i];
          const T* ai = a + i * n;
#pragma omp simd
          for (std::int64_t j = begin; j < end; ++j) y[j] += axi * ai[j];
        }
      },
      row_threshold(m));
}

// gemm and gemv as Caffe's math operations (math_operation.hpp says what each member is for).
template <>
struct MathSemantics<MathOp::gemm> {
  using Args = MathArgs<MathOp::gemm>;
  static std::array<Operand, 3> operands(const Args& g) {
    return {{{"A", g.a, g.a_offset, g.m * g.k, true, false},
             {"B", g.b, g.b_offset, g.k * g.n, true, false},
             {"C", g.c, g.c_offset, g.m * g.n, g.beta != 0, true}}};
  }
  static bool only_scales(const Args& g, double* beta) {
    *beta = g.beta;
    return g.k == 0 || g.alpha == 0;
  }
  template <typename T>
  static bool run(const Args& g, T* const* p) {
    gemm<T>(g.trans_a == BLOBRT_TRANS, g.trans_b == BLOBRT_TRANS, g.m, g.n, g.k, static_cast<T>(g.alpha), p[0], p[1],
            static_cast<T>(g.beta), p[2]);
    return true;
  }
  static void routine(std::ostream& s, const Args& g) { s << (g.precision == BLOBRT_FLOAT64 ? "d" : "s") << "gemm"; }
};

template <>
struct MathSemantics<MathOp::gemv> {
  using Args = MathArgs<MathOp::gemv>;
  static std::array<Operand, 3> operands(const Args& g) {
    const bool t = g.trans_a == BLOBRT_TRANS;
    return {{{"A", g.a, g.a_offset, g.m * g.n, true, false},
             {"x", g.x, g.x_offset, t ? g.m : g.n, true, false},
             {"y", g.y, g.y_offset, t ? g.n : g.m, g.beta != 0, true}}};
  }
  static bool only_scales(const Args& g, double* beta) {
    *beta = g.beta;
    return (g.trans_a == BLOBRT_TRANS ? g.m : g.n) == 0 || g.alpha == 0;
  }
  template <typename T>
  static bool run(const Args& g, T* const* p) {
    gemv<T>(g.trans_a == BLOBRT_TRANS, g.m, g.n, static_cast<T>(g.alpha), p[0], p[1], static_cast<T>(g.beta), p[2]);
    return true;
  }
  static void routine(std::ostream& s, const Args& g) { s << (g.precision == BLOBRT_FLOAT64 ? "d" : "s") << "gemv"; }
};

}  // namespace blobrt_kernels

#endif
