// The CPU backend on BLIS: the plugin kit's CPU BLAS device (blobrt/plugin_kit_host.hpp,
// HostBlasDevice) with BLIS's axpy, scal, gemm and gemv; allocation, copies, dot, asum and
// the element-wise family stay on blobrt's kernels (BLIS 0.9's ?asumv is not vectorised and
// its ?dotv stays below the streaming limit: docs/performance-results.md).
// gemm: problems below blobrt_kernels::is_small_gemm run on the kit's loops (BLIS's set-up
// costs more); the rest on BLIS, one thread per call: from 2^20 multiply-adds (Caffe's fully
// connected layers, LeNet's second conv layer per image, every conv layer of a
// CaffeNet-sized net) cut into panels of C shared by blobrt's thread team, whose caller
// takes every panel a helper has not claimed (blis_gemm_split.hpp). BLIS's own threads are
// OpenMP's here (Debian's libblis is its OpenMP build), which split the work statically and
// spin at barriers: with one of two cores busy, LeNet's `caffe time` took 948-2,003 ms per
// step on them against 127 ms on one thread (issue 48; docs/performance.md, "Busy cores").
// BLIS_NUM_THREADS, OMP_NUM_THREADS or a BLIS_*_NT variable set by the user leaves every
// gemm's threads to BLIS, one call (BLIS_NUM_THREADS=1: one thread always).
// Which of BLIS's kernel sets runs: blis_kernel_choice.hpp.
#include <blis.h>

#include <string>

#include "blis_gemm_split.hpp"
#include "blis_kernel_choice.hpp"
#include "blobrt_kernels/parallel.hpp"
#include "blobrt/plugin_kit_host.hpp"

namespace {

namespace kit = blobrt::plugin_kit;
static_assert(sizeof(dim_t) == 8, "this plugin expects BLIS built with 64-bit dim_t");

trans_t trans(bool t) { return t ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE; }

// The user's say over BLIS's threads (read once): then BLIS's global setting decides.
bool user_sets_blis_threads() {
  static const bool set = [] {
    for (const char* name : {"BLIS_NUM_THREADS", "OMP_NUM_THREADS", "BLIS_JC_NT", "BLIS_PC_NT", "BLIS_IC_NT",
                             "BLIS_JR_NT", "BLIS_IR_NT"}) {
      if (!kit::getenv(name).empty()) return true;
    }
    return false;
  }();
  return set;
}

// One gemm as BLIS's call: on one thread (rntm), or with BLIS's global setting where the user
// chose BLIS's threads.
template <typename T>
void blis_gemm(bool ta, bool tb, dim_t m, dim_t n, dim_t k, T al, T* a, inc_t lda, T* b, inc_t ldb, T be, T* c,
               inc_t ldc, bool one_thread) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &rntm);
  rntm_t* threads = one_thread ? &rntm : nullptr;
  if constexpr (sizeof(T) == 4) {
    bli_sgemm_ex(trans(ta), trans(tb), m, n, k, &al, a, lda, 1, b, ldb, 1, &be, c, ldc, 1, nullptr, threads);
  } else {
    bli_dgemm_ex(trans(ta), trans(tb), m, n, k, &al, a, lda, 1, b, ldb, 1, &be, c, ldc, 1, nullptr, threads);
  }
}

// BLIS's register tile along C's rows and columns as the plugin calls it (row-major C): a
// kernel that prefers column storage gets the problem transposed, so that C's columns run
// along its MR and C's rows along its NR; one that prefers rows (haswell's) the other way.
template <typename T>
blis_plugin::PanelAlign panel_align() {
  static const blis_plugin::PanelAlign align = [] {
    const num_t dt = sizeof(T) == 4 ? BLIS_FLOAT : BLIS_DOUBLE;
    cntx_t* cntx = bli_gks_query_cntx();
    const std::int64_t mr = bli_cntx_get_blksz_def_dt(dt, BLIS_MR, cntx);
    const std::int64_t nr = bli_cntx_get_blksz_def_dt(dt, BLIS_NR, cntx);
    const bool prefers_columns = bli_cntx_l3_vir_ukr_prefers_cols_dt(dt, BLIS_GEMM_UKR, cntx);
    return prefers_columns ? blis_plugin::PanelAlign{nr, mr} : blis_plugin::PanelAlign{mr, nr};
  }();
  return align;
}

// gemm on blobrt's team in panels (see the top), or one call on BLIS's threads.
template <typename T>
void gemm_on_team(bool ta, bool tb, dim_t m, dim_t n, dim_t k, T al, T* a, inc_t lda, T* b, inc_t ldb, T be, T* c,
                  inc_t ldc) {
  if (user_sets_blis_threads()) {
    blis_gemm(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc, false);
    return;
  }
  blis_plugin::split_gemm(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc, blobrt_kernels::team(), panel_align<T>(),
                          [](bool ta_, bool tb_, std::int64_t m_, std::int64_t n_, std::int64_t k_, T al_, T* a_,
                             std::int64_t lda_, T* b_, std::int64_t ldb_, T be_, T* c_, std::int64_t ldc_) {
                            blis_gemm(ta_, tb_, m_, n_, k_, al_, a_, lda_, b_, ldb_, be_, c_, ldc_, true);
                          });
}

// BLIS's typed calls, as HostBlasDevice asks for them (row-major: unit column stride).
struct BlisCalls {
  static void axpy(dim_t n, float a, float* x, float* y) { bli_saxpyv(BLIS_NO_CONJUGATE, n, &a, x, 1, y, 1); }
  static void axpy(dim_t n, double a, double* x, double* y) { bli_daxpyv(BLIS_NO_CONJUGATE, n, &a, x, 1, y, 1); }
  static void scal(dim_t n, float a, float* x) { bli_sscalv(BLIS_NO_CONJUGATE, n, &a, x, 1); }
  static void scal(dim_t n, double a, double* x) { bli_dscalv(BLIS_NO_CONJUGATE, n, &a, x, 1); }
  static void gemm(bool ta, bool tb, dim_t m, dim_t n, dim_t k, float al, float* a, inc_t lda, float* b, inc_t ldb,
                   float be, float* c, inc_t ldc) {
    gemm_on_team(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
  }
  static void gemm(bool ta, bool tb, dim_t m, dim_t n, dim_t k, double al, double* a, inc_t lda, double* b,
                   inc_t ldb, double be, double* c, inc_t ldc) {
    gemm_on_team(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
  }
  static void gemv(bool t, dim_t rows, dim_t cols, float al, float* a, inc_t lda, float* x, float be, float* y) {
    bli_sgemv(trans(t), BLIS_NO_CONJUGATE, rows, cols, &al, a, lda, 1, x, 1, &be, y, 1);
  }
  static void gemv(bool t, dim_t rows, dim_t cols, double al, double* a, inc_t lda, double* x, double be, double* y) {
    bli_dgemv(trans(t), BLIS_NO_CONJUGATE, rows, cols, &al, a, lda, 1, x, 1, &be, y, 1);
  }
};

struct Blis : kit::HostBlasDevice<BlisCalls> {
  static int device_properties(int32_t index, blobrt_device_properties* out, blobrt_error* err) {
    if (int status = kit::check_index(err, "blis", index, 1)) return status;
    kit::set_text(out->name, "host CPU via BLIS %s", bli_info_get_version_str());
    kit::set_text(out->details,
                  "BLIS %s, kernels '%s' (%s), %ld online CPUs, %d-bit dimensions; level-1 calls split across "
                  "cores by blobrt",
                  bli_info_get_version_str(), blis_plugin::kernels_in_use().c_str(),
                  blis_plugin::kernel_choice().c_str(), sysconf(_SC_NPROCESSORS_ONLN),
                  static_cast<int>(bli_info_get_int_type_size()));
    kit::fill_host_properties(out);
    return BLOBRT_OK;
  }
};

}  // namespace

// BLIS's kernels are chosen as the plugin's table is first asked for, before any BLIS call.
BLOBRT_PLUGIN_DEFINE(Blis, "blis", (blis_plugin::kernel_choice(), std::string("BLIS ") + bli_info_get_version_str()))
