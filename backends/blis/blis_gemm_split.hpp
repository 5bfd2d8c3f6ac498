// How the BLIS plugin threads a gemm (issue 48, "busy cores"): BLIS runs each call on one
// thread, and a large gemm is cut into panels of C (bands of rows, or of columns when C is
// wider than tall), one single-threaded call each, shared by blobrt's thread team
// (blobrt_kernels/thread_team.hpp). The team's caller takes every panel no helper has
// claimed, so a helper that does not get a core costs nothing but its own panels' share
// of the speed-up; BLIS's OpenMP threads instead split the work statically and wait for
// each other at barriers, and with one core taken by another process a 500x64x800 gemm or
// a LeNet step ran many times slower than on one thread (docs/performance.md, "Busy cores:
// gemm and the Caffe step").
// Each panel is a gemm of its own on the same operands (row-major, Caffe's strides), so
// the result is BLIS's for that panel whoever runs it. Header-only for the test
// (tests/plugins/blis_gemm_split_test.cpp), which runs it with a reference gemm.
#ifndef BLOBRT_BLIS_GEMM_SPLIT_HPP
#define BLOBRT_BLIS_GEMM_SPLIT_HPP

#include <algorithm>
#include <cstdint>

#include "blobrt_kernels/thread_team.hpp"

namespace blis_plugin {

// Below this many multiply-adds a gemm is one call: LeNet's first conv layer (288k per
// image) was slower on two threads than on one (docs/performance.md).
constexpr std::int64_t kSplitGemmWork = std::int64_t(1) << 20;
// A panel has at least this many multiply-adds: each call costs BLIS a few microseconds of
// set-up and packs its own copy of the operand the panels share.
constexpr std::int64_t kMinPanelWork = std::int64_t(1) << 19;

// Where panel edges may fall: multiples of BLIS's register tile along that side of C, so
// that no panel but the last has a partial tile (on this project's AMD EPYC, a 500x64x800
// sgemm cut into four bands of 16 rows lost 23 % to partial tiles, in bands of 12 rows 6 %).
struct PanelAlign {
  std::int64_t rows = 1, columns = 1;
};

// The cut of C: `count` panels of rows (or columns) over [0, extent), edges on `align`.
struct GemmPanels {
  bool by_columns;
  std::int64_t extent;
  int count;
  std::int64_t align;
  // Panel p's first row (column); begin(count) is extent.
  std::int64_t begin(int p) const {
    if (p >= count) return extent;
    const std::int64_t at = extent * p / count;
    return std::min(extent, (at + align / 2) / align * align);
  }
};

// The panels of an m x n x k gemm for a team of `team` threads: one per member (each more
// costs BLIS a call's set-up and another packing of the shared operand: on the EPYC, four
// bands of 500x64x800 took 6 % longer than one call, two 2 %), along C's longer side (the
// operand packed again by each call is then the smaller one), at most one per aligned
// stretch. count 1: not split.
inline GemmPanels gemm_panels(std::int64_t m, std::int64_t n, std::int64_t k, int team, PanelAlign align = {}) {
  const bool by_columns = n > m;
  const std::int64_t extent = by_columns ? n : m;
  const std::int64_t step = std::max<std::int64_t>(1, by_columns ? align.columns : align.rows);
  const std::int64_t work = m * n * k;
  if (team <= 1 || work < kSplitGemmWork) return {by_columns, extent, 1, step};
  std::int64_t count = std::min<std::int64_t>(team, extent / step);
  count = std::min(count, work / kMinPanelWork);
  count = std::min<std::int64_t>(count, blobrt_kernels::ThreadTeam::kMaxRanges);
  return {by_columns, extent, static_cast<int>(std::max<std::int64_t>(count, 1)), step};
}

// C = alpha op(A) op(B) + beta C (row-major: lda, ldb, ldc are row strides), as `call`
// (a single-threaded gemm with the same arguments) on each panel, on `team`.
template <typename T, typename Call>
void split_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, T* a, std::int64_t lda,
                T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc, blobrt_kernels::ThreadTeam& team,
                PanelAlign align, Call call) {
  const GemmPanels panels = gemm_panels(m, n, k, team.size(), align);
  if (panels.count <= 1) {
    call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  struct Job {
    GemmPanels panels;
    bool ta, tb;
    std::int64_t m, n, k, lda, ldb, ldc;
    T alpha, beta;
    T *a, *b, *c;
    Call* call;
  } job{panels, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta, a, b, c, &call};
  team.run(panels.count, [](const void* context, std::int64_t p) {
    const Job& j = *static_cast<const Job*>(context);
    const std::int64_t begin = j.panels.begin(static_cast<int>(p)), end = j.panels.begin(static_cast<int>(p) + 1);
    if (end <= begin) return;
    if (j.panels.by_columns) {  // C[:, begin:end] = op(A) op(B)[:, begin:end]
      T* bp = j.tb ? j.b + begin * j.ldb : j.b + begin;
      (*j.call)(j.ta, j.tb, j.m, end - begin, j.k, j.alpha, j.a, j.lda, bp, j.ldb, j.beta, j.c + begin, j.ldc);
    } else {  // C[begin:end, :] = op(A)[begin:end, :] op(B)
      T* ap = j.ta ? j.a + begin : j.a + begin * j.lda;
      (*j.call)(j.ta, j.tb, end - begin, j.n, j.k, j.alpha, ap, j.lda, j.b, j.ldb, j.beta, j.c + begin * j.ldc, j.ldc);
    }
  }, &job);
}

}  // namespace blis_plugin

#endif
