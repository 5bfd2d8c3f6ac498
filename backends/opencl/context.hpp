// What the OpenCL plugin's files share: the per-device context, how OpenCL and CLBlast
// statuses become blobrt errors, and where an operand lives (the in-place host memory of
// a unified device's buffer, for the small-n host path: docs/opencl.md).
#ifndef BLOBRT_OPENCL_CONTEXT_HPP
#define BLOBRT_OPENCL_CONTEXT_HPP

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast.h>

#include <cstdint>
#include <cstring>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/parallel.hpp"
#include "blobrt/plugin_kit.hpp"
#include "status_names.hpp"

namespace blobrt_opencl {

inline std::string device_string(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "?";
  std::string s(size, '\0');
  clGetDeviceInfo(d, what, size, s.data(), nullptr);
  s.resize(std::strlen(s.c_str()));
  return s;
}

template <typename T>
T device_value(cl_device_id d, cl_device_info what) {
  T value{};
  clGetDeviceInfo(d, what, sizeof value, &value, nullptr);
  return value;
}

// The plugin's CPU kernels (cpu_kernels.hpp), float ones first, then double at the same
// position + kDoubleKernels.
// The most chunks one launch of the own CPU kernels splits into: the reduction's partial
// sums are read back into a host array of this many.
constexpr size_t kMaxCpuKernelParts = 1024;
enum CpuKernel { kDot, kAsum, kAxpy, kScal, kDoubleKernels, kCpuKernelCount = 2 * kDoubleKernels };
inline const char* const kCpuKernelNames[kCpuKernelCount] = {"blobrt_sdot", "blobrt_sasum", "blobrt_saxpy", "blobrt_sscal",
                                                             "blobrt_ddot", "blobrt_dasum", "blobrt_daxpy", "blobrt_dscal"};

// Below this many elements, an operation on a device that uses its buffers' host memory in
// place runs on that memory on the calling thread, after clFinish (docs/opencl.md, "Small
// operations"): PoCL's launch costs ~18 us, longer than one core takes for 32 Ki elements.
constexpr int64_t kHostPathElements = blobrt_kernels::kParallelThreshold;

struct Context;

// How level-1 calls of precision T run on a context: picked once, when it opens
// (pick_level1_routes, level1.cpp). Sizes are in elements, n > 0, the precision checked.
template <typename T>
struct Level1Route {
  int (*axpy)(Context* c, int64_t n, T alpha, const void* x, int64_t xo, void* y, int64_t yo, blobrt_error* err);
  int (*scal)(Context* c, int64_t n, T alpha, void* x, int64_t xo, blobrt_error* err);
  int (*dot)(Context* c, int64_t n, const void* x, int64_t xo, const void* y, int64_t yo, T* r, blobrt_error* err);
  int (*asum)(Context* c, int64_t n, const void* x, int64_t xo, T* r, blobrt_error* err);
};

struct Context {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  bool unified = false;
  bool in_place = false;  // unified, and buffers' host memory is the device's own (no map needed)
  bool fp64 = false;
  size_t alignment = 128;
  cl_ulong max_alloc = 0;
  cl_mem scratch = nullptr;  // reduction results land here before the read-back
  std::mutex mutex;          // guards scratch, pinned and the own kernels' arguments
  std::mutex notes_mutex;    // guards blast_routines_called
  std::set<std::string> blast_routines_called;  // CLBlast routines (and precisions) run here
  // CPU devices run the plugin's own level-1 kernels (cpu_kernels.hpp), built at the first
  // call; `parts` (at most kMaxCpuKernelParts) chunks at most, a reduction's partial sums
  // in `partials`, which the host reads back into an array of kMaxCpuKernelParts.
  bool own_kernels = false;
  const Level1Route<float>* level1_float = nullptr;
  const Level1Route<double>* level1_double = nullptr;
  size_t parts = 1;
  cl_program cpu_program = nullptr;
  cl_kernel kernels[kCpuKernelCount] = {};
  cl_mem partials = nullptr;
  // The element-wise kernels (elementwise_kernels.hpp): the program built at the first
  // element-wise call, each kernel made at its code's first call, [precision][operation
  // code]; ew_missing marks a code the program has no kernel for (answered unsupported).
  cl_program ew_program = nullptr;
  cl_kernel ew_kernels[2][BLOBRT_EW_OP_COUNT] = {};
  bool ew_missing[2][BLOBRT_EW_OP_COUNT] = {};
  // im2col.cpp's kernels, [0 im2col, 1 col2im][precision], made at the first call.
  cl_program conv_program = nullptr;
  cl_kernel conv_kernels[2][2] = {};
  // pooling.cpp's kernels, [max_pool, max_pool_backward, ave_pool, ave_pool_backward][precision],
  // made at the first call.
  cl_program pool_program = nullptr;
  cl_kernel pool_kernels[4][2] = {};
  // softmax.cpp's kernels, [softmax, softmax_backward, softmax_loss, softmax_loss_backward,
  // top_k_hits][precision], made at the first call.
  cl_program softmax_program = nullptr;
  cl_kernel softmax_kernels[5][2] = {};
  // copy_rows.cpp's kernel, [0][32-bit, 64-bit words], made at the first call.
  cl_program copy_rows_program = nullptr;
  cl_kernel copy_rows_kernels[1][2] = {};
  // lrn.cpp's kernels, [lrn_scale, lrn_backward][precision], made at the first call.
  cl_program lrn_program = nullptr;
  cl_kernel lrn_kernels[2][2] = {};
  // channel_affine.cpp's kernel, [0][precision], made at the first call.
  cl_program channel_affine_program = nullptr;
  cl_kernel channel_affine_kernels[1][2] = {};
  // gather_rows.cpp's kernels, [gather_rows, scatter_add_rows][precision], made at the first call.
  cl_program gather_rows_program = nullptr;
  cl_kernel gather_rows_kernels[2][2] = {};
  // bernoulli_mask.cpp's kernel, [0][precision], made at the first call.
  cl_program bernoulli_mask_program = nullptr;
  cl_kernel bernoulli_mask_kernels[1][2] = {};
  // roi_pooling.cpp's kernels, [roi_max_pool, its backward][precision], made at the first call.
  cl_program roi_pool_program = nullptr;
  cl_kernel roi_pool_kernels[2][2] = {};
  // im2col_3d.cpp's kernels, [0 im2col_3d, 1 col2im_3d][precision], made at the first call.
  cl_program conv_3d_program = nullptr;
  cl_kernel conv_3d_kernels[2][2] = {};
  cl_ulong cache_bytes = ~cl_ulong(0);  // CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: y beyond it is streamed
  std::unordered_map<void*, cl_mem> pinned;  // host pointer -> the buffer it maps
};

inline Context* as_context(void* c) { return static_cast<Context*>(c); }

inline cl_mem as_mem(const void* handle) { return static_cast<cl_mem>(const_cast<void*>(handle)); }

inline int cl_fail(blobrt_error* err, const char* call, cl_int status) {
  bool out_of_memory = status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_HOST_MEMORY ||
                       status == CL_OUT_OF_RESOURCES;
  return blobrt::plugin_kit::fail_call(err, out_of_memory, call, cl_status_name(status), std::to_string(status).c_str());
}

#define CL_CHECK(call_expr, name)                            \
  do {                                                       \
    cl_int status_ = (call_expr);                            \
    if (status_ != CL_SUCCESS) return cl_fail(err, name, status_); \
  } while (0)

inline int check_blast(blobrt_error* err, const char* call, clblast::StatusCode status) {
  if (status == clblast::StatusCode::kSuccess) return BLOBRT_OK;
  int code = static_cast<int>(status);
  return blobrt::plugin_kit::fail_call(err, false, call, cl_status_name(code), std::to_string(code).c_str());
}

inline double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// A CLBlast routine compiles its kernels for this context in its first call: that call
// is timed and says so in a note (plugin_abi.h, "Notes"), which the core logs at debug.
// `routine` names the routine and precision ("clblast::Gemm<float>"); `call` runs it.
template <typename Call>
int blast_call(Context* c, blobrt_error* err, const char* routine, const char* what, Call call) {
  bool first;
  {
    std::lock_guard<std::mutex> lock(c->notes_mutex);
    first = c->blast_routines_called.count(routine) == 0;
  }
  const auto start = first ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  const int status = check_blast(err, what, call());
  if (first && status == BLOBRT_OK) {
    // Only a call that succeeded has compiled (a failed first call leaves the note to the next).
    std::lock_guard<std::mutex> lock(c->notes_mutex);
    c->blast_routines_called.insert(routine);
    blobrt_fail(err, BLOBRT_OK, "%s: first call on this context took %.1f ms (CLBlast compiles its kernels then)",
                routine, elapsed_ms(start));
  }
  return status;
}

// Compiles one of the plugin's own programs for the context's device (`what` names it in
// messages); on success leaves the note "built the plugin's WHAT in N ms" (plugin_abi.h).
// A failure's status and message are err's, with nothing left behind.
inline int build_program(Context* c, const char* source, const char* what, cl_program* out, blobrt_error* err) {
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(c->context, 1, &source, nullptr, &status);
  if (status != CL_SUCCESS) {
    return cl_fail(err, (std::string("clCreateProgramWithSource (") + what + ")").c_str(), status);
  }
  const auto start = std::chrono::steady_clock::now();
  status = clBuildProgram(program, 1, &c->device, c->fp64 ? "-DHAVE_FP64" : "", nullptr, nullptr);
  if (status != CL_SUCCESS) {
    char log[512] = {0};
    clGetProgramBuildInfo(program, c->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, nullptr);
    clReleaseProgram(program);
    return blobrt_fail(err, BLOBRT_ERR_FAILED, "clBuildProgram (%s) returned %s (%d): %s", what,
                       cl_status_name(status), static_cast<int>(status), log);
  }
  *out = program;
  return blobrt_fail(err, BLOBRT_OK, "built the plugin's %s in %.1f ms", what, elapsed_ms(start));
}

// One kernel of one of the plugin's own programs (im2col.cpp, pooling.cpp, softmax.cpp):
// the program built at its first use, the kernel made at its first call, each kept in the
// context (`*program`, `*slot`); under c->mutex. Nothing half-made stays behind on failure.
inline int cached_kernel(Context* c, cl_program* program, const char* source, const char* what, cl_kernel* slot,
                         const std::string& name, cl_kernel* kernel, blobrt_error* err) {
  if (!*program) {
    cl_program built = nullptr;
    if (int s = build_program(c, source, what, &built, err)) return s;
    *program = built;
  }
  if (!*slot) {
    cl_int status = CL_SUCCESS;
    cl_kernel made = clCreateKernel(*program, name.c_str(), &status);
    if (status != CL_SUCCESS) return cl_fail(err, ("clCreateKernel(" + name + ")").c_str(), status);
    *slot = made;
  }
  *kernel = *slot;
  return BLOBRT_OK;
}

// Releases such a program and the kernels made of it (close_device).
template <size_t Rows, size_t Columns>
void release_cached_kernels(cl_program* program, cl_kernel (&kernels)[Rows][Columns]) {
  for (auto& row : kernels) {
    for (cl_kernel& k : row) {
      if (k) clReleaseKernel(k);
      k = nullptr;
    }
  }
  if (*program) clReleaseProgram(*program);
  *program = nullptr;
}

inline void* backing_host_pointer(const void* handle) {
  void* host = nullptr;
  if (clGetMemObjectInfo(as_mem(handle), CL_MEM_HOST_PTR, sizeof host, &host, nullptr) != CL_SUCCESS) {
    return nullptr;
  }
  return host;
}

// On a device that uses its buffers' host memory in place (see uses_host_memory_in_place)
// copies and fills run on that memory directly, once every queued command has run
// (clFinish): memcpy/memset split across cores like the host device's, instead of one
// command on one of the OpenCL runtime's worker threads. Else nullptr.
inline char* in_place(Context* c, const void* handle, size_t offset) {
  if (!c->in_place) return nullptr;
  char* host = static_cast<char*>(backing_host_pointer(handle));
  return host ? host + offset : nullptr;
}

// The bytes of one element of a precision.
inline size_t element_size(int32_t precision) { return precision == BLOBRT_FLOAT64 ? sizeof(double) : sizeof(float); }

// The n elements from `offset` on must lie inside the buffer: the plugin's own kernels do
// not check, and only the buffer knows its size (a handle the core did not allocate
// included). `what` names the call in the message ("element-wise add", "im2col").
inline int check_extent(const void* handle, int64_t offset, int64_t n, size_t element, const char* operand,
                        const char* what, blobrt_error* err) {
  size_t size = 0;
  CL_CHECK(clGetMemObjectInfo(as_mem(handle), CL_MEM_SIZE, sizeof size, &size, nullptr), "clGetMemObjectInfo(CL_MEM_SIZE)");
  if (offset < 0 || static_cast<uint64_t>(offset) + static_cast<uint64_t>(n) > size / element) {
    return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT, "%s: %s holds %zu elements, fewer than offset %lld + n %lld",
                       what, operand, size / element, static_cast<long long>(offset), static_cast<long long>(n));
  }
  return BLOBRT_OK;
}

// Every operand a call uses against its buffer's CL_MEM_SIZE, at the extents the operation's
// semantics give (blobrt_kernels/<name>.hpp's operands(): the one statement of them), named
// as they name it; an operand of 0 elements (unused, or absent as channel_affine's factors)
// is not looked at.
template <blobrt_kernels::MathOp Op>
int check_operands(const blobrt_kernels::MathArgs<Op>& args, blobrt_error* err) {
  for (const blobrt_kernels::Operand& o : blobrt_kernels::MathSemantics<Op>::operands(args)) {
    if (o.count == 0) continue;
    if (int s = check_extent(o.buffer, o.offset, o.count, element_size(args.precision), o.name, args.kName, err)) {
      return s;
    }
  }
  return BLOBRT_OK;
}

// Sets kernel arguments from `first` on: each value in turn (cl_mem, cl_ulong, T).
template <typename... Args>
cl_int set_kernel_args(cl_kernel kernel, cl_uint first, const Args&... args) {
  cl_int status = CL_SUCCESS;
  cl_uint index = first;
  ((status = status == CL_SUCCESS ? clSetKernelArg(kernel, index++, sizeof(Args), &args) : status), ...);
  return status;
}

// A scalar kernel argument in the kernel's precision (the operation list passes doubles).
inline cl_int set_scalar_arg(cl_kernel kernel, cl_uint index, int32_t precision, double value) {
  if (precision == BLOBRT_FLOAT64) return clSetKernelArg(kernel, index, sizeof(double), &value);
  const float single = static_cast<float>(value);
  return clSetKernelArg(kernel, index, sizeof(float), &single);
}

// Enqueues `kernel` over n work-items (nothing for n = 0, which OpenCL refuses); `call`
// names the operation in a failure.
inline int enqueue_1d(Context* c, cl_kernel kernel, int64_t n, const char* call, blobrt_error* err) {
  if (n == 0) return BLOBRT_OK;
  const size_t global = static_cast<size_t>(n);
  const cl_int status = clEnqueueNDRangeKernel(c->queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
  if (status != CL_SUCCESS) return cl_fail(err, (std::string("clEnqueueNDRangeKernel(") + call + ")").c_str(), status);
  return BLOBRT_OK;
}

// An n-element operand of an operation that takes the host path (kHostPathElements): the
// in-place buffer's host memory at element offset `offset`; nullptr when the operation goes
// to the queue. The caller waits for the queue (clFinish) once every operand is known.
template <typename T>
T* host_operand(Context* c, int64_t n, const void* handle, int64_t offset) {
  if (n >= kHostPathElements) return nullptr;
  return reinterpret_cast<T*>(in_place(c, handle, static_cast<size_t>(offset) * sizeof(T)));
}

// Sets c->level1_float and c->level1_double from what the context is (own_kernels);
// called once, at open (level1.cpp).
void pick_level1_routes(Context* c);
// Level 1 (level1.cpp).
BLOBRT_KIT_ENTRY_TYPE(saxpy) saxpy;
BLOBRT_KIT_ENTRY_TYPE(daxpy) daxpy;
BLOBRT_KIT_ENTRY_TYPE(sdot) sdot;
BLOBRT_KIT_ENTRY_TYPE(ddot) ddot;
BLOBRT_KIT_ENTRY_TYPE(sasum) sasum;
BLOBRT_KIT_ENTRY_TYPE(dasum) dasum;
BLOBRT_KIT_ENTRY_TYPE(sscal) sscal;
BLOBRT_KIT_ENTRY_TYPE(dscal) dscal;
// ABI 1.2 entry points, each in a file of its own (gemm_gemv.cpp, elementwise.cpp).
BLOBRT_KIT_ENTRY_TYPE(gemm) gemm;
BLOBRT_KIT_ENTRY_TYPE(gemv) gemv;
BLOBRT_KIT_ENTRY_TYPE(elementwise) elementwise;
// Releases the element-wise kernels (close_device).
void release_elementwise(Context* c);
// ABI 1.4: Caffe's im2col (conv_entry<false>) and col2im (conv_entry<true>), im2col.cpp;
// release_conv frees their kernels.
template <bool ToImage>
int conv_entry(void* context, int32_t precision, int64_t channels, int64_t height, int64_t width, int64_t kernel_h,
               int64_t kernel_w, int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w,
               int64_t dilation_h, int64_t dilation_w, const void* from, int64_t from_offset, void* to,
               int64_t to_offset, blobrt_error* err);
void release_conv(Context* c);
// ABI 1.5: Caffe's max and average pooling (pool_entry<true>, pool_entry<false>) and their
// backward operations, pooling.cpp; release_pool frees their kernels.
template <bool Max>
int pool_entry(void* context, int32_t precision, int64_t planes, int64_t height, int64_t width, int64_t pooled_h,
               int64_t pooled_w, int64_t kernel_h, int64_t kernel_w, int64_t stride_h, int64_t stride_w, int64_t pad_h,
               int64_t pad_w, const void* bottom, int64_t bottom_offset, void* top, int64_t top_offset,
               blobrt_error* err);
BLOBRT_KIT_ENTRY_TYPE(max_pool_backward) max_pool_backward;
BLOBRT_KIT_ENTRY_TYPE(ave_pool_backward) ave_pool_backward;
void release_pool(Context* c);
// ABI 1.5: Caffe's softmax along an axis and its backward, softmax.cpp; release_softmax frees
// their kernels.
BLOBRT_KIT_ENTRY_TYPE(softmax) softmax;
BLOBRT_KIT_ENTRY_TYPE(softmax_backward) softmax_backward;
// ABI 1.6: the softmax loss and its gradient, softmax.cpp too.
BLOBRT_KIT_ENTRY_TYPE(softmax_loss) softmax_loss;
BLOBRT_KIT_ENTRY_TYPE(softmax_loss_backward) softmax_loss_backward;
// ABI 1.8: Caffe's top-k accuracy, softmax.cpp (it reads labels as the loss does).
BLOBRT_KIT_ENTRY_TYPE(top_k_hits) top_k_hits;
void release_softmax(Context* c);
// ABI 1.6: rows between strided layouts, copy_rows.cpp.
BLOBRT_KIT_ENTRY_TYPE(copy_rows) copy_rows;
void release_copy_rows(Context* c);
// ABI 1.6: LRN across channels and its gradient, lrn.cpp.
BLOBRT_KIT_ENTRY_TYPE(lrn_scale) lrn_scale;
BLOBRT_KIT_ENTRY_TYPE(lrn_backward) lrn_backward;
void release_lrn(Context* c);
// ABI 1.6: Caffe's Scale and Bias, channel_affine.cpp.
BLOBRT_KIT_ENTRY_TYPE(channel_affine) channel_affine;
void release_channel_affine(Context* c);
// ABI 1.8: Caffe's Embed and BatchReindex, gather_rows.cpp.
BLOBRT_KIT_ENTRY_TYPE(gather_rows) gather_rows;
BLOBRT_KIT_ENTRY_TYPE(scatter_add_rows) scatter_add_rows;
void release_gather_rows(Context* c);
// ABI 1.10: Dropout's mask drawn on the device, bernoulli_mask.cpp.
BLOBRT_KIT_ENTRY_TYPE(bernoulli_mask) bernoulli_mask;
void release_bernoulli_mask(Context* c);
// ABI 1.11: Fast R-CNN's region pooling, roi_pooling.cpp.
BLOBRT_KIT_ENTRY_TYPE(roi_max_pool) roi_max_pool;
BLOBRT_KIT_ENTRY_TYPE(roi_max_pool_backward) roi_max_pool_backward;
void release_roi_pool(Context* c);
// ABI 1.12: Caffe's n-d im2col (conv_3d_entry<false>) and col2im (conv_3d_entry<true>) over up
// to three spatial axes, im2col_3d.cpp.
template <bool ToImage>
int conv_3d_entry(void* context, int32_t precision, int64_t channels, int64_t depth, int64_t height, int64_t width,
                  int64_t out_depth, int64_t out_height, int64_t out_width, int64_t kernel_d, int64_t kernel_h,
                  int64_t kernel_w, int64_t pad_d, int64_t pad_h, int64_t pad_w, int64_t stride_d, int64_t stride_h,
                  int64_t stride_w, int64_t dilation_d, int64_t dilation_h, int64_t dilation_w, const void* from,
                  int64_t from_offset, void* to, int64_t to_offset, blobrt_error* err);
void release_conv_3d(Context* c);

}  // namespace blobrt_opencl

#endif
