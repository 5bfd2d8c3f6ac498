// The CUDA backend: cudaMalloc'd buffers, pinned host mirrors (cudaMallocHost, Caffe's
// cpu_malloc_use_cuda_), level-1 BLAS through cuBLAS's v2 64-bit API (cublas?axpy_v2_64
// etc., so n beyond 2^31 needs no chunking) or, where cuBLAS's kernel is slower on the
// GPU, the plugin's own (level1.cu), memset and copies through the runtime API.
// One cuBLAS handle and one stream per device; every operation runs on that stream, and
// operations returning data to the host wait for it. The stream is a *blocking* one
// (cudaStreamDefault): it orders with the legacy default stream both ways, so a user's
// kernel launched on stream 0 before a Blob operation completes before it, and one
// launched after waits for it, as in Caffe, which ran everything on stream 0
// (docs/cuda.md: the ordering contract).
//
// Without a driver or a GPU, device_count reports 0 devices and cudaGetDeviceCount's
// status as the reason; no other entry point is reached.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "blobrt/plugin_abi.h"
#include "context.hpp"
#include "blobrt/plugin_kit.hpp"

namespace {

namespace kit = blobrt::plugin_kit;

using namespace blobrt_cuda;

template <typename T>
int axpy(void* context, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err);
template <typename T>
int dot(void* context, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, blobrt_error* err);
template <typename T>
int asum(void* context, int64_t n, const void* x, int64_t xo, T* r, blobrt_error* err);
template <typename T>
int scal(void* context, int64_t n, T alpha, void* x, int64_t xo, blobrt_error* err);

// The plugin's entry points, named as the table's fields: kit::table_of sets each one. No
// host_alias: device memory is separate.
struct Cuda {
  BLOBRT_KIT_ENTRY(device_count);
  BLOBRT_KIT_ENTRY(device_properties);
  BLOBRT_KIT_ENTRY(open_device);
  BLOBRT_KIT_ENTRY(close_device);
  BLOBRT_KIT_ENTRY(allocate);
  BLOBRT_KIT_ENTRY(release);
  BLOBRT_KIT_ENTRY(view);
  BLOBRT_KIT_ENTRY(release_view);
  BLOBRT_KIT_ENTRY(host_allocate);
  BLOBRT_KIT_ENTRY(host_release);
  BLOBRT_KIT_ENTRY(copy_to_device);
  BLOBRT_KIT_ENTRY(copy_to_host);
  BLOBRT_KIT_ENTRY(copy_device);
  BLOBRT_KIT_ENTRY(memset);
  BLOBRT_KIT_LEVEL1_FROM_TEMPLATES  // axpy, dot, asum, scal below
  BLOBRT_KIT_ENTRY(synchronize);
  // ABI 1.2: Caffe's gemm, gemv and element-wise family (gemm_gemv.cu, elementwise.cu).
  static constexpr auto gemm = blobrt_cuda::gemm;
  static constexpr auto gemv = blobrt_cuda::gemv;
  static constexpr auto elementwise = blobrt_cuda::elementwise;
  // ABI 1.4: Caffe's im2col and col2im (im2col.cu).
  static constexpr auto im2col = blobrt_cuda::conv_entry<false>;
  static constexpr auto col2im = blobrt_cuda::conv_entry<true>;
  // ABI 1.5: Caffe's max and average pooling (pooling.cu), softmax along an axis (softmax.cu).
  static constexpr auto max_pool = blobrt_cuda::pool_entry<true>;
  static constexpr auto max_pool_backward = blobrt_cuda::max_pool_backward;
  static constexpr auto ave_pool = blobrt_cuda::pool_entry<false>;
  static constexpr auto ave_pool_backward = blobrt_cuda::ave_pool_backward;
  static constexpr auto softmax = blobrt_cuda::softmax;
  static constexpr auto softmax_backward = blobrt_cuda::softmax_backward;
  // ABI 1.6: the softmax loss (softmax.cu), LRN across channels (lrn.cu).
  static constexpr auto softmax_loss = blobrt_cuda::softmax_loss;
  static constexpr auto softmax_loss_backward = blobrt_cuda::softmax_loss_backward;
  static constexpr auto lrn_scale = blobrt_cuda::lrn_scale;
  static constexpr auto lrn_backward = blobrt_cuda::lrn_backward;
  // ABI 1.6: rows between strided layouts, Caffe's Scale and Bias (rows.cu).
  static constexpr auto copy_rows = blobrt_cuda::copy_rows;
  static constexpr auto channel_affine = blobrt_cuda::channel_affine;
  // ABI 1.8: rows an index array names, and their gradient (gather_rows.cu).
  static constexpr auto gather_rows = blobrt_cuda::gather_rows;
  static constexpr auto scatter_add_rows = blobrt_cuda::scatter_add_rows;
  // ABI 1.8: Caffe's top-k accuracy (softmax.cu).
  static constexpr auto top_k_hits = blobrt_cuda::top_k_hits;
  // ABI 1.10: a 0/1 mask from the Philox4x32-10 stream, Caffe's Dropout (bernoulli_mask.cu).
  static constexpr auto bernoulli_mask = blobrt_cuda::bernoulli_mask;
  // ABI 1.11: Fast R-CNN's region of interest max pooling (roi_pooling.cu).
  static constexpr auto roi_max_pool = blobrt_cuda::roi_max_pool;
  static constexpr auto roi_max_pool_backward = blobrt_cuda::roi_max_pool_backward;
  // ABI 1.12: Caffe's n-d im2col and col2im over up to three spatial axes (im2col_3d.cu).
  static constexpr auto im2col_3d = blobrt_cuda::conv_3d_entry<false>;
  static constexpr auto col2im_3d = blobrt_cuda::conv_3d_entry<true>;
};

int Cuda::device_count(int32_t* count, blobrt_error* err) {
  int n = 0;
  cudaError_t status = cudaGetDeviceCount(&n);
  if (status != cudaSuccess) {
    *count = 0;
    blobrt_fail(err, BLOBRT_OK, "cudaGetDeviceCount: %s (%s)", cudaGetErrorName(status), cudaGetErrorString(status));
    return BLOBRT_OK;
  }
  *count = n;
  if (n == 0) blobrt_fail(err, BLOBRT_OK, "cudaGetDeviceCount found no CUDA device");
  return BLOBRT_OK;
}

std::string versions() {
  int runtime = 0, driver = 0, major = 0, minor = 0, patch = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  char text[160];
  std::snprintf(text, sizeof text, "CUDA runtime %d.%d, driver %d.%d, cuBLAS %d.%d.%d", runtime / 1000,
                (runtime % 1000) / 10, driver / 1000, (driver % 1000) / 10, major, minor, patch);
  return text;
}

int Cuda::device_properties(int32_t index, blobrt_device_properties* out, blobrt_error* err) {
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
  kit::set_text(out->name, "%s", prop.name);
  kit::set_text(out->details, "compute capability %d.%d; %d SMs; %s; PCI %04x:%02x:%02x",
                prop.major, prop.minor, prop.multiProcessorCount, versions().c_str(), prop.pciDomainID,
                prop.pciBusID, prop.pciDeviceID);
  out->memory_bytes = prop.totalGlobalMem;
  out->kind = BLOBRT_DEVICE_KIND_GPU;
  out->host_memory = 0;
  out->supports_fp64 = 1;
  out->has_pinned_host = 1;
  out->host_alias_buffers = 0;
  if (BLOBRT_STRUCT_HAS(blobrt_device_properties, out, view_alignment)) out->view_alignment = 256;  // cudaMalloc's
  // DLPack's kDLCUDA with the CUDA ordinal; handles are device pointers (offsets are addresses).
  kit::set_native(out, BLOBRT_NATIVE_CUDA, index, true);
  return BLOBRT_OK;
}

int Cuda::open_device(int32_t index, void** context, blobrt_error* err) {
  Level1Mode level1 = Level1Mode::kAuto;
  if (int s = level1_mode_from_environment(&level1, err)) return s;  // before anything is made
  auto* c = new Context;
  c->device = index;
  c->level1 = level1;
  DeviceScope on_device(index);  // the stream and cuBLAS handle belong to it; the caller's comes back
  cudaError_t status = on_device.status();
  if (status == cudaSuccess) status = cudaStreamCreateWithFlags(&c->stream, cudaStreamDefault);
  if (status != cudaSuccess) {
    delete c;
    return cuda_fail(err, "cudaSetDevice/cudaStreamCreateWithFlags", status);
  }
  cublasStatus_t blas = cublasCreate(&c->blas);
  if (blas == CUBLAS_STATUS_SUCCESS) blas = cublasSetStream(c->blas, c->stream);
  // Results of dot/asum come back to host memory; cuBLAS then waits for them.
  if (blas == CUBLAS_STATUS_SUCCESS) blas = cublasSetPointerMode(c->blas, CUBLAS_POINTER_MODE_HOST);
  if (blas == CUBLAS_STATUS_SUCCESS &&
      cudaDeviceGetAttribute(&c->multiprocessors, cudaDevAttrMultiProcessorCount, index) != cudaSuccess) {
    c->multiprocessors = 1;  // grid_blocks then gives at most 8 blocks
    (void)cudaGetLastError();  // not the next launch check's error
  }
  if (blas != CUBLAS_STATUS_SUCCESS) {
    if (c->blas) cublasDestroy(c->blas);
    cudaStreamDestroy(c->stream);
    delete c;
    return blas_fail(err, "cublasCreate/cublasSetStream", blas);
  }
  status = cudaMalloc(&c->scratch, level1_partials_capacity(c->multiprocessors) * sizeof(double));
  if (status != cudaSuccess) {
    cublasDestroy(c->blas);
    cudaStreamDestroy(c->stream);
    delete c;
    return cuda_fail(err, "cudaMalloc (asum's partial sums)", status);
  }
  *context = c;
  return BLOBRT_OK;
}

void Cuda::close_device(void* context) {
  Context* c = as_context(context);
  DeviceScope on_device(c->device);
  cudaStreamSynchronize(c->stream);
  cudaFree(c->scratch);
  cublasDestroy(c->blas);
  cudaStreamDestroy(c->stream);
  delete c;
}

int Cuda::allocate(void* context, size_t bytes, void** handle, blobrt_error* err) {
  Context* c = as_context(context);
  ON_DEVICE(c);
  CUDA_CHECK(cudaMalloc(handle, bytes), "cudaMalloc");
  return BLOBRT_OK;
}

void Cuda::release(void* context, void* handle) {
  Context* c = as_context(context);
  DeviceScope on_device(c->device);
  cudaStreamSynchronize(c->stream);  // nothing queued may still use it
  cudaFree(handle);
}

// Handles are device pointers: a view is the pointer at the offset, and owns nothing.
int Cuda::view(void*, void* buffer, size_t offset, size_t, void** handle, blobrt_error*) {
  *handle = static_cast<char*>(buffer) + offset;
  return BLOBRT_OK;
}
void Cuda::release_view(void*, void*) {}

int Cuda::host_allocate(void* context, size_t bytes, void** pointer, blobrt_error* err) {
  Context* c = as_context(context);
  ON_DEVICE(c);
  CUDA_CHECK(cudaMallocHost(pointer, bytes), "cudaMallocHost");
  return BLOBRT_OK;
}

void Cuda::host_release(void* context, void* pointer) {
  DeviceScope on_device(as_context(context)->device);
  cudaFreeHost(pointer);
}

int Cuda::copy_to_device(void* context, const void* host, void* dst, size_t offset, size_t bytes,
                         blobrt_error* err) {
  Context* c = as_context(context);
  if (bytes == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  CUDA_CHECK(cudaMemcpyAsync(at<char>(dst, offset), host, bytes, cudaMemcpyHostToDevice, c->stream), "cudaMemcpyAsync(HostToDevice)");
  // The host memory may change or be freed as soon as we return.
  CUDA_CHECK(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
  return BLOBRT_OK;
}

int Cuda::copy_to_host(void* context, const void* src, size_t offset, void* host, size_t bytes,
                       blobrt_error* err) {
  Context* c = as_context(context);
  if (bytes == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  CUDA_CHECK(cudaMemcpyAsync(host, at<char>(src, offset), bytes, cudaMemcpyDeviceToHost, c->stream), "cudaMemcpyAsync(DeviceToHost)");
  CUDA_CHECK(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
  return BLOBRT_OK;
}

int Cuda::copy_device(void* context, const void* src, size_t src_offset, void* dst, size_t dst_offset,
                      size_t bytes, blobrt_error* err) {
  Context* c = as_context(context);
  if (bytes == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  CUDA_CHECK(cudaMemcpyAsync(at<char>(dst, dst_offset), at<char>(src, src_offset), bytes, cudaMemcpyDeviceToDevice,
                             c->stream),
             "cudaMemcpyAsync(DeviceToDevice)");
  return BLOBRT_OK;
}

int Cuda::memset(void* context, void* dst, size_t offset, int32_t value, size_t bytes, blobrt_error* err) {
  Context* c = as_context(context);
  if (bytes == 0) return BLOBRT_OK;
  ON_DEVICE(c);
  CUDA_CHECK(cudaMemsetAsync(at<char>(dst, offset), value, bytes, c->stream), "cudaMemsetAsync");
  return BLOBRT_OK;
}

// cuBLAS's typed 64-bit entry points, overloaded so each operation is written once.
cublasStatus_t blas_axpy(cublasHandle_t h, int64_t n, const float* a, const float* x, float* y) {
  return cublasSaxpy_v2_64(h, n, a, x, 1, y, 1);
}
cublasStatus_t blas_axpy(cublasHandle_t h, int64_t n, const double* a, const double* x, double* y) {
  return cublasDaxpy_v2_64(h, n, a, x, 1, y, 1);
}
cublasStatus_t blas_dot(cublasHandle_t h, int64_t n, const float* x, const float* y, float* r) {
  return cublasSdot_v2_64(h, n, x, 1, y, 1, r);
}
cublasStatus_t blas_dot(cublasHandle_t h, int64_t n, const double* x, const double* y, double* r) {
  return cublasDdot_v2_64(h, n, x, 1, y, 1, r);
}
cublasStatus_t blas_asum(cublasHandle_t h, int64_t n, const float* x, float* r) {
  return cublasSasum_v2_64(h, n, x, 1, r);
}
cublasStatus_t blas_asum(cublasHandle_t h, int64_t n, const double* x, double* r) {
  return cublasDasum_v2_64(h, n, x, 1, r);
}
cublasStatus_t blas_scal(cublasHandle_t h, int64_t n, const float* a, float* x) {
  return cublasSscal_v2_64(h, n, a, x, 1);
}
cublasStatus_t blas_scal(cublasHandle_t h, int64_t n, const double* a, double* x) {
  return cublasDscal_v2_64(h, n, a, x, 1);
}

template <typename T>
int axpy(void* context, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err) {
  Context* c = as_context(context);
  if (n <= 0) return BLOBRT_OK;
  if (level1_uses_own_kernel(c, Level1Op::kAxpy, sizeof(T) == 8)) return own_axpy<T>(c, n, alpha, x, xo, y, yo, err);
  ON_DEVICE(c);
  BLAS_CHECK(blas_axpy(c->blas, n, &alpha, at<T>(x, xo), at<T>(y, yo)),
             kit::by_precision<T>("cublasSaxpy_v2_64", "cublasDaxpy_v2_64"));
  return BLOBRT_OK;
}

template <typename T>
int dot(void* context, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, blobrt_error* err) {
  Context* c = as_context(context);
  *r = 0;
  if (n <= 0) return BLOBRT_OK;
  ON_DEVICE(c);
  BLAS_CHECK(blas_dot(c->blas, n, at<T>(x, xo), at<T>(y, yo), r), kit::by_precision<T>("cublasSdot_v2_64", "cublasDdot_v2_64"));
  return BLOBRT_OK;
}

template <typename T>
int asum(void* context, int64_t n, const void* x, int64_t xo, T* r, blobrt_error* err) {
  Context* c = as_context(context);
  *r = 0;
  if (n <= 0) return BLOBRT_OK;
  ON_DEVICE(c);
  if (level1_uses_own_kernel(c, Level1Op::kAsum, sizeof(T) == 8)) return own_asum<T>(c, n, x, xo, r, err);
  BLAS_CHECK(blas_asum(c->blas, n, at<T>(x, xo), r), kit::by_precision<T>("cublasSasum_v2_64", "cublasDasum_v2_64"));
  return BLOBRT_OK;
}

template <typename T>
int scal(void* context, int64_t n, T alpha, void* x, int64_t xo, blobrt_error* err) {
  Context* c = as_context(context);
  if (n <= 0) return BLOBRT_OK;
  if (level1_uses_own_kernel(c, Level1Op::kScal, sizeof(T) == 8)) return own_scal<T>(c, n, alpha, x, xo, err);
  ON_DEVICE(c);
  BLAS_CHECK(blas_scal(c->blas, n, &alpha, at<T>(x, xo)), kit::by_precision<T>("cublasSscal_v2_64", "cublasDscal_v2_64"));
  return BLOBRT_OK;
}

int Cuda::synchronize(void* context, blobrt_error* err) {
  Context* c = as_context(context);
  ON_DEVICE(c);
  CUDA_CHECK(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
  return BLOBRT_OK;
}

std::string library_version() {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);  // needs no driver
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  char text[96];
  std::snprintf(text, sizeof text, "cuBLAS %d.%d.%d, CUDA runtime %d.%d", major, minor, patch, runtime / 1000,
                (runtime % 1000) / 10);
  return text;
}

}  // namespace

BLOBRT_PLUGIN_DEFINE(Cuda, "cuda", library_version())
