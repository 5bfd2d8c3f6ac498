// The CPU backend on BLIS: the plugin kit's CPU BLAS device (blobrt/plugin_kit_host.hpp,
// HostBlasDevice) with BLIS's axpy, scal, gemm and gemv; allocation, copies, dot, asum and
// the element-wise family stay on blobrt's kernels (BLIS 0.9's ?asumv is not vectorised and
// its ?dotv stays below the streaming limit: docs/performance-results.md).
// gemm: problems below blobrt_kernels::is_small_gemm run on the kit's loops (BLIS's set-up
// costs more); from 2^20 multiply-adds (Caffe's fully connected layers, LeNet's second conv
// layer per image, every conv layer of a CaffeNet-sized net) on BLIS's own threads, as many
// as blobrt's team; between the two on one thread (LeNet's first conv layer: two threads
// were slower there). Threads only where the work pays for them: BLIS's OpenMP threads
// busy-wait for each other, and on shared cores a 64x500x784 gemm once took 2-6 ms instead
// of 0.6 (docs/performance.md, "The MLP step"), while on free cores two threads run
// 500x800x64 in 128 us instead of 229. BLIS_NUM_THREADS, OMP_NUM_THREADS or a BLIS_*_NT variable set by
// the user leaves every gemm's threads to BLIS (BLIS_NUM_THREADS=1: one thread always).
// (Split into concurrent bli_?gemm calls, Debian's OpenMP BLIS read memory it had freed.)
// Which of BLIS's kernel sets runs: blis_kernel_choice.hpp.
#include <blis.h>

#include <string>

#include "blis_kernel_choice.hpp"
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

// Threads for one gemm (see the top): BLIS's own from 2^20 multiply-adds, else one; nullptr
// (BLIS's global setting) where the user chose.
constexpr dim_t kThreadedGemmWork = dim_t(1) << 20;
rntm_t* gemm_threads(dim_t m, dim_t n, dim_t k, rntm_t* rntm) {
  if (user_sets_blis_threads()) return nullptr;
  bli_rntm_set_num_threads(m * n * k >= kThreadedGemmWork ? blobrt_kernels::team_size() : 1, rntm);
  return rntm;
}

// BLIS's typed calls, as HostBlasDevice asks for them (row-major: unit column stride).
struct BlisCalls {
  static void axpy(dim_t n, float a, float* x, float* y) { bli_saxpyv(BLIS_NO_CONJUGATE, n, &a, x, 1, y, 1); }
  static void axpy(dim_t n, double a, double* x, double* y) { bli_daxpyv(BLIS_NO_CONJUGATE, n, &a, x, 1, y, 1); }
  static void scal(dim_t n, float a, float* x) { bli_sscalv(BLIS_NO_CONJUGATE, n, &a, x, 1); }
  static void scal(dim_t n, double a, double* x) { bli_dscalv(BLIS_NO_CONJUGATE, n, &a, x, 1); }
  static void gemm(bool ta, bool tb, dim_t m, dim_t n, dim_t k, float al, float* a, inc_t lda, float* b, inc_t ldb,
                   float be, float* c, inc_t ldc) {
    rntm_t rntm = BLIS_RNTM_INITIALIZER;
    bli_sgemm_ex(trans(ta), trans(tb), m, n, k, &al, a, lda, 1, b, ldb, 1, &be, c, ldc, 1, nullptr,
                 gemm_threads(m, n, k, &rntm));
  }
  static void gemm(bool ta, bool tb, dim_t m, dim_t n, dim_t k, double al, double* a, inc_t lda, double* b,
                   inc_t ldb, double be, double* c, inc_t ldc) {
    rntm_t rntm = BLIS_RNTM_INITIALIZER;
    bli_dgemm_ex(trans(ta), trans(tb), m, n, k, &al, a, lda, 1, b, ldb, 1, &be, c, ldc, 1, nullptr,
                 gemm_threads(m, n, k, &rntm));
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
