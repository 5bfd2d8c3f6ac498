// The OpenCL plugin's pooling operations (plugin ABI 1.5): Caffe's max and average pooling,
// forward and backward (pooling_layer.cu's kernels), as kernels of the plugin's own,
// blobrt_<operation>_<f|d>, built once per context at the first call. Forward: one work-item
// per pooled element, over its window in row order (the first maximum wins, as in
// blobrt_kernels/pooling.hpp); backward: one work-item per bottom element, gathering over the
// windows that hold it in window order, so no two work-items write the same element and the
// sum is the host kernel's, in the same order. Max pooling's backward finds each window's
// maximum again in the bottom data (no mask). The core has checked the geometry (kernel and
// stride at least 1, padding below the kernel, every window starting inside the image) and
// the operands, and sends no call without output.
#include <cstdint>
#include <mutex>
#include <string>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/pooling.hpp"
#include "context.hpp"

namespace blobrt_opencl {

namespace {

const char* pool_kernel_source() {
  return R"CLC(
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* The geometry, as plugin_abi.h's pooling operations take it. */
#define BLOBRT_POOL_GEOMETRY                                                                      \
  long planes, long height, long width, long pooled_h, long pooled_w, long kernel_h,              \
      long kernel_w, long stride_h, long stride_w, long pad_h, long pad_w
#define BLOBRT_POOL_PASS                                                                          \
  planes, height, width, pooled_h, pooled_w, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w

/* Window (ph, pw): rows [h0, h1), columns [w0, w1) inside the image; its size clipped to
 * the padded image. */
#define BLOBRT_POOL_WINDOW(ph, pw)                                                                \
  long h0 = (ph) * stride_h - pad_h, w0 = (pw) * stride_w - pad_w;                                \
  long h1 = min(h0 + kernel_h, height + pad_h), w1 = min(w0 + kernel_w, width + pad_w);           \
  const long padded_size = (h1 - h0) * (w1 - w0);                                                 \
  h0 = max(h0, 0L);                                                                               \
  w0 = max(w0, 0L);                                                                               \
  h1 = min(h1, height);                                                                           \
  w1 = min(w1, width);

/* The windows holding element (h, w): [ph0, ph1) x [pw0, pw1). */
#define BLOBRT_POOL_WINDOWS_OF(h, w)                                                              \
  const long ph0 = (h) + pad_h < kernel_h ? 0 : ((h) + pad_h - kernel_h) / stride_h + 1;          \
  const long ph1 = min(((h) + pad_h) / stride_h + 1, pooled_h);                                   \
  const long pw0 = (w) + pad_w < kernel_w ? 0 : ((w) + pad_w - kernel_w) / stride_w + 1;          \
  const long pw1 = min(((w) + pad_w) / stride_w + 1, pooled_w);

#define BLOBRT_POOL_KERNELS(T, S)                                                                 \
/* The index in the plane of window (ph, pw)'s first maximum (-1: none above -FLT_MAX). */       \
long blobrt_pool_argmax_##S(BLOBRT_POOL_GEOMETRY, __global const T* plane, long ph, long pw,     \
                            T* best_out) {                                                        \
  BLOBRT_POOL_WINDOW(ph, pw)                                                                      \
  (void)padded_size;                                                                              \
  T best = (T)(-FLT_MAX);                                                                         \
  long at = -1;                                                                                   \
  for (long h = h0; h < h1; ++h) {                                                                \
    for (long w = w0; w < w1; ++w) {                                                              \
      const T v = plane[h * width + w];                                                           \
      if (v > best) {                                                                             \
        best = v;                                                                                 \
        at = h * width + w;                                                                       \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  *best_out = best;                                                                               \
  return at;                                                                                      \
}                                                                                                 \
__kernel void blobrt_max_pool_##S(BLOBRT_POOL_GEOMETRY, __global const T* bottom, long bottom_offset, \
                                  __global T* top, long top_offset) {                             \
  const long index = get_global_id(0);                                                            \
  const long pooled = pooled_h * pooled_w;                                                        \
  if (index >= planes * pooled) return;                                                           \
  const long pw = index % pooled_w, ph = index / pooled_w % pooled_h, p = index / pooled;         \
  T best;                                                                                         \
  blobrt_pool_argmax_##S(BLOBRT_POOL_PASS, bottom + bottom_offset + p * height * width, ph, pw, &best); \
  top[top_offset + index] = best;                                                                 \
}                                                                                                 \
__kernel void blobrt_max_pool_backward_##S(BLOBRT_POOL_GEOMETRY, __global const T* bottom,         \
                                           long bottom_offset, __global const T* top_diff,        \
                                           long top_diff_offset, __global T* bottom_diff,         \
                                           long bottom_diff_offset) {                             \
  const long index = get_global_id(0);                                                            \
  if (index >= planes * height * width) return;                                                   \
  const long w = index % width, h = index / width % height, p = index / (width * height);         \
  __global const T* plane = bottom + bottom_offset + p * height * width;                          \
  __global const T* diff = top_diff + top_diff_offset + p * pooled_h * pooled_w;                  \
  BLOBRT_POOL_WINDOWS_OF(h, w)                                                                    \
  T sum = (T)0, best;                                                                             \
  for (long ph = ph0; ph < ph1; ++ph) {                                                           \
    for (long pw = pw0; pw < pw1; ++pw) {                                                         \
      if (blobrt_pool_argmax_##S(BLOBRT_POOL_PASS, plane, ph, pw, &best) == h * width + w) {     \
        sum += diff[ph * pooled_w + pw];                                                          \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  bottom_diff[bottom_diff_offset + index] = sum;                                                  \
}                                                                                                 \
__kernel void blobrt_ave_pool_##S(BLOBRT_POOL_GEOMETRY, __global const T* bottom, long bottom_offset, \
                                  __global T* top, long top_offset) {                             \
  const long index = get_global_id(0);                                                            \
  const long pooled = pooled_h * pooled_w;                                                        \
  if (index >= planes * pooled) return;                                                           \
  const long pw = index % pooled_w, ph = index / pooled_w % pooled_h, p = index / pooled;         \
  __global const T* plane = bottom + bottom_offset + p * height * width;                          \
  BLOBRT_POOL_WINDOW(ph, pw)                                                                      \
  T sum = (T)0;                                                                                   \
  for (long h = h0; h < h1; ++h) {                                                                \
    for (long w = w0; w < w1; ++w) sum += plane[h * width + w];                                   \
  }                                                                                               \
  top[top_offset + index] = sum / (T)padded_size;                                                 \
}                                                                                                 \
__kernel void blobrt_ave_pool_backward_##S(BLOBRT_POOL_GEOMETRY, __global const T* top_diff,       \
                                           long top_diff_offset, __global T* bottom_diff,         \
                                           long bottom_diff_offset) {                             \
  const long index = get_global_id(0);                                                            \
  if (index >= planes * height * width) return;                                                   \
  const long w = index % width, h = index / width % height, p = index / (width * height);         \
  __global const T* diff = top_diff + top_diff_offset + p * pooled_h * pooled_w;                  \
  BLOBRT_POOL_WINDOWS_OF(h, w)                                                                    \
  T sum = (T)0;                                                                                   \
  for (long ph = ph0; ph < ph1; ++ph) {                                                           \
    for (long pw = pw0; pw < pw1; ++pw) {                                                         \
      BLOBRT_POOL_WINDOW(ph, pw)                                                                  \
      sum += diff[ph * pooled_w + pw] / (T)padded_size;                                           \
    }                                                                                             \
  }                                                                                               \
  bottom_diff[bottom_diff_offset + index] = sum;                                                  \
}

BLOBRT_POOL_KERNELS(float, f)
#ifdef HAVE_FP64
BLOBRT_POOL_KERNELS(double, d)
#endif
)CLC";
}

// The operations, as Context::pool_kernels indexes them.
enum PoolKernel { kMaxPool, kMaxPoolBackward, kAvePool, kAvePoolBackward };
const char* const kPoolKernelNames[] = {"max_pool", "max_pool_backward", "ave_pool", "ave_pool_backward"};

// An operand's buffer, offset, element count and name, checked against its cl_mem's size.
struct PoolOperand {
  const void* buffer;
  int64_t offset, count;
  const char* name;
};

// One launch of `which` over `work_items`: the geometry, then each operand's cl_mem and offset.
template <std::size_t N>
int launch(Context* c, PoolKernel which, int32_t precision, const blobrt_kernels::PoolGeometry& g,
           const PoolOperand (&operands)[N], int64_t work_items, blobrt_error* err) {
  const char* call = kPoolKernelNames[which];
  const size_t element = element_size(precision);
  for (const PoolOperand& o : operands) {
    if (int s = check_extent(o.buffer, o.offset, o.count, element, o.name, call, err)) return s;
  }
  std::lock_guard<std::mutex> lock(c->mutex);  // the kernels' arguments
  const int p = precision == BLOBRT_FLOAT64 ? 1 : 0;
  cl_kernel kernel = nullptr;
  if (int s = cached_kernel(c, &c->pool_program, pool_kernel_source(), "pooling kernels", &c->pool_kernels[which][p],
                            std::string("blobrt_") + call + (p ? "_d" : "_f"), &kernel, err)) {
    return s;
  }
  cl_int status = set_kernel_args(kernel, 0, cl_long{g.planes}, cl_long{g.height}, cl_long{g.width},
                                  cl_long{g.pooled_h}, cl_long{g.pooled_w}, cl_long{g.kernel_h}, cl_long{g.kernel_w},
                                  cl_long{g.stride_h}, cl_long{g.stride_w}, cl_long{g.pad_h}, cl_long{g.pad_w});
  for (cl_uint i = 0; i < N && status == CL_SUCCESS; ++i) {
    status = set_kernel_args(kernel, 11 + 2 * i, as_mem(operands[i].buffer), cl_long{operands[i].offset});
  }
  if (status != CL_SUCCESS) return cl_fail(err, (std::string("clSetKernelArg(") + call + ")").c_str(), status);
  const size_t global = static_cast<size_t>(work_items);
  CL_CHECK(clEnqueueNDRangeKernel(c->queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
           (std::string("clEnqueueNDRangeKernel(") + call + ")").c_str());
  return BLOBRT_OK;
}

#define BLOBRT_OPENCL_POOL_GEOMETRY_                                                                                 \
  const blobrt_kernels::PoolGeometry g {                                                                             \
    planes, height, width, pooled_h, pooled_w, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w                 \
  }

}  // namespace

void release_pool(Context* c) { release_cached_kernels(&c->pool_program, c->pool_kernels); }

template <bool Max>
int pool_entry(void* context, int32_t precision, int64_t planes, int64_t height, int64_t width, int64_t pooled_h,
               int64_t pooled_w, int64_t kernel_h, int64_t kernel_w, int64_t stride_h, int64_t stride_w, int64_t pad_h,
               int64_t pad_w, const void* bottom, int64_t bottom_offset, void* top, int64_t top_offset,
               blobrt_error* err) {
  BLOBRT_OPENCL_POOL_GEOMETRY_;
  const PoolOperand operands[] = {{bottom, bottom_offset, g.bottom_count(), "bottom"},
                                  {top, top_offset, g.top_count(), "top"}};
  return launch(as_context(context), Max ? kMaxPool : kAvePool, precision, g, operands, g.top_count(), err);
}
template int pool_entry<true>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                              int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t, blobrt_error*);
template int pool_entry<false>(void*, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                               int64_t, int64_t, int64_t, const void*, int64_t, void*, int64_t, blobrt_error*);

int max_pool_backward(void* context, int32_t precision, int64_t planes, int64_t height, int64_t width, int64_t pooled_h,
                      int64_t pooled_w, int64_t kernel_h, int64_t kernel_w, int64_t stride_h, int64_t stride_w,
                      int64_t pad_h, int64_t pad_w, const void* bottom, int64_t bottom_offset, const void* top_diff,
                      int64_t top_diff_offset, void* bottom_diff, int64_t bottom_diff_offset, blobrt_error* err) {
  BLOBRT_OPENCL_POOL_GEOMETRY_;
  const PoolOperand operands[] = {{bottom, bottom_offset, g.bottom_count(), "bottom"},
                                  {top_diff, top_diff_offset, g.top_count(), "top_diff"},
                                  {bottom_diff, bottom_diff_offset, g.bottom_count(), "bottom_diff"}};
  return launch(as_context(context), kMaxPoolBackward, precision, g, operands, g.bottom_count(), err);
}

int ave_pool_backward(void* context, int32_t precision, int64_t planes, int64_t height, int64_t width, int64_t pooled_h,
                      int64_t pooled_w, int64_t kernel_h, int64_t kernel_w, int64_t stride_h, int64_t stride_w,
                      int64_t pad_h, int64_t pad_w, const void* top_diff, int64_t top_diff_offset, void* bottom_diff,
                      int64_t bottom_diff_offset, blobrt_error* err) {
  BLOBRT_OPENCL_POOL_GEOMETRY_;
  const PoolOperand operands[] = {{top_diff, top_diff_offset, g.top_count(), "top_diff"},
                                  {bottom_diff, bottom_diff_offset, g.bottom_count(), "bottom_diff"}};
  return launch(as_context(context), kAvePoolBackward, precision, g, operands, g.bottom_count(), err);
}

}  // namespace blobrt_opencl
