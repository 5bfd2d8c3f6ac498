// The OpenCL backend: buffers are cl_mem, copies and memset go to the OpenCL API, level-1
// BLAS (level1.cpp) to CLBlast on GPUs and accelerators and to the plugin's own kernels
// on CPU devices, gemm/gemv to CLBlast (gemm_gemv.cpp), the element-wise family to the
// plugin's kernels (elementwise.cpp), im2col and col2im to its kernels too (im2col.cpp), and so the pooling, softmax, softmax loss, top_k_hits, LRN, channel_affine, gather_rows, scatter_add_rows, bernoulli_mask, region pooling and 3-d im2col/col2im operations and copy_rows (pooling.cpp, softmax.cpp, lrn.cpp, channel_affine.cpp, gather_rows.cpp, bernoulli_mask.cpp, roi_pooling.cpp, im2col_3d.cpp, copy_rows.cpp). Every platform and device the ICD loader reports is one
// blobrt device, numbered in platform order (BLOBRT_BACKEND=opencl:N).
//
// On devices whose memory is the host's (CL_DEVICE_HOST_UNIFIED_MEMORY, e.g. PoCL)
// buffers are created with CL_MEM_USE_HOST_PTR over memory this plugin allocates, and
// lent to the core as the host mirror (host_alias): a head transition (sync_host_alias)
// moves no byte. If
// the device is seen to use that memory in place (checked when it opens: see
// uses_host_memory_in_place), a transition to the host only waits for the queue, and one
// to the device does nothing; otherwise it is a map/unmap. On such devices copies, fills
// and level-1 operations under 32 Ki elements run on that memory directly (host_operand,
// in_place).
// Elsewhere the host mirror is pinned (CL_MEM_ALLOC_HOST_PTR, mapped) and transfers are
// real reads and writes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/huge_pages.hpp"
#include "blobrt_kernels/level1.hpp"
#include "context.hpp"
#include "blobrt/plugin_kit.hpp"
#include "status_names.hpp"

namespace {

namespace kit = blobrt::plugin_kit;

using namespace blobrt_opencl;

// The plugin's entry points, named as the table's fields: kit::table_of sets each one.
struct OpenCl {
  BLOBRT_KIT_ENTRY(device_count);
  BLOBRT_KIT_ENTRY(device_properties);
  BLOBRT_KIT_ENTRY(open_device);
  BLOBRT_KIT_ENTRY(close_device);
  BLOBRT_KIT_ENTRY(allocate);
  BLOBRT_KIT_ENTRY(release);
  BLOBRT_KIT_ENTRY(host_allocate);
  BLOBRT_KIT_ENTRY(host_release);
  BLOBRT_KIT_ENTRY(host_alias);
  BLOBRT_KIT_ENTRY(sync_host_alias);
  BLOBRT_KIT_ENTRY(view);
  BLOBRT_KIT_ENTRY(release_view);
  BLOBRT_KIT_ENTRY(copy_to_device);
  BLOBRT_KIT_ENTRY(copy_to_host);
  BLOBRT_KIT_ENTRY(copy_device);
  BLOBRT_KIT_ENTRY(memset);
  BLOBRT_KIT_ENTRY(synchronize);
  // Level 1 (level1.cpp), Caffe's gemm, gemv and element-wise family (ABI 1.2:
  // gemm_gemv.cpp, elementwise.cpp).
  static constexpr auto saxpy = blobrt_opencl::saxpy;
  static constexpr auto daxpy = blobrt_opencl::daxpy;
  static constexpr auto sdot = blobrt_opencl::sdot;
  static constexpr auto ddot = blobrt_opencl::ddot;
  static constexpr auto sasum = blobrt_opencl::sasum;
  static constexpr auto dasum = blobrt_opencl::dasum;
  static constexpr auto sscal = blobrt_opencl::sscal;
  static constexpr auto dscal = blobrt_opencl::dscal;
  static constexpr auto gemm = blobrt_opencl::gemm;
  static constexpr auto gemv = blobrt_opencl::gemv;
  static constexpr auto elementwise = blobrt_opencl::elementwise;
  // Caffe's im2col and col2im (ABI 1.4: im2col.cpp).
  static constexpr auto im2col = blobrt_opencl::conv_entry<false>;
  static constexpr auto col2im = blobrt_opencl::conv_entry<true>;
  // Caffe's max and average pooling (ABI 1.5: pooling.cpp).
  static constexpr auto max_pool = blobrt_opencl::pool_entry<true>;
  static constexpr auto max_pool_backward = blobrt_opencl::max_pool_backward;
  static constexpr auto ave_pool = blobrt_opencl::pool_entry<false>;
  static constexpr auto ave_pool_backward = blobrt_opencl::ave_pool_backward;
  // Caffe's softmax along an axis (ABI 1.5: softmax.cpp).
  static constexpr auto softmax = blobrt_opencl::softmax;
  static constexpr auto softmax_backward = blobrt_opencl::softmax_backward;
  // The softmax loss and its gradient (ABI 1.6: softmax.cpp).
  static constexpr auto softmax_loss = blobrt_opencl::softmax_loss;
  static constexpr auto softmax_loss_backward = blobrt_opencl::softmax_loss_backward;
  // Rows between strided layouts (ABI 1.6: copy_rows.cpp).
  static constexpr auto copy_rows = blobrt_opencl::copy_rows;
  // LRN across channels (ABI 1.6: lrn.cpp).
  static constexpr auto lrn_scale = blobrt_opencl::lrn_scale;
  static constexpr auto lrn_backward = blobrt_opencl::lrn_backward;
  // Caffe's Scale and Bias (ABI 1.6: channel_affine.cpp).
  static constexpr auto channel_affine = blobrt_opencl::channel_affine;
  // Rows picked by an index array, and their gradient (ABI 1.8: gather_rows.cpp).
  static constexpr auto gather_rows = blobrt_opencl::gather_rows;
  static constexpr auto scatter_add_rows = blobrt_opencl::scatter_add_rows;
  // Caffe's top-k accuracy (ABI 1.8: softmax.cpp, beside the loss that reads labels as it does).
  static constexpr auto top_k_hits = blobrt_opencl::top_k_hits;
  // A 0/1 mask from the Philox4x32-10 stream (ABI 1.10: bernoulli_mask.cpp; Caffe's Dropout).
  static constexpr auto bernoulli_mask = blobrt_opencl::bernoulli_mask;
  // Fast R-CNN's region of interest max pooling (ABI 1.11: roi_pooling.cpp).
  static constexpr auto roi_max_pool = blobrt_opencl::roi_max_pool;
  static constexpr auto roi_max_pool_backward = blobrt_opencl::roi_max_pool_backward;
  // Caffe's n-d im2col and col2im over up to three spatial axes (ABI 1.12: im2col_3d.cpp).
  static constexpr auto im2col_3d = blobrt_opencl::conv_3d_entry<false>;
  static constexpr auto col2im_3d = blobrt_opencl::conv_3d_entry<true>;
};

struct DeviceEntry {
  cl_platform_id platform;
  cl_device_id device;
  std::string platform_name;
};

struct Enumeration {
  std::vector<DeviceEntry> devices;
  std::string reason;  // why there are none
};

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "?";
  std::string s(size, '\0');
  clGetPlatformInfo(p, what, size, s.data(), nullptr);
  s.resize(std::strlen(s.c_str()));
  return s;
}

// Enumerated once per process; never throws.
const Enumeration& enumeration() {
  static const Enumeration result = [] {
    Enumeration e;
    cl_uint count = 0;
    cl_int status = clGetPlatformIDs(0, nullptr, &count);
    if (status != CL_SUCCESS || count == 0) {
      e.reason = std::string("no OpenCL platform: clGetPlatformIDs returned ") +
                 cl_status_name(status) + " (" + std::to_string(status) +
                 "); the ICD loader found no ICDs in /etc/OpenCL/vendors (install one, e.g. pocl-opencl-icd)";
      return e;
    }
    std::vector<cl_platform_id> platforms(count);
    clGetPlatformIDs(count, platforms.data(), nullptr);
    std::string empty_platforms;
    for (cl_platform_id p : platforms) {
      std::string name = platform_string(p, CL_PLATFORM_NAME);
      cl_uint n = 0;
      status = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
      if (status != CL_SUCCESS || n == 0) {
        empty_platforms += (empty_platforms.empty() ? "" : "; ") + std::string("platform '") + name +
                           "' has no devices (" + cl_status_name(status) + ")";
        continue;
      }
      std::vector<cl_device_id> ids(n);
      clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr);
      for (cl_device_id d : ids) e.devices.push_back({p, d, name});
    }
    if (e.devices.empty()) e.reason = empty_platforms;
    return e;
  }();
  return result;
}

int OpenCl::device_count(int32_t* count, blobrt_error* err) {
  const Enumeration& e = enumeration();
  *count = static_cast<int32_t>(e.devices.size());
  if (e.devices.empty()) blobrt_fail(err, BLOBRT_OK, "%s", e.reason.c_str());
  return BLOBRT_OK;
}

int OpenCl::device_properties(int32_t index, blobrt_device_properties* out, blobrt_error* err) {
  const Enumeration& e = enumeration();
  if (int status = kit::check_index(err, "OpenCL", index, e.devices.size())) return status;
  const DeviceEntry& entry = e.devices[index];
  cl_device_id d = entry.device;
  kit::set_text(out->name, "%s", device_string(d, CL_DEVICE_NAME).c_str());
  cl_device_type type = device_value<cl_device_type>(d, CL_DEVICE_TYPE);
  bool unified = device_value<cl_bool>(d, CL_DEVICE_HOST_UNIFIED_MEMORY) == CL_TRUE;
  kit::set_text(out->details,
                "platform %s; %s; driver %s; %u compute units; max buffer %llu MiB; %s memory; "
                "CLBlast kernels are compiled at first use",
                entry.platform_name.c_str(), device_string(d, CL_DEVICE_VERSION).c_str(),
                device_string(d, CL_DRIVER_VERSION).c_str(), device_value<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS),
                static_cast<unsigned long long>(device_value<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE) >> 20),
                unified ? "unified host" : "separate device");
  out->memory_bytes = device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
  out->kind = (type & CL_DEVICE_TYPE_GPU)           ? BLOBRT_DEVICE_KIND_GPU
              : (type & CL_DEVICE_TYPE_ACCELERATOR) ? BLOBRT_DEVICE_KIND_ACCELERATOR
                                                    : BLOBRT_DEVICE_KIND_CPU;
  out->host_memory = 0;  // handles are cl_mem, never host pointers
  out->supports_fp64 = device_value<cl_device_fp_config>(d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
  out->has_pinned_host = unified ? 0 : 1;
  out->host_alias_buffers = unified ? 1 : 0;
  // DLPack's kDLOpenCL; a cl_mem is an object, not an address: parts of it are views.
  kit::set_native(out, BLOBRT_NATIVE_OPENCL, index, false);
  // Sub-buffer origins must be multiples of CL_DEVICE_MEM_BASE_ADDR_ALIGN (in bits).
  if (BLOBRT_STRUCT_HAS(blobrt_device_properties, out, view_alignment)) {
    out->view_alignment = std::max<cl_uint>(device_value<cl_uint>(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8, 1);
  }
  return BLOBRT_OK;
}

// Whether the device reads and writes a CL_MEM_USE_HOST_PTR buffer's host memory itself
// (PoCL's CPU devices do) rather than a copy it would synchronise at map/unmap: a fill is
// seen in host memory after clFinish, and a host write is seen by the next command, with
// no map. OpenCL leaves host access to an unmapped USE_HOST_PTR buffer undefined, so this
// is checked on the device rather than assumed; BLOBRT_OPENCL_MAP_TRANSITIONS=1 keeps
// map/unmap regardless.
bool uses_host_memory_in_place(cl_context context, cl_command_queue queue, size_t alignment) {
  if (kit::getenv("BLOBRT_OPENCL_MAP_TRANSITIONS") == "1") return false;
  const size_t bytes = 1 << 16;
  auto* host = static_cast<unsigned char*>(blobrt_kernels::allocate_host(bytes, alignment));
  if (!host) return false;
  std::memset(host, 0, bytes);
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, &status);
  bool in_place = false;
  if (status == CL_SUCCESS) {
    const unsigned char pattern = 0x5a;
    unsigned char seen[2] = {0, 0};
    host[bytes - 1] = 0x33;
    in_place = clEnqueueFillBuffer(queue, mem, &pattern, 1, 0, bytes / 2, 0, nullptr, nullptr) == CL_SUCCESS &&
               clFinish(queue) == CL_SUCCESS && host[0] == pattern && host[bytes / 2 - 1] == pattern &&
               clEnqueueReadBuffer(queue, mem, CL_TRUE, bytes / 2 - 1, 1, &seen[0], 0, nullptr, nullptr) == CL_SUCCESS &&
               clEnqueueReadBuffer(queue, mem, CL_TRUE, bytes - 1, 1, &seen[1], 0, nullptr, nullptr) == CL_SUCCESS &&
               seen[0] == pattern && seen[1] == 0x33;
    clReleaseMemObject(mem);
  }
  std::free(host);
  return in_place;
}

// CLBlast's database has no entry for CPU devices such as PoCL's, and its fallback
// parameters for the reduction kernels (Xdot, also used by Xasum) launch too few
// work-groups there. WGS1 = 64 / WGS2 = 1024 was the best of a sweep over WGS1 16..1024
// x WGS2 64..4096 (the figures are in docs/opencl.md). axpy and scal are at their best
// with the defaults.
void tune_for_cpu(cl_device_id device) {
  if (!(device_value<cl_device_type>(device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU)) return;
  const std::unordered_map<std::string, size_t> xdot = {{"WGS1", 64}, {"WGS2", 1024}};
  clblast::OverrideParameters(device, "Xdot", clblast::Precision::kSingle, xdot);
  if (device_value<cl_device_fp_config>(device, CL_DEVICE_DOUBLE_FP_CONFIG) != 0) {
    clblast::OverrideParameters(device, "Xdot", clblast::Precision::kDouble, xdot);
  }
}

// BLOBRT_OPENCL_KERNELS: "auto" (or unset) runs the plugin's own level-1 kernels on CPU
// devices and CLBlast elsewhere; "clblast" runs CLBlast everywhere (to compare the two, and
// to test CLBlast's path on a CPU device).
int kernel_choice(bool* clblast_only, blobrt_error* err) {
  const std::string choice = kit::getenv("BLOBRT_OPENCL_KERNELS");
  *clblast_only = choice == "clblast";
  if (!choice.empty() && !*clblast_only && choice != "auto") {
    return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT, "BLOBRT_OPENCL_KERNELS='%s': expected 'auto' or 'clblast'",
                       choice.c_str());
  }
  return BLOBRT_OK;
}

int OpenCl::open_device(int32_t index, void** context, blobrt_error* err) {
  const Enumeration& e = enumeration();
  if (int status = kit::check_index(err, "OpenCL", index, e.devices.size())) return status;
  bool clblast_only = false;
  if (int status = kernel_choice(&clblast_only, err)) return status;
  auto* c = new Context;
  c->device = e.devices[index].device;
  cl_int status = CL_SUCCESS;
  c->context = clCreateContext(nullptr, 1, &c->device, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) {
    delete c;
    return cl_fail(err, "clCreateContext", status);
  }
  c->queue = clCreateCommandQueue(c->context, c->device, 0, &status);
  if (status == CL_SUCCESS) {
    c->scratch = clCreateBuffer(c->context, CL_MEM_READ_WRITE, sizeof(double), nullptr, &status);
  }
  if (status != CL_SUCCESS) {
    if (c->queue) clReleaseCommandQueue(c->queue);
    clReleaseContext(c->context);
    delete c;
    return cl_fail(err, "clCreateCommandQueue/clCreateBuffer", status);
  }
  c->unified = device_value<cl_bool>(c->device, CL_DEVICE_HOST_UNIFIED_MEMORY) == CL_TRUE;
  c->fp64 = device_value<cl_device_fp_config>(c->device, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
  c->alignment = std::max<size_t>(64, device_value<cl_uint>(c->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8);
  c->max_alloc = device_value<cl_ulong>(c->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  c->in_place = c->unified && uses_host_memory_in_place(c->context, c->queue, c->alignment);
  tune_for_cpu(c->device);
  c->own_kernels = !clblast_only && (device_value<cl_device_type>(c->device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
  pick_level1_routes(c);
  // A few chunks per compute unit, so that a core that finishes early takes another.
  c->parts = std::min<size_t>(kMaxCpuKernelParts, 4 * std::max<cl_uint>(1, device_value<cl_uint>(c->device, CL_DEVICE_MAX_COMPUTE_UNITS)));
  *context = c;
  return BLOBRT_OK;
}

void OpenCl::close_device(void* context) {
  Context* c = as_context(context);
  clFinish(c->queue);
  for (auto& [pointer, mem] : c->pinned) {
    clEnqueueUnmapMemObject(c->queue, mem, pointer, 0, nullptr, nullptr);
    clReleaseMemObject(mem);
  }
  clFinish(c->queue);
  for (cl_kernel k : c->kernels) {
    if (k) clReleaseKernel(k);
  }
  if (c->cpu_program) clReleaseProgram(c->cpu_program);
  if (c->partials) clReleaseMemObject(c->partials);
  release_elementwise(c);
  release_conv(c);
  release_pool(c);
  release_softmax(c);
  release_copy_rows(c);
  release_lrn(c);
  release_channel_affine(c);
  release_gather_rows(c);
  release_bernoulli_mask(c);
  release_roi_pool(c);
  release_conv_3d(c);
  clReleaseMemObject(c->scratch);
  clReleaseCommandQueue(c->queue);
  clReleaseContext(c->context);
  delete c;
}

int OpenCl::allocate(void* context, size_t bytes, void** handle, blobrt_error* err) {
  Context* c = as_context(context);
  if (bytes > c->max_alloc) {
    return blobrt_fail(err, BLOBRT_ERR_OUT_OF_MEMORY,
                       "%zu bytes exceed CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu bytes)", bytes,
                       static_cast<unsigned long long>(c->max_alloc));
  }
  cl_int status = CL_SUCCESS;
  if (c->unified) {
    // Our memory, used in place by the device (CL_MEM_USE_HOST_PTR) and lent as the mirror.
    void* host = blobrt_kernels::allocate_host(bytes, c->alignment);
    if (!host) return blobrt_fail(err, BLOBRT_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
    cl_mem mem = clCreateBuffer(c->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, &status);
    if (status != CL_SUCCESS) {
      std::free(host);
      return cl_fail(err, "clCreateBuffer(CL_MEM_USE_HOST_PTR)", status);
    }
    *handle = mem;
    return BLOBRT_OK;
  }
  cl_mem mem = clCreateBuffer(c->context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  if (status != CL_SUCCESS) return cl_fail(err, "clCreateBuffer", status);
  *handle = mem;
  return BLOBRT_OK;
}

void OpenCl::release(void* context, void* handle) {
  Context* c = as_context(context);
  void* host = c->unified ? backing_host_pointer(handle) : nullptr;
  if (host) clFinish(c->queue);  // no queued command may still use the memory we free
  clReleaseMemObject(as_mem(handle));
  std::free(host);
}

// A view is a sub-buffer: on a unified device its CL_MEM_HOST_PTR is the parent's host
// memory at the offset, so host_alias and the map/unmap transitions work on it unchanged.
int OpenCl::view(void*, void* buffer, size_t offset, size_t bytes, void** handle, blobrt_error* err) {
  cl_buffer_region region{offset, bytes ? bytes : 1};
  cl_int status = CL_SUCCESS;
  cl_mem sub = clCreateSubBuffer(as_mem(buffer), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &status);
  if (status != CL_SUCCESS) return cl_fail(err, "clCreateSubBuffer", status);
  *handle = sub;
  return BLOBRT_OK;
}
void OpenCl::release_view(void*, void* handle) { clReleaseMemObject(as_mem(handle)); }  // the parent owns the memory

int OpenCl::host_allocate(void* context, size_t bytes, void** pointer, blobrt_error* err) {
  Context* c = as_context(context);
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(c->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes ? bytes : 1, nullptr, &status);
  if (status != CL_SUCCESS) return cl_fail(err, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", status);
  void* host = clEnqueueMapBuffer(c->queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes ? bytes : 1, 0,
                                  nullptr, nullptr, &status);
  if (status != CL_SUCCESS) {
    clReleaseMemObject(mem);
    return cl_fail(err, "clEnqueueMapBuffer (pinned host memory)", status);
  }
  std::lock_guard<std::mutex> lock(c->mutex);
  c->pinned[host] = mem;
  *pointer = host;
  return BLOBRT_OK;
}

void OpenCl::host_release(void* context, void* pointer) {
  Context* c = as_context(context);
  cl_mem mem = nullptr;
  {
    std::lock_guard<std::mutex> lock(c->mutex);
    auto it = c->pinned.find(pointer);
    if (it == c->pinned.end()) return;
    mem = it->second;
    c->pinned.erase(it);
  }
  clEnqueueUnmapMemObject(c->queue, mem, pointer, 0, nullptr, nullptr);
  clFinish(c->queue);
  clReleaseMemObject(mem);
}

void* OpenCl::host_alias(void* context, const void* handle) {
  return as_context(context)->unified ? backing_host_pointer(handle) : nullptr;
}

// The synchronisation point between the device's view and the host memory that backs a
// CL_MEM_USE_HOST_PTR buffer: a map/unmap pair over [offset, offset + bytes), or, where
// the device uses that memory in place, waiting for the queue before the host reads.
int sync_alias(Context* c, cl_mem mem, size_t offset, size_t bytes, cl_map_flags flags, blobrt_error* err) {
  if (c->in_place) {
    // The host reads after every queued command has run (clFinish: ~40 ns on an idle
    // queue); a host write needs nothing, the next command reads the same memory.
    if (flags == CL_MAP_READ) CL_CHECK(clFinish(c->queue), "clFinish");
    return BLOBRT_OK;
  }
  cl_int status = CL_SUCCESS;
  void* mapped = clEnqueueMapBuffer(c->queue, mem, CL_TRUE, flags, offset, bytes, 0, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) return cl_fail(err, "clEnqueueMapBuffer", status);
  CL_CHECK(clEnqueueUnmapMemObject(c->queue, mem, mapped, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
  if (flags == CL_MAP_WRITE_INVALIDATE_REGION) CL_CHECK(clFlush(c->queue), "clFlush");
  return BLOBRT_OK;
}

// The core names the alias it holds (ABI 1.4): no need to ask OpenCL which memory it is.
int OpenCl::sync_host_alias(void* context, void* handle, size_t offset, size_t bytes, int32_t direction,
                            blobrt_error* err) {
  Context* c = as_context(context);
  if (!c->unified) {
    return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT,
                       "sync_host_alias on a device whose buffers have no host alias (not unified memory)");
  }
  if (direction != BLOBRT_ALIAS_TO_HOST && direction != BLOBRT_ALIAS_TO_DEVICE) {
    return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT, "sync_host_alias: unknown direction %d",
                       static_cast<int>(direction));
  }
  if (bytes == 0) return BLOBRT_OK;
  return sync_alias(c, as_mem(handle), offset, bytes,
                    direction == BLOBRT_ALIAS_TO_HOST ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION, err);
}

// The host memory behind `handle` at `offset` where the device keeps its buffers there
// (unified), else nullptr: one clGetMemObjectInfo per copy.
char* backing_at(Context* c, const void* handle, size_t offset) {
  if (!c->unified) return nullptr;
  char* backing = static_cast<char*>(backing_host_pointer(handle));
  return backing ? backing + offset : nullptr;
}

// Copies take the host memory as the core gives it. A libblobrt older than ABI 1.4 (no
// sync_host_alias) sends a copy between a buffer and its own alias to synchronise them:
// that is recognised here and made the same synchronisation.
int OpenCl::copy_to_device(void* context, const void* host, void* dst, size_t offset, size_t bytes,
                           blobrt_error* err) {
  Context* c = as_context(context);
  if (bytes == 0) return BLOBRT_OK;
  char* backing = backing_at(c, dst, offset);
  if (backing && backing == host) {
    return sync_alias(c, as_mem(dst), offset, bytes, CL_MAP_WRITE_INVALIDATE_REGION, err);
  }
  if (backing && c->in_place) {
    CL_CHECK(clFinish(c->queue), "clFinish");
    blobrt_kernels::copy_bytes(backing, host, bytes);
    return BLOBRT_OK;
  }
  CL_CHECK(clEnqueueWriteBuffer(c->queue, as_mem(dst), CL_TRUE, offset, bytes, host, 0, nullptr, nullptr),
           "clEnqueueWriteBuffer");
  return BLOBRT_OK;
}

int OpenCl::copy_to_host(void* context, const void* src, size_t offset, void* host, size_t bytes,
                         blobrt_error* err) {
  Context* c = as_context(context);
  if (bytes == 0) return BLOBRT_OK;
  const char* backing = backing_at(c, src, offset);
  if (backing && backing == host) return sync_alias(c, as_mem(src), offset, bytes, CL_MAP_READ, err);
  if (backing && c->in_place) {
    CL_CHECK(clFinish(c->queue), "clFinish");
    blobrt_kernels::copy_bytes(host, backing, bytes);
    return BLOBRT_OK;
  }
  CL_CHECK(clEnqueueReadBuffer(c->queue, as_mem(src), CL_TRUE, offset, bytes, host, 0, nullptr, nullptr),
           "clEnqueueReadBuffer");
  return BLOBRT_OK;
}

int OpenCl::copy_device(void* context, const void* src, size_t src_offset, void* dst, size_t dst_offset,
                        size_t bytes, blobrt_error* err) {
  Context* c = as_context(context);
  if (bytes == 0) return BLOBRT_OK;
  const char* s = in_place(c, src, src_offset);
  char* d = in_place(c, dst, dst_offset);
  if (s && d) {
    CL_CHECK(clFinish(c->queue), "clFinish");
    blobrt_kernels::copy_bytes(d, s, bytes);  // memmove semantics for overlapping views
    return BLOBRT_OK;
  }
  CL_CHECK(clEnqueueCopyBuffer(c->queue, as_mem(src), as_mem(dst), src_offset, dst_offset, bytes, 0, nullptr,
                               nullptr),
           "clEnqueueCopyBuffer");
  return BLOBRT_OK;
}

int OpenCl::memset(void* context, void* dst, size_t offset, int32_t value, size_t bytes, blobrt_error* err) {
  Context* c = as_context(context);
  if (bytes == 0) return BLOBRT_OK;
  if (char* d = in_place(c, dst, offset)) {
    CL_CHECK(clFinish(c->queue), "clFinish");
    blobrt_kernels::fill_bytes(d, value, bytes);
    return BLOBRT_OK;
  }
  unsigned char pattern = static_cast<unsigned char>(value);
  CL_CHECK(clEnqueueFillBuffer(c->queue, as_mem(dst), &pattern, 1, offset, bytes, 0, nullptr, nullptr),
           "clEnqueueFillBuffer");
  return BLOBRT_OK;
}

int OpenCl::synchronize(void* context, blobrt_error* err) {
  CL_CHECK(clFinish(as_context(context)->queue), "clFinish");
  return BLOBRT_OK;
}

}  // namespace

BLOBRT_PLUGIN_DEFINE(OpenCl, "opencl", "CLBlast " BLOBRT_CLBLAST_VERSION " over the OpenCL ICD loader")
