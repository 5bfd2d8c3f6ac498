/* blobrt plugin ABI: the only thing that crosses the shared-object boundary.
 *
 * A backend plugin is a shared object exporting one C function,
 * BLOBRT_PLUGIN_ENTRY_SYMBOL, that returns a pointer to a static function table.
 * No C++ class, exception or STL type crosses this boundary: errors come back as a
 * non-zero status plus a message written into a caller-owned blobrt_error.
 *
 * Versioning (as PJRT / SP_StreamExecutor):
 *  - abi_major changes on any incompatible change; the loader refuses a mismatch.
 *  - abi_minor grows when fields are appended at the end of a struct; the loader
 *    accepts an older minor and reads struct_size to know which fields exist.
 *  - Every struct but blobrt_error (a fixed-size message buffer, never extended) starts
 *    with struct_size so either side can tell what the other has: a reader checks a field
 *    with BLOBRT_STRUCT_HAS before it reads one added after 1.0.
 *  Compatibility rule: libblobrt loads a plugin of the same major and any minor; fields
 *  it knows but the plugin's table lacks are treated as absent (NULL). A plugin built
 *  against a newer minor works with an older libblobrt, which ignores the extra fields.
 *
 * Notes: a call that succeeds (BLOBRT_OK) may leave a short note in its blobrt_error
 * (something a user may want to know at BLOBRT_LOG=debug, such as kernels this call
 * compiled and how long that took); the core logs it at debug level. A call that has
 * nothing to say leaves message[0] as the core set it, '\0'.
 *
 * Buffers are opaque handles (void*): a device pointer for CUDA and CPU backends,
 * a cl_mem for OpenCL. Offsets are always passed separately (bytes for copies and
 * memset, elements for the BLAS operations). The core does arithmetic on a handle only
 * where the device says its handles are addresses (addressable_handles, ABI 1.3; a
 * host-memory device's are); otherwise parts of a buffer are the plugin's view()s.
 */
#ifndef BLOBRT_PLUGIN_ABI_H
#define BLOBRT_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "blobrt/elementwise_operations.h"
#include "blobrt/math_operations.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BLOBRT_PLUGIN_ABI_MAJOR 1
#define BLOBRT_PLUGIN_ABI_MINOR 12
#define BLOBRT_PLUGIN_ENTRY_SYMBOL "blobrt_plugin_entry_v1"

#define BLOBRT_ERROR_MESSAGE_SIZE 1024

/* Status codes. Anything non-zero is a failure; the message says what happened. */
enum {
  BLOBRT_OK = 0,
  BLOBRT_ERR_FAILED = 1,
  BLOBRT_ERR_OUT_OF_MEMORY = 2,
  BLOBRT_ERR_UNSUPPORTED = 3,
  BLOBRT_ERR_INVALID_ARGUMENT = 4
};

/* Whether `object` (a pointer to a struct that starts with struct_size) is large enough to
 * hold `field`. */
#define BLOBRT_STRUCT_HAS(type, object, field) \
  ((object)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

typedef struct blobrt_error {
  char message[BLOBRT_ERROR_MESSAGE_SIZE];
} blobrt_error;

enum {
  BLOBRT_DEVICE_KIND_CPU = 0,
  BLOBRT_DEVICE_KIND_GPU = 1,
  BLOBRT_DEVICE_KIND_ACCELERATOR = 2
};

typedef struct blobrt_device_properties {
  size_t struct_size;
  char name[256];         /* e.g. "NVIDIA H100", "pthread-haswell-...", "BLIS on host" */
  char details[512];      /* free text: driver, compute capability, OpenCL version, ... */
  uint64_t memory_bytes;  /* device memory (host RAM for CPU devices) */
  int32_t kind;           /* BLOBRT_DEVICE_KIND_* */
  int32_t host_memory;    /* 1: handles are host pointers the CPU may dereference */
  int32_t supports_fp64;  /* 0: the double operations fail with a clear message */
  int32_t has_pinned_host;/* 1: host_allocate/host_release give page-locked memory */
  int32_t host_alias_buffers; /* 1: host_alias() returns the host memory behind buffers */
  /* ABI 1.1: the byte offsets view() accepts are multiples of this (0: no views). */
  uint64_t view_alignment;
  /* ABI 1.3: what the device natively is, for whoever hands its buffers on (DLPack, NCCL):
   * a DLPack device type (BLOBRT_NATIVE_*, DLPack's DLDeviceType numbers) and the device's
   * number in that type's own numbering (DLPack's device_id: the CUDA ordinal, ...).
   * BLOBRT_NATIVE_UNKNOWN (0, what an older plugin leaves) lets the core decide: CPU for a
   * device whose handles are host pointers, unknown otherwise. */
  int32_t native_type;
  int32_t native_index;
  /* ABI 1.3: 1 when a handle plus a byte offset is itself a valid handle into the same
   * buffer (handles are addresses in one flat space: host or CUDA pointers); 0 when handles
   * are objects (an OpenCL cl_mem). An older plugin leaves 0; the core then takes 1 for
   * host-pointer handles. */
  int32_t addressable_handles;
} blobrt_device_properties;

/* Device types, numbered as DLPack's DLDeviceType (dlpack.h), so that a value can be handed
 * to DLPack as it is. */
enum {
  BLOBRT_NATIVE_UNKNOWN = 0,
  BLOBRT_NATIVE_CPU = 1,           /* kDLCPU */
  BLOBRT_NATIVE_CUDA = 2,          /* kDLCUDA */
  BLOBRT_NATIVE_CUDA_HOST = 3,     /* kDLCUDAHost */
  BLOBRT_NATIVE_OPENCL = 4,        /* kDLOpenCL */
  BLOBRT_NATIVE_VULKAN = 7,        /* kDLVulkan */
  BLOBRT_NATIVE_METAL = 8,         /* kDLMetal */
  BLOBRT_NATIVE_VPI = 9,           /* kDLVPI */
  BLOBRT_NATIVE_ROCM = 10,         /* kDLROCM */
  BLOBRT_NATIVE_ROCM_HOST = 11,    /* kDLROCMHost */
  BLOBRT_NATIVE_EXT_DEV = 12,      /* kDLExtDev */
  BLOBRT_NATIVE_CUDA_MANAGED = 13, /* kDLCUDAManaged */
  BLOBRT_NATIVE_ONE_API = 14,      /* kDLOneAPI */
  BLOBRT_NATIVE_WEBGPU = 15,       /* kDLWebGPU */
  BLOBRT_NATIVE_HEXAGON = 16,      /* kDLHexagon */
  BLOBRT_NATIVE_MAIA = 17          /* kDLMAIA */
};

/* ABI 1.2: Caffe's math beyond level 1 (math_functions.hpp). */
enum { BLOBRT_FLOAT32 = 0, BLOBRT_FLOAT64 = 1 };   /* precision of gemm, gemv, elementwise */
enum { BLOBRT_NO_TRANS = 0, BLOBRT_TRANS = 1 };    /* as CBLAS_TRANSPOSE's NoTrans / Trans */

/* Element-wise operations, y[i] = f(a[i], b[i]) with scalars alpha and beta, over n
 * elements. An operand the operation does not name is NULL. y may be the same buffer and
 * offset as a or b (Caffe's in-place calls: caffe_sqr(n, x, x), caffe_mul(n, a, y, y)).
 * enum blobrt_elementwise_op (BLOBRT_EW_SET = 0, BLOBRT_EW_ADD_SCALAR = 1, ...) and
 * BLOBRT_EW_OP_COUNT come from the list in blobrt/elementwise_operations.h, which says of
 * each code what it computes, which operands it reads and the Caffe functions it serves.
 * Later minors may add codes; a plugin answers BLOBRT_ERR_UNSUPPORTED for one it has no
 * kernel for. */

/* The function table's entry points, in their ABI order, written once: the struct below,
 * the compile-time checks of each version's size, libblobrt's loader (which checks the
 * REQUIRED ones) and the plugin kit's table builder (blobrt/plugin_kit.hpp) expand this list,
 * so a field appended in a later minor is named in one place. Each X(presence, since,
 * return_type, name, parameters): presence is REQUIRED (a table without it is refused) or
 * OPTIONAL (NULL when absent); since is the version that added it (1_0, 1_1, 1_2, 1_4, 1_5, 1_6, 1_8, 1_10, 1_11, 1_12), whose
 * size, BLOBRT_PLUGIN_V<since>_SIZE, covers it. Entries are in version order: a new one is
 * appended at the end. The math operations come from their own list (blobrt/math_operations.h),
 * one group per minor,
 * from which the core's Device, its checks, PluginDevice's forwarding and the host path
 * are expanded too. What each entry does is said below the list. */
#define BLOBRT_PLUGIN_MATH_ENTRY_(X, since, name, parameters) \
  X(OPTIONAL, since, int, name, (void* context parameters(BLOBRT_MATH_C_PARAMETER), blobrt_error* err))
#define BLOBRT_PLUGIN_V1_ENTRIES(X)                                                               \
  X(REQUIRED, 1_0, int, device_count, (int32_t* count, blobrt_error* err))                        \
  X(REQUIRED, 1_0, int, device_properties,                                                        \
    (int32_t index, blobrt_device_properties* out, blobrt_error* err))                            \
  X(REQUIRED, 1_0, int, open_device, (int32_t index, void** context, blobrt_error* err))          \
  X(REQUIRED, 1_0, void, close_device, (void* context))                                           \
  X(REQUIRED, 1_0, int, allocate, (void* context, size_t bytes, void** handle, blobrt_error* err)) \
  X(REQUIRED, 1_0, void, release, (void* context, void* handle))                                  \
  X(OPTIONAL, 1_0, int, host_allocate,                                                            \
    (void* context, size_t bytes, void** pointer, blobrt_error* err))                             \
  X(OPTIONAL, 1_0, void, host_release, (void* context, void* pointer))                            \
  X(OPTIONAL, 1_0, void*, host_alias, (void* context, const void* handle))                        \
  X(REQUIRED, 1_0, int, copy_to_device,                                                           \
    (void* context, const void* host, void* dst, size_t dst_offset, size_t bytes,                 \
     blobrt_error* err))                                                                          \
  X(REQUIRED, 1_0, int, copy_to_host,                                                             \
    (void* context, const void* src, size_t src_offset, void* host, size_t bytes,                 \
     blobrt_error* err))                                                                          \
  X(REQUIRED, 1_0, int, copy_device,                                                              \
    (void* context, const void* src, size_t src_offset, void* dst, size_t dst_offset,             \
     size_t bytes, blobrt_error* err))                                                            \
  X(REQUIRED, 1_0, int, memset,                                                                   \
    (void* context, void* dst, size_t offset, int32_t value, size_t bytes, blobrt_error* err))    \
  X(REQUIRED, 1_0, int, saxpy,                                                                    \
    (void* context, int64_t n, float alpha, const void* x, int64_t x_offset, void* y,             \
     int64_t y_offset, blobrt_error* err))                                                        \
  X(REQUIRED, 1_0, int, daxpy,                                                                    \
    (void* context, int64_t n, double alpha, const void* x, int64_t x_offset, void* y,            \
     int64_t y_offset, blobrt_error* err))                                                        \
  X(REQUIRED, 1_0, int, sdot,                                                                     \
    (void* context, int64_t n, const void* x, int64_t x_offset, const void* y,                    \
     int64_t y_offset, float* result, blobrt_error* err))                                         \
  X(REQUIRED, 1_0, int, ddot,                                                                     \
    (void* context, int64_t n, const void* x, int64_t x_offset, const void* y,                    \
     int64_t y_offset, double* result, blobrt_error* err))                                        \
  X(REQUIRED, 1_0, int, sasum,                                                                    \
    (void* context, int64_t n, const void* x, int64_t x_offset, float* result,                    \
     blobrt_error* err))                                                                          \
  X(REQUIRED, 1_0, int, dasum,                                                                    \
    (void* context, int64_t n, const void* x, int64_t x_offset, double* result,                   \
     blobrt_error* err))                                                                          \
  X(REQUIRED, 1_0, int, sscal,                                                                    \
    (void* context, int64_t n, float alpha, void* x, int64_t x_offset, blobrt_error* err))        \
  X(REQUIRED, 1_0, int, dscal,                                                                    \
    (void* context, int64_t n, double alpha, void* x, int64_t x_offset, blobrt_error* err))       \
  X(REQUIRED, 1_0, int, synchronize, (void* context, blobrt_error* err))                          \
  X(OPTIONAL, 1_1, int, view,                                                                     \
    (void* context, void* buffer, size_t offset, size_t bytes, void** handle,                     \
     blobrt_error* err))                                                                          \
  X(OPTIONAL, 1_1, void, release_view, (void* context, void* handle))                             \
  BLOBRT_MATH_OPERATIONS_1_2(BLOBRT_PLUGIN_MATH_ENTRY_, X)                                      \
  X(OPTIONAL, 1_4, int, sync_host_alias,                                                          \
    (void* context, void* handle, size_t offset, size_t bytes, int32_t direction,                 \
     blobrt_error* err))                                                                          \
  BLOBRT_MATH_OPERATIONS_1_4(BLOBRT_PLUGIN_MATH_ENTRY_, X)                                      \
  BLOBRT_MATH_OPERATIONS_1_5(BLOBRT_PLUGIN_MATH_ENTRY_, X)                                      \
  BLOBRT_MATH_OPERATIONS_1_6(BLOBRT_PLUGIN_MATH_ENTRY_, X)                                      \
  BLOBRT_MATH_OPERATIONS_1_8(BLOBRT_PLUGIN_MATH_ENTRY_, X)                                      \
  BLOBRT_MATH_OPERATIONS_1_10(BLOBRT_PLUGIN_MATH_ENTRY_, X)                                     \
  BLOBRT_MATH_OPERATIONS_1_11(BLOBRT_PLUGIN_MATH_ENTRY_, X)                                     \
  BLOBRT_MATH_OPERATIONS_1_12(BLOBRT_PLUGIN_MATH_ENTRY_, X)

/* sync_host_alias's direction. */
enum {
  BLOBRT_ALIAS_TO_HOST = 0,   /* the device's writes become the host's to read */
  BLOBRT_ALIAS_TO_DEVICE = 1  /* the host's writes become the device's to read */
};

/* What the entries do.
 * device_count: never throws or aborts. On a machine without usable hardware it returns
 *   BLOBRT_OK, *count = 0 and a reason in err (e.g. "cudaGetDeviceCount:
 *   cudaErrorInsufficientDriver").
 * host_allocate / host_release (optional): page-locked host memory for faster transfers.
 * host_alias (optional): the host pointer that backs a buffer, when the device keeps the
 *   buffer's contents in host memory (e.g. an OpenCL buffer created with
 *   CL_MEM_USE_HOST_PTR on a CPU device), else NULL. The core then uses that pointer as
 *   the buffer's host mirror, and synchronises the two with sync_host_alias (ABI 1.4); a
 *   libblobrt older than 1.4, or a plugin without sync_host_alias, calls copy_to_host /
 *   copy_to_device between a buffer and its own alias instead, which such a plugin treats
 *   as the same synchronisation.
 * sync_host_alias (ABI 1.4, optional): the synchronisation point between a buffer and the
 *   host memory host_alias() returned for it, over bytes [offset, offset + bytes):
 *   BLOBRT_ALIAS_TO_HOST before the host reads what the device wrote (OpenCL: a map for
 *   reading, or waiting for the queue where the device uses the memory in place),
 *   BLOBRT_ALIAS_TO_DEVICE before the device reads what the host wrote (a map for writing
 *   that invalidates the region, then the unmap). It moves no bytes where the memory is
 *   one; the core calls it only on a buffer whose host_alias() it uses, never with
 *   bytes = 0.
 * Level-1 BLAS (saxpy ... dscal): n and offsets are in elements, 64-bit. Results land in
 *   host memory. n <= 0 is nothing to do, answered by the entry as BLAS does (dot and asum
 *   write 0): libblobrt passes it on without a test of its own. libblobrt refuses double
 *   precision on a device without it (supports_fp64 = 0) itself, so a d- entry never sees
 *   such a call.
 * view / release_view (ABI 1.1, optional): a handle for bytes [offset, offset + bytes) of
 *   `buffer`, usable wherever a buffer handle of this device is (copies, memset, BLAS,
 *   host_alias). An OpenCL sub-buffer; a CUDA pointer plus offset. offset is a multiple of
 *   the device's view_alignment. release_view frees the handle, never the memory, and is
 *   called before the buffer itself is released. What lets libblobrt-dist lay many blobs'
 *   diffs out in one allocation (Caffe's parallel.cpp) on devices whose handles are not
 *   host pointers.
 * gemm, gemv, elementwise (ABI 1.2, optional: NULL when absent, or BLOBRT_ERR_UNSUPPORTED
 *   for one call it does not do, e.g. an operation code it does not know): the core then
 *   runs that call on the host through copies, and says so once at BLOBRT_LOG=info.
 *   libblobrt checks the arguments before it calls one (blobrt/math_operations.h's list
 *   says each parameter's kind), so an entry never sees: an unknown precision or transpose
 *   code, an element-wise code this libblobrt does not know, fp64 on a device without it, a negative
 *   size or offset, nothing to compute (m = 0, n = 0, or elementwise's n = 0), gemm/gemv
 *   with nothing to add (k = 0, an empty inner dimension or alpha = 0: libblobrt makes
 *   C = beta * C itself with elementwise), or a NULL buffer the call reads or writes.
 *   Row-major, as Caffe calls them; offsets in elements; alpha and beta are exact for float.
 *   gemm: C = alpha * op(A) * op(B) + beta * C, op(A) m x k, op(B) k x n, C m x n, with
 *   Caffe's leading dimensions: lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n.
 *   gemv: y = alpha * op(A) * x + beta * y, A m x n (lda = n); x and y have n and m
 *   elements without transposition, m and n with it.
 *   elementwise: one entry point for the element-wise family; op is a
 *   blobrt_elementwise_op.
 * im2col, col2im (ABI 1.4, optional, as gemm): Caffe's im2col_cpu and col2im_cpu, in its
 *   layout. The output is out_h x out_w with out_h = (height + 2 pad_h - (dilation_h
 *   (kernel_h - 1) + 1)) / stride_h + 1 (C's division) and out_w likewise; col holds
 *   channels kernel_h kernel_w rows of out_h out_w elements, zero where a patch lies in the
 *   padding; col2im writes every element of im (channels height width), the sum of the
 *   column elements that came from it. libblobrt has checked that kernel, stride and
 *   dilation are at least 1; a call whose output has no elements never reaches the entry. */
#define BLOBRT_PLUGIN_DECLARE_ENTRY_(presence, since, return_type, name, parameters) \
  return_type(*name) parameters;

typedef struct blobrt_plugin_v1 {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;             /* backend name, e.g. "blis" */
  const char* library_version;  /* version of the wrapped library, e.g. "BLIS 0.9.0" */
  BLOBRT_PLUGIN_V1_ENTRIES(BLOBRT_PLUGIN_DECLARE_ENTRY_)
} blobrt_plugin_v1;

/* The table's size in each minor version: a table's struct_size is at least
 * BLOBRT_PLUGIN_V1_0_SIZE (208 bytes on LP64), and a field added in 1.<m> exists when
 * struct_size >= BLOBRT_PLUGIN_V1_<m>_SIZE. Five header fields, then one function pointer
 * per entry (22 in 1.0, 24 in 1.1, 27 in 1.2 and 1.3, 30 in 1.4, 36 in 1.5, 42 in 1.6 and 1.7, 45 in 1.8 and 1.9, 46 in 1.10, 48 in 1.11, 50 in 1.12); checked against offsetof
 * below. */
#define BLOBRT_PLUGIN_V1_HEADER_SIZE_ \
  (sizeof(size_t) + 2 * sizeof(uint32_t) + 2 * sizeof(const char*))
#define BLOBRT_PLUGIN_V1_ENTRY_SIZE_ sizeof(int (*)(void))
#define BLOBRT_PLUGIN_V1_0_SIZE (BLOBRT_PLUGIN_V1_HEADER_SIZE_ + 22 * BLOBRT_PLUGIN_V1_ENTRY_SIZE_)
#define BLOBRT_PLUGIN_V1_1_SIZE (BLOBRT_PLUGIN_V1_HEADER_SIZE_ + 24 * BLOBRT_PLUGIN_V1_ENTRY_SIZE_)
#define BLOBRT_PLUGIN_V1_2_SIZE (BLOBRT_PLUGIN_V1_HEADER_SIZE_ + 27 * BLOBRT_PLUGIN_V1_ENTRY_SIZE_)
/* 1.3 added no entry (it added device-properties fields): its table is 1.2's size. */
#define BLOBRT_PLUGIN_V1_3_SIZE BLOBRT_PLUGIN_V1_2_SIZE
#define BLOBRT_PLUGIN_V1_4_SIZE (BLOBRT_PLUGIN_V1_HEADER_SIZE_ + 30 * BLOBRT_PLUGIN_V1_ENTRY_SIZE_)
#define BLOBRT_PLUGIN_V1_5_SIZE (BLOBRT_PLUGIN_V1_HEADER_SIZE_ + 36 * BLOBRT_PLUGIN_V1_ENTRY_SIZE_)
#define BLOBRT_PLUGIN_V1_6_SIZE (BLOBRT_PLUGIN_V1_HEADER_SIZE_ + 42 * BLOBRT_PLUGIN_V1_ENTRY_SIZE_)
/* 1.7 added no entry (it added element-wise codes 22 to 32): its table is 1.6's size. */
#define BLOBRT_PLUGIN_V1_7_SIZE BLOBRT_PLUGIN_V1_6_SIZE
#define BLOBRT_PLUGIN_V1_8_SIZE (BLOBRT_PLUGIN_V1_HEADER_SIZE_ + 45 * BLOBRT_PLUGIN_V1_ENTRY_SIZE_)
/* 1.9 added no entry (it added element-wise codes 33 and 34): its table is 1.8's size. */
#define BLOBRT_PLUGIN_V1_9_SIZE BLOBRT_PLUGIN_V1_8_SIZE
#define BLOBRT_PLUGIN_V1_10_SIZE (BLOBRT_PLUGIN_V1_HEADER_SIZE_ + 46 * BLOBRT_PLUGIN_V1_ENTRY_SIZE_)
#define BLOBRT_PLUGIN_V1_11_SIZE (BLOBRT_PLUGIN_V1_HEADER_SIZE_ + 48 * BLOBRT_PLUGIN_V1_ENTRY_SIZE_)
#define BLOBRT_PLUGIN_V1_12_SIZE (BLOBRT_PLUGIN_V1_HEADER_SIZE_ + 50 * BLOBRT_PLUGIN_V1_ENTRY_SIZE_)

/* The size that ends with `field`, and whether `table` (a blobrt_plugin_v1*) has that field
 * and set it: what a reader asks before it calls an OPTIONAL entry. */
#define BLOBRT_PLUGIN_END_OF(field) \
  (offsetof(blobrt_plugin_v1, field) + sizeof(((blobrt_plugin_v1*)0)->field))
#define BLOBRT_PLUGIN_OFFERS(table, field) \
  (BLOBRT_STRUCT_HAS(blobrt_plugin_v1, table, field) && (table)->field != NULL)

/* Compile-time checks (C11/C++11; a C99 compiler gets the same through an array size). */
#if defined(__cplusplus)
#define BLOBRT_PLUGIN_ASSERT_(condition, tag) static_assert(condition, #tag)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define BLOBRT_PLUGIN_ASSERT_(condition, tag) _Static_assert(condition, #tag)
#else
#define BLOBRT_PLUGIN_ASSERT_(condition, tag) typedef char blobrt_plugin_assert_##tag[(condition) ? 1 : -1]
#endif
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_0_SIZE == BLOBRT_PLUGIN_END_OF(synchronize), v1_0_size);
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_1_SIZE == BLOBRT_PLUGIN_END_OF(release_view), v1_1_size);
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_2_SIZE == BLOBRT_PLUGIN_END_OF(elementwise), v1_2_size);
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_4_SIZE == BLOBRT_PLUGIN_END_OF(col2im), v1_4_size);
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_5_SIZE == BLOBRT_PLUGIN_END_OF(softmax_backward), v1_5_size);
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_6_SIZE == BLOBRT_PLUGIN_END_OF(channel_affine), v1_6_size);
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_8_SIZE == BLOBRT_PLUGIN_END_OF(top_k_hits), v1_8_size);
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_10_SIZE == BLOBRT_PLUGIN_END_OF(bernoulli_mask), v1_10_size);
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_11_SIZE == BLOBRT_PLUGIN_END_OF(roi_max_pool_backward), v1_11_size);
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_12_SIZE == BLOBRT_PLUGIN_END_OF(col2im_3d), v1_12_size);
BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_V1_12_SIZE == sizeof(blobrt_plugin_v1), v1_12_is_current);
/* Every entry lies inside the size of the version that added it. */
#define BLOBRT_PLUGIN_CHECK_SINCE_(presence, since, return_type, name, parameters) \
  BLOBRT_PLUGIN_ASSERT_(BLOBRT_PLUGIN_END_OF(name) <= BLOBRT_PLUGIN_V##since##_SIZE, name##_since);
BLOBRT_PLUGIN_V1_ENTRIES(BLOBRT_PLUGIN_CHECK_SINCE_)

/* The one symbol a plugin exports. host_abi_major lets a plugin that supports several
 * majors answer with the matching table; it returns NULL if it cannot. */
typedef const blobrt_plugin_v1* (*blobrt_plugin_entry_fn)(uint32_t host_abi_major);

#if defined(__GNUC__)
#define BLOBRT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define BLOBRT_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif /* BLOBRT_PLUGIN_ABI_H */
