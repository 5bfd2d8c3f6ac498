// What the CUDA plugin's files share: the per-device context and how CUDA and cuBLAS
// statuses become blobrt errors.
#ifndef BLOBRT_CUDA_CONTEXT_HPP
#define BLOBRT_CUDA_CONTEXT_HPP

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>

#include "blobrt/plugin_abi.h"
#include "blobrt/plugin_kit.hpp"

namespace blobrt_cuda {

// Where axpy, scal and asum run (level1.cu): the table measured on a GPU, cuBLAS for all,
// or the plugin's own kernels for all (BLOBRT_CUDA_LEVEL1=auto|cublas|own).
enum class Level1Mode { kAuto, kCublas, kOwn };
enum class Level1Op { kAxpy, kScal, kAsum };

struct Context {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  int multiprocessors = 1;  // sizes the kernels' grids (grid_blocks)
  Level1Mode level1 = Level1Mode::kAuto;
  void* scratch = nullptr;  // level1_partials_capacity() doubles: asum's partial sums and result
  // One asum at a time uses the scratch: threads share the context (and its stream), and
  // another's partials must not land between this one's two passes.
  std::mutex scratch_mutex;
};

inline Context* as_context(void* c) { return static_cast<Context*>(c); }

// A failed runtime call also leaves its error as the thread's last one, which the next
// kernel launch's check (cudaGetLastError) would then report as its own: a caught
// allocation failure must not fail the next axpy. Cleared here (a sticky error, which
// breaks the context, comes back from every later call anyway).
inline int cuda_fail(blobrt_error* err, const char* call, cudaError_t status) {
  (void)cudaGetLastError();
  return blobrt::plugin_kit::fail_call(err, status == cudaErrorMemoryAllocation, call, cudaGetErrorName(status),
                        cudaGetErrorString(status));
}

inline int blas_fail(blobrt_error* err, const char* call, cublasStatus_t status) {
  return blobrt::plugin_kit::fail_call(err, status == CUBLAS_STATUS_ALLOC_FAILED, call, cublasGetStatusName(status),
                        cublasGetStatusString(status));
}

#define CUDA_CHECK(expr, name)                                  \
  do {                                                          \
    cudaError_t status_ = (expr);                               \
    if (status_ != cudaSuccess) return cuda_fail(err, name, status_); \
  } while (0)

#define BLAS_CHECK(expr, name)                                          \
  do {                                                                  \
    cublasStatus_t status_ = (expr);                                    \
    if (status_ != CUBLAS_STATUS_SUCCESS) return blas_fail(err, name, status_); \
  } while (0)

// Every entry point selects its device first (the calling thread may use several) and
// gives the caller's back before it returns: the thread's current CUDA device belongs to
// the program (Caffe's, c10's), which blobrt never changes behind its back. Nothing is set
// when the caller is already on the device. A thread that never set one is on device 0 in
// CUDA's sense, and is put back there.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    int previous = -1;
    if (cudaGetDevice(&previous) == cudaSuccess && previous == device) return;
    status_ = cudaSetDevice(device);
    if (status_ == cudaSuccess) previous_ = previous;  // -1: cudaGetDevice failed, nothing to restore
  }
  ~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  cudaError_t status() const { return status_; }

 private:
  cudaError_t status_ = cudaSuccess;
  int previous_ = -1;  // the caller's device, to restore; -1: unchanged
};

#define ON_DEVICE(c)                          \
  DeviceScope device_scope_((c)->device);     \
  CUDA_CHECK(device_scope_.status(), "cudaSetDevice")

// Blocks of `threads` for `work` threads of a grid-stride kernel: 8 per multiprocessor at
// most (2048 resident threads each on sm_80/90 with 256), fewer for small work.
inline unsigned grid_blocks(const Context* c, int64_t work, int threads) {
  const int64_t wanted = (work + threads - 1) / threads, most = 8 * static_cast<int64_t>(c->multiprocessors);
  return static_cast<unsigned>(wanted < 1 ? 1 : wanted < most ? wanted : most);
}

// A grid-stride loop: `i` runs over [0, count) across every thread of the launch.
#define BLOBRT_CUDA_GRID_STRIDE(i, count)                                                          \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,                    \
               i##_step_ = static_cast<int64_t>(blockDim.x) * gridDim.x;                           \
       i < (count); i += i##_step_)

// One launch in the precision asked: run(T{}, blocks, stream) with T float or double, over
// `work` threads in blocks of `threads` on the context's device and stream, its launch checked
// (`name` in the error); nothing when work is 0.
template <typename Launch>
int launch_in_precision(void* context, int32_t precision, int64_t work, int threads, const char* name, Launch run,
                        blobrt_error* err) {
  Context* c = as_context(context);
  if (work == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  const unsigned blocks = grid_blocks(c, work, threads);
  if (precision == BLOBRT_FLOAT64) {
    run(double{}, blocks, c->stream);
  } else {
    run(float{}, blocks, c->stream);
  }
  CUDA_CHECK(cudaGetLastError(), name);
  return BLOBRT_OK;
}

template <typename T>
inline T* at(const void* buffer, int64_t offset) {
  return const_cast<T*>(static_cast<const T*>(buffer)) + offset;
}

// ABI 1.2 entry points, each in a file of its own (gemm_gemv.cu, elementwise.cu).
BLOBRT_KIT_ENTRY_TYPE(gemm) gemm;
BLOBRT_KIT_ENTRY_TYPE(gemv) gemv;
BLOBRT_KIT_ENTRY_TYPE(elementwise) elementwise;

// ABI 1.4: Caffe's im2col (conv_entry<false>) and col2im (conv_entry<true>), im2col.cu.
template <bool ToImage>
int conv_entry(void* context, int32_t precision, int64_t channels, int64_t height, int64_t width, int64_t kernel_h,
               int64_t kernel_w, int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w,
               int64_t dilation_h, int64_t dilation_w, const void* from, int64_t from_offset, void* to,
               int64_t to_offset, blobrt_error* err);

// ABI 1.5: Caffe's max and average pooling (pool_entry<true>, pool_entry<false>) and their
// backward operations, pooling.cu; softmax along an axis and its backward, softmax.cu.
template <bool Max>
int pool_entry(void* context, int32_t precision, int64_t planes, int64_t height, int64_t width, int64_t pooled_h,
               int64_t pooled_w, int64_t kernel_h, int64_t kernel_w, int64_t stride_h, int64_t stride_w, int64_t pad_h,
               int64_t pad_w, const void* bottom, int64_t bottom_offset, void* top, int64_t top_offset,
               blobrt_error* err);
BLOBRT_KIT_ENTRY_TYPE(max_pool_backward) max_pool_backward;
BLOBRT_KIT_ENTRY_TYPE(ave_pool_backward) ave_pool_backward;
BLOBRT_KIT_ENTRY_TYPE(softmax) softmax;
BLOBRT_KIT_ENTRY_TYPE(softmax_backward) softmax_backward;
// ABI 1.6: the softmax loss and its gradient, softmax.cu; LRN across channels, lrn.cu.
BLOBRT_KIT_ENTRY_TYPE(softmax_loss) softmax_loss;
BLOBRT_KIT_ENTRY_TYPE(softmax_loss_backward) softmax_loss_backward;
BLOBRT_KIT_ENTRY_TYPE(lrn_scale) lrn_scale;
BLOBRT_KIT_ENTRY_TYPE(lrn_backward) lrn_backward;
// ABI 1.6: rows between strided layouts and Caffe's Scale and Bias, rows.cu.
BLOBRT_KIT_ENTRY_TYPE(copy_rows) copy_rows;
BLOBRT_KIT_ENTRY_TYPE(channel_affine) channel_affine;
// ABI 1.8: Caffe's Embed and BatchReindex, gather_rows.cu.
BLOBRT_KIT_ENTRY_TYPE(gather_rows) gather_rows;
BLOBRT_KIT_ENTRY_TYPE(scatter_add_rows) scatter_add_rows;
// ABI 1.8: Caffe's top-k accuracy, softmax.cu (beside the loss that reads labels as it does).
BLOBRT_KIT_ENTRY_TYPE(top_k_hits) top_k_hits;
// ABI 1.10: Dropout's mask drawn on the device, bernoulli_mask.cu.
BLOBRT_KIT_ENTRY_TYPE(bernoulli_mask) bernoulli_mask;
// ABI 1.11: Fast R-CNN's region pooling, roi_pooling.cu.
BLOBRT_KIT_ENTRY_TYPE(roi_max_pool) roi_max_pool;
BLOBRT_KIT_ENTRY_TYPE(roi_max_pool_backward) roi_max_pool_backward;
// ABI 1.12: Caffe's n-d im2col (conv_3d_entry<false>) and col2im (conv_3d_entry<true>) over up
// to three spatial axes, im2col_3d.cu.
template <bool ToImage>
int conv_3d_entry(void* context, int32_t precision, int64_t channels, int64_t depth, int64_t height, int64_t width,
                  int64_t out_depth, int64_t out_height, int64_t out_width, int64_t kernel_d, int64_t kernel_h,
                  int64_t kernel_w, int64_t pad_d, int64_t pad_h, int64_t pad_w, int64_t stride_d, int64_t stride_h,
                  int64_t stride_w, int64_t dilation_d, int64_t dilation_h, int64_t dilation_w, const void* from,
                  int64_t from_offset, void* to, int64_t to_offset, blobrt_error* err);

// level1.cu: the plugin's own axpy, scal and asum, and when they run instead of cuBLAS's.
int level1_mode_from_environment(Level1Mode* mode, blobrt_error* err);
bool level1_uses_own_kernel(const Context* c, Level1Op op, bool is_double);
int level1_partials_capacity(int multiprocessors);  // in doubles
template <typename T>
int own_axpy(Context* c, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err);
template <typename T>
int own_scal(Context* c, int64_t n, T alpha, void* x, int64_t xo, blobrt_error* err);
template <typename T>
int own_asum(Context* c, int64_t n, const void* x, int64_t xo, T* r, blobrt_error* err);

}  // namespace blobrt_cuda

#endif
