// The Device interface the core is written against. One implementation is built in
// (the host device); every other one is a plugin seen through its C function table.
// Buffers are opaque handles: copies and memset take byte offsets, BLAS takes element
// offsets, so a handle may be a cl_mem; arithmetic on a handle is for devices whose
// description says their handles are addresses (addressable_handles).
#ifndef BLOBRT_DEVICE_HPP
#define BLOBRT_DEVICE_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "blobrt's C++ headers need C++17 or later (-std=c++17); plugin_abi.h alone is plain C"
#endif

#include <cstddef>
#include <cstdint>
#include <string>

#include "blobrt/elementwise_operations.h"
#include "blobrt/math_operations.h"

namespace blobrt {

using DeviceBuffer = void*;
using ConstDeviceBuffer = const void*;

enum class DeviceKind { kCpu, kGpu, kAccelerator };
const char* to_string(DeviceKind kind) noexcept;

// How a device's memory relates to host memory: the three cases of SyncedMemory.
//  - kShared:   handles are host pointers (host, blis): one allocation serves both sides;
//  - kAliased:  buffers live in host memory that the device lends through host_alias()
//               (OpenCL on a CPU): transitions map and unmap, no bytes move;
//  - kSeparate: the device has its own memory (CUDA, OpenCL on a GPU): real copies.
enum class MemoryModel { kShared, kAliased, kSeparate };
const char* to_string(MemoryModel model) noexcept;

// What a device natively is, numbered as DLPack's DLDeviceType (plugin_abi.h,
// BLOBRT_NATIVE_*), so a value can be handed to DLPack as it is. kUnknown: the plugin did
// not say and its handles are not host pointers.
enum class NativeDeviceType : std::int32_t {
  kUnknown = 0, kCpu = 1, kCuda = 2, kCudaHost = 3, kOpenCL = 4, kVulkan = 7, kMetal = 8, kVpi = 9, kRocm = 10,
  kRocmHost = 11, kExtDev = 12, kCudaManaged = 13, kOneApi = 14, kWebGpu = 15, kHexagon = 16, kMaia = 17
};
const char* to_string(NativeDeviceType type) noexcept;  // "cpu", "cuda", "opencl", ..., "unknown"

// Caffe's math beyond level 1 (plugin_abi.h, ABI 1.2, has the semantics of each).
enum class Precision { kFloat32 = 0, kFloat64 = 1 };
enum class Transpose { kNo = 0, kYes = 1 };
// ElementwiseOp::k<Cxx> = BLOBRT_EW_<CODE> for each entry of blobrt/elementwise_operations.h.
#define BLOBRT_EW_CXX_ENUMERATOR_(CODE, Cxx, name, number, ...) k##Cxx = number,
enum class ElementwiseOp { BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_CXX_ENUMERATOR_) };
#undef BLOBRT_EW_CXX_ENUMERATOR_
const char* to_string(ElementwiseOp op) noexcept;

// Each parameter kind of blobrt/math_operations.h as the Device interface takes it, and
// the parameter list of an operation in those types (what Device's math virtuals and their
// overrides are declared with).
#define BLOBRT_DEVICE_TYPE_PRECISION ::blobrt::Precision
#define BLOBRT_DEVICE_TYPE_TRANSPOSE ::blobrt::Transpose
#define BLOBRT_DEVICE_TYPE_EW_OP ::blobrt::ElementwiseOp
#define BLOBRT_DEVICE_TYPE_SIZE std::int64_t
#define BLOBRT_DEVICE_TYPE_OFFSET std::int64_t
#define BLOBRT_DEVICE_TYPE_SCALAR double
#define BLOBRT_DEVICE_TYPE_INPUT ::blobrt::ConstDeviceBuffer
#define BLOBRT_DEVICE_TYPE_OUTPUT ::blobrt::DeviceBuffer
#define BLOBRT_DEVICE_PARAMETER_(kind, name) , BLOBRT_DEVICE_TYPE_##kind name
#define BLOBRT_DEVICE_MATH_PARAMETERS(parameters) BLOBRT_MATH_LIST(parameters, BLOBRT_DEVICE_PARAMETER_)

// What a device is and what its handles allow. The core and every consumer decide by
// these, never by the backend's name (a new backend needs no change outside backends/).
struct DeviceDescription {
  std::string backend;          // the plugin's name: for people and for selection only
  int index = 0;                // device index within the backend
  std::string name;             // device name as the library reports it
  std::string details;          // driver / capability / version text
  std::uint64_t memory_bytes = 0;
  DeviceKind kind = DeviceKind::kCpu;
  MemoryModel memory_model = MemoryModel::kSeparate;
  // DLPack's (device_type, device_id) for this device's buffers: the CUDA ordinal for CUDA.
  NativeDeviceType native_type = NativeDeviceType::kUnknown;
  int native_index = 0;
  // A handle plus a byte offset is a handle into the same buffer (host or CUDA pointers),
  // so a consumer (DLPack export, NCCL) may address part of a buffer without view().
  bool addressable_handles = false;
  bool supports_fp64 = true;
  bool has_pinned_host = false;
  // view() takes byte offsets that are multiples of this; 0 when the device has no views.
  std::size_t view_alignment = 0;
  std::string id() const { return backend + ":" + std::to_string(index); }
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceDescription& description() const noexcept = 0;

  virtual DeviceBuffer allocate(std::size_t bytes) = 0;
  virtual void release(DeviceBuffer buffer) noexcept = 0;
  // Optional page-locked host memory; nullptr means "not offered, use ordinary memory".
  virtual void* allocate_host(std::size_t /*bytes*/) { return nullptr; }
  virtual void release_host(void* /*pointer*/) noexcept {}
  // Optional: the host memory backing `buffer`, or nullptr (see plugin_abi.h, host_alias).
  // Valid until the buffer is released; sync_host_alias (below) orders the two sides.
  virtual void* host_alias(ConstDeviceBuffer /*buffer*/) noexcept { return nullptr; }

  // Optional: a handle for bytes [offset, offset + bytes) of `buffer`, usable wherever a
  // buffer of this device is (copies, BLAS, SyncedMemory::set_gpu_data). offset must be a
  // multiple of description().view_alignment. Freed with release_view(), before `buffer`.
  // Devices whose handles are host pointers answer with the pointer; the others need
  // their plugin's view() and otherwise throw UnsupportedError.
  virtual DeviceBuffer view(DeviceBuffer buffer, std::size_t offset, std::size_t bytes);
  virtual void release_view(DeviceBuffer /*view*/) noexcept {}

  // Whether `handle` is a live buffer this device allocated (exactly as allocate()
  // returned it). Devices whose memory is host memory need not say (every pointer is
  // one); the others answer for caffe_gpu_memcpy, which copies in whichever direction.
  virtual bool is_buffer(ConstDeviceBuffer /*handle*/) const noexcept { return false; }

  virtual void copy_to_device(const void* host, DeviceBuffer dst, std::size_t dst_offset,
                              std::size_t bytes) = 0;
  virtual void copy_to_host(ConstDeviceBuffer src, std::size_t src_offset, void* host,
                            std::size_t bytes) = 0;
  virtual void copy_device(ConstDeviceBuffer src, std::size_t src_offset, DeviceBuffer dst,
                           std::size_t dst_offset, std::size_t bytes) = 0;
  virtual void memset(DeviceBuffer dst, std::size_t offset, int value, std::size_t bytes) = 0;

  // Level 1 per element type, where libblobrt.so.1's first releases had level 1 as typed
  // virtuals (kept in place: a program built then runs unchanged). The typed spellings
  // below call these, one virtual call; by default they forward to the Precision forms, so
  // a device need override only those. A device may override these as well, to skip the
  // run-time precision branch on calls of a few elements (the built-in host and plugin
  // devices do).
  virtual void typed_axpy(std::int64_t n, float alpha, ConstDeviceBuffer x, std::int64_t x_off, DeviceBuffer y,
                          std::int64_t y_off);
  virtual void typed_axpy(std::int64_t n, double alpha, ConstDeviceBuffer x, std::int64_t x_off, DeviceBuffer y,
                          std::int64_t y_off);
  virtual void typed_dot(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y,
                         std::int64_t y_off, float* result);
  virtual void typed_dot(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y,
                         std::int64_t y_off, double* result);
  virtual void typed_asum(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, float* result);
  virtual void typed_asum(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, double* result);
  virtual void typed_scal(std::int64_t n, float alpha, DeviceBuffer x, std::int64_t x_off);
  virtual void typed_scal(std::int64_t n, double alpha, DeviceBuffer x, std::int64_t x_off);

  // Caffe's math beyond level 1, one virtual per entry of blobrt/math_operations.h's list,
  // with its parameters as C++ types (Precision, Transpose, ElementwiseOp, std::int64_t
  // sizes and element offsets, double scalars, exact for float, and buffers), e.g.
  //   void gemm(Precision precision, Transpose trans_a, Transpose trans_b, std::int64_t m,
  //             std::int64_t n, std::int64_t k, double alpha, ConstDeviceBuffer a,
  //             std::int64_t a_offset, ConstDeviceBuffer b, std::int64_t b_offset,
  //             double beta, DeviceBuffer c, std::int64_t c_offset);
  //   void gemv(Precision, Transpose trans_a, m, n, alpha, a, a_offset, x, x_offset, beta, y,
  //             y_offset);
  //   void elementwise(Precision, ElementwiseOp op, n, alpha, beta, a, a_offset, b, b_offset,
  //                    y, y_offset);
  // (row-major; plugin_abi.h says each one's semantics). Not pure: the base class checks the
  // arguments and runs the call on the host through copies (logged once at
  // BLOBRT_LOG=info), so every device has all of Caffe's math.
  // The operations of ABI 1.2 here; each later minor's group is declared at the end of the
  // class (below sync_host_alias), so libblobrt.so.1's vtable only ever grows at its end.
#define BLOBRT_DEVICE_MATH_VIRTUAL_(X, since, name, parameters) \
  virtual void name(BLOBRT_DEVICE_MATH_PARAMETERS(parameters));
  BLOBRT_MATH_OPERATIONS_1_2(BLOBRT_DEVICE_MATH_VIRTUAL_, ~)

  virtual void synchronize() = 0;

  // Level 1 in the math operations' convention: a Precision, scalars as double (exact for
  // float), sizes and offsets in elements; dot and asum return their result as double
  // (exact for a float result). y[y_offset..] += alpha * x[x_offset..] for axpy. (Declared
  // last to keep libblobrt.so.1's vtable: see typed_axpy above.)
  virtual void axpy(Precision precision, std::int64_t n, double alpha, ConstDeviceBuffer x,
                    std::int64_t x_offset, DeviceBuffer y, std::int64_t y_offset) = 0;
  virtual double dot(Precision precision, std::int64_t n, ConstDeviceBuffer x, std::int64_t x_offset,
                     ConstDeviceBuffer y, std::int64_t y_offset) = 0;
  virtual double asum(Precision precision, std::int64_t n, ConstDeviceBuffer x, std::int64_t x_offset) = 0;
  virtual void scal(Precision precision, std::int64_t n, double alpha, DeviceBuffer x, std::int64_t x_offset) = 0;

  // Optional: the synchronisation point between `buffer` and its host_alias() over bytes
  // [offset, offset + bytes) (plugin_abi.h, sync_host_alias): before the host reads what the
  // device wrote (kToHost) or the device what the host wrote (kToDevice). SyncedMemory calls
  // it for a mirror that is the buffer's alias; it moves no bytes where the memory is one.
  // By default a copy between the buffer and its alias, which a device that lends aliases
  // treats as the same synchronisation (what libblobrt did before ABI 1.4). (Declared last
  // to keep libblobrt.so.1's vtable.)
  enum class AliasSync { kToHost, kToDevice };
  virtual void sync_host_alias(DeviceBuffer buffer, std::size_t offset, std::size_t bytes, AliasSync direction);

  // The math operations ABI 1.4 added (im2col, col2im), as the 1.2 ones above; a later
  // minor's group goes after these, never between (libblobrt.so.1's vtable).
  BLOBRT_MATH_OPERATIONS_1_4(BLOBRT_DEVICE_MATH_VIRTUAL_, ~)
  // ABI 1.5's (max and average pooling, softmax; forward and backward), after 1.4's.
  BLOBRT_MATH_OPERATIONS_1_5(BLOBRT_DEVICE_MATH_VIRTUAL_, ~)
  // ABI 1.6's (the softmax loss and its gradient, copy_rows, LRN across channels,
  // channel_affine), after 1.5's.
  BLOBRT_MATH_OPERATIONS_1_6(BLOBRT_DEVICE_MATH_VIRTUAL_, ~)
  // ABI 1.8's (gather_rows, scatter_add_rows, top_k_hits), after 1.6's.
  BLOBRT_MATH_OPERATIONS_1_8(BLOBRT_DEVICE_MATH_VIRTUAL_, ~)
  // ABI 1.10's (bernoulli_mask), after 1.8's.
  BLOBRT_MATH_OPERATIONS_1_10(BLOBRT_DEVICE_MATH_VIRTUAL_, ~)
  // ABI 1.11's (roi_max_pool, roi_max_pool_backward), after 1.10's.
  BLOBRT_MATH_OPERATIONS_1_11(BLOBRT_DEVICE_MATH_VIRTUAL_, ~)
  // ABI 1.12's (im2col_3d, col2im_3d), after 1.11's.
  BLOBRT_MATH_OPERATIONS_1_12(BLOBRT_DEVICE_MATH_VIRTUAL_, ~)
#undef BLOBRT_DEVICE_MATH_VIRTUAL_

  // Level 1 in Caffe's typed spelling (caffe_gpu_axpy<Dtype>), T float or double: the
  // precision is the scalar's or the result's type; one virtual call, to the typed slot
  // above. A subclass that overrides the Precision forms hides these names: `using
  // Device::axpy;` and so on bring them back.
  template <typename T>
  void axpy(std::int64_t n, T alpha, ConstDeviceBuffer x, std::int64_t x_off, DeviceBuffer y, std::int64_t y_off) {
    typed_axpy(n, alpha, x, x_off, y, y_off);
  }
  template <typename T>
  void dot(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, ConstDeviceBuffer y, std::int64_t y_off,
           T* result) {
    typed_dot(n, x, x_off, y, y_off, result);
  }
  template <typename T>
  void asum(std::int64_t n, ConstDeviceBuffer x, std::int64_t x_off, T* result) {
    typed_asum(n, x, x_off, result);
  }
  template <typename T>
  void scal(std::int64_t n, T alpha, DeviceBuffer x, std::int64_t x_off) {
    typed_scal(n, alpha, x, x_off);
  }
};

}  // namespace blobrt

#endif  // BLOBRT_DEVICE_HPP
