// The OpenCL plugin's element-wise entry point (plugin ABI 1.2): Caffe's caffe_gpu_set,
// add_scalar, scale, axpby, add, sub, mul, div, powx, sqr, sqrt, exp, log, abs, sign and
// sgnbit, and ABI 1.5's relu, sigmoid, tanh and their backward codes. Under 32 Ki
// elements on a device that uses its buffers' host memory in place they run on that
// memory after clFinish (the small-n host path of the level-1 operations,
// with the shared host kernels); otherwise as one launch of the plugin's own kernel for the
// operation (elementwise_kernels.hpp), made at the operation's first call; a code of the
// list (blobrt/elementwise_operations.h) without a kernel there answers
// BLOBRT_ERR_UNSUPPORTED, and the core runs its host kernel.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/elementwise.hpp"
#include "context.hpp"
#include "elementwise_kernels.hpp"

namespace blobrt_opencl {

namespace {

// Builds the element-wise program once per context (called under c->mutex); nothing
// half-built stays behind on failure, so the next call tries again.
int build_elementwise(Context* c, blobrt_error* err) {
  if (c->ew_program) return BLOBRT_OK;
  cl_program program = nullptr;
  if (int s = build_program(c, elementwise_kernel_source(), "element-wise kernels", &program, err)) return s;
  c->ew_program = program;
  // Streaming stores pay off once y is larger than what the cores keep in cache: the
  // reported cache, or 8 MiB where it reports more (PoCL reports the whole L3, 480 MiB on
  // the CI machine, where the bandwidth probe's streaming copy already wins at 16 MiB).
  const cl_ulong cache = device_value<cl_ulong>(c->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
  c->cache_bytes = std::min<cl_ulong>(cache ? cache : ~cl_ulong(0), cl_ulong(8) << 20);
  return BLOBRT_OK;
}

// The kernel of one code and precision, made at its first call (under c->mutex): *kernel
// stays NULL where the program has none for the code (a code of the list this plugin has
// no OpenCL kernel for), so one missing kernel refuses only its own code.
int elementwise_kernel(Context* c, int op, int precision, cl_kernel* kernel, blobrt_error* err) {
  if (int s = build_elementwise(c, err)) return s;
  *kernel = c->ew_kernels[precision][op];
  if (*kernel || c->ew_missing[precision][op]) return BLOBRT_OK;
  const std::string name = std::string("blobrt_ew_") + blobrt_kernels::elementwise_op_name(op) + (precision ? "_d" : "_f");
  cl_int status = CL_SUCCESS;
  cl_kernel made = clCreateKernel(c->ew_program, name.c_str(), &status);
  if (status == CL_INVALID_KERNEL_NAME) {
    c->ew_missing[precision][op] = true;
    return BLOBRT_OK;
  }
  if (status != CL_SUCCESS) return cl_fail(err, ("clCreateKernel(" + name + ")").c_str(), status);
  *kernel = c->ew_kernels[precision][op] = made;
  return BLOBRT_OK;
}

// Whether the kernel stores y with streaming (non-temporal) stores: y larger than the
// device's cache, not read by the operation (neither as y nor as a or b), and 8-element
// aligned (the stores are whole vectors; every chunk starts at a multiple of 8).
template <typename T>
cl_uint streaming(Context* c, int op, int64_t n, const void* a, int64_t ao, const void* b, int64_t bo, const void* y,
                  int64_t yo) {
  if (blobrt_kernels::reads_y(op)) return 0;
  if ((blobrt_kernels::reads_a(op) && a == y && ao == yo) || (blobrt_kernels::reads_b(op) && b == y && bo == yo)) return 0;
  if (static_cast<cl_ulong>(n) * sizeof(T) < c->cache_bytes) return 0;
  void* base = backing_host_pointer(y);
  const uintptr_t address = reinterpret_cast<uintptr_t>(base) + static_cast<uintptr_t>(yo) * sizeof(T);
  return (base ? address : static_cast<uintptr_t>(yo) * sizeof(T)) % (8 * sizeof(T)) == 0 ? 1 : 0;
}

template <typename T>
int run(Context* c, int op, int64_t n, double alpha, double beta, const void* a, int64_t ao, const void* b,
        int64_t bo, void* y, int64_t yo, blobrt_error* err) {
  const bool ra = blobrt_kernels::reads_a(op), rb = blobrt_kernels::reads_b(op);
  const char* name = blobrt_kernels::elementwise_op_name(op);
  const std::string what = std::string("element-wise ") + name;
  if (int s = check_extent(y, yo, n, sizeof(T), "y", what.c_str(), err)) return s;
  if (ra) {
    if (int s = check_extent(a, ao, n, sizeof(T), "a", what.c_str(), err)) return s;
  }
  if (rb) {
    if (int s = check_extent(b, bo, n, sizeof(T), "b", what.c_str(), err)) return s;
  }
  const T alpha_t = static_cast<T>(alpha), beta_t = static_cast<T>(beta);
  // The small-n host path: every operand in place (docs/opencl.md, "Small operations").
  if (T* ys = host_operand<T>(c, n, y, yo)) {
    const T* as = ra ? host_operand<T>(c, n, a, ao) : nullptr;
    const T* bs = rb ? host_operand<T>(c, n, b, bo) : nullptr;
    if ((!ra || as) && (!rb || bs)) {
      CL_CHECK(clFinish(c->queue), "clFinish");  // every command enqueued before has run
      blobrt_kernels::serial::elementwise<T>(op, n, alpha_t, beta_t, as, bs, ys);
      return BLOBRT_OK;
    }
  }
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernels' arguments
  cl_kernel kernel = nullptr;
  if (int s = elementwise_kernel(c, op, sizeof(T) == 8 ? 1 : 0, &kernel, err)) return s;
  if (!kernel) {
    // A code of the list without an OpenCL kernel here: the core runs its host kernel.
    return blobrt_fail(err, BLOBRT_ERR_UNSUPPORTED, "element-wise %s (code %d): no OpenCL kernel blobrt_ew_%s_%s",
                       name, op, name, sizeof(T) == 8 ? "d" : "f");
  }
  const cl_ulong count = static_cast<cl_ulong>(n);
  cl_ulong chunk = 8;
  if (c->own_kernels) {
    // CPU devices: at most c->parts chunks of whole 1024-element blocks (cpu_kernels.hpp).
    constexpr cl_ulong kBlock = 1024;
    const cl_ulong most = std::min<cl_ulong>(c->parts, (count + kBlock - 1) / kBlock);
    chunk = ((count + most - 1) / most + kBlock - 1) / kBlock * kBlock;
  }
  // An operand the operation does not read is passed as y (never loaded).
  const cl_mem am = as_mem(ra ? a : y), bm = as_mem(rb ? b : y);
  const cl_ulong aoff = ra ? static_cast<cl_ulong>(ao) : 0, boff = rb ? static_cast<cl_ulong>(bo) : 0;
  const cl_uint nt = streaming<T>(c, op, n, a, ao, b, bo, y, yo);
  cl_int status = set_kernel_args(kernel, 0, count, chunk, alpha_t, beta_t, am, aoff, bm, boff, as_mem(y),
                                  static_cast<cl_ulong>(yo), nt);
  const std::string call = std::string("blobrt_ew_") + name + (sizeof(T) == 8 ? "_d" : "_f");
  if (status != CL_SUCCESS) return cl_fail(err, ("clSetKernelArg(" + call + ")").c_str(), status);
  const size_t global = (count + chunk - 1) / chunk;
  const size_t one = 1;
  // CPU devices: one work-item per work-group, so the groups spread over the cores.
  CL_CHECK(clEnqueueNDRangeKernel(c->queue, kernel, 1, nullptr, &global, c->own_kernels ? &one : nullptr, 0, nullptr,
                                  nullptr),
           ("clEnqueueNDRangeKernel(" + call + ")").c_str());
  return BLOBRT_OK;
}

}  // namespace

void release_elementwise(Context* c) {
  for (auto& per_precision : c->ew_kernels) {
    for (cl_kernel& k : per_precision) {
      if (k) clReleaseKernel(k);
      k = nullptr;
    }
  }
  for (auto& per_precision : c->ew_missing) {
    for (bool& missing : per_precision) missing = false;
  }
  if (c->ew_program) clReleaseProgram(c->ew_program);
  c->ew_program = nullptr;
}

int elementwise(void* context, int32_t precision, int32_t op, int64_t n, double alpha, double beta, const void* a,
                int64_t a_offset, const void* b, int64_t b_offset, void* y, int64_t y_offset, blobrt_error* err) {
  Context* c = as_context(context);
  if (!blobrt_kernels::is_elementwise_op(op)) {
    // A code from a later ABI minor: the core runs it on the host.
    return blobrt_fail(err, BLOBRT_ERR_UNSUPPORTED, "element-wise operation code %d is not one this plugin knows "
                       "(codes below %d)", static_cast<int>(op), static_cast<int>(BLOBRT_EW_OP_COUNT));
  }
  // The core has checked the rest (plugin_abi.h): a known precision, n > 0, no negative
  // offset, every operand the operation reads non-NULL.
  return precision == BLOBRT_FLOAT64 ? run<double>(c, op, n, alpha, beta, a, a_offset, b, b_offset, y, y_offset, err)
                                     : run<float>(c, op, n, alpha, beta, a, a_offset, b, b_offset, y, y_offset, err);
}

}  // namespace blobrt_opencl
