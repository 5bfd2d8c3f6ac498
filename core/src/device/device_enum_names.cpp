// The spellings of device.hpp's enums, all in one place: what logs, errors, `blobrt info`
// and its JSON (docs/blobrt-info.schema.json) print for them.
#include "blobrt/device.hpp"

#include "blobrt_kernels/elementwise.hpp"  // elementwise_op_name

namespace blobrt {

const char* to_string(DeviceKind kind) noexcept {
  switch (kind) {
    case DeviceKind::kCpu: return "CPU";
    case DeviceKind::kGpu: return "GPU";
    case DeviceKind::kAccelerator: return "accelerator";
  }
  return "unknown";
}

const char* to_string(MemoryModel model) noexcept {
  switch (model) {
    case MemoryModel::kShared: return "shared";
    case MemoryModel::kAliased: return "aliased";
    case MemoryModel::kSeparate: return "separate";
  }
  return "unknown";
}

// The kernels' names (blobrt_kernels/elementwise.hpp), which their errors use too.
const char* to_string(ElementwiseOp op) noexcept { return blobrt_kernels::elementwise_op_name(static_cast<int>(op)); }

const char* to_string(NativeDeviceType type) noexcept {
  switch (type) {
    case NativeDeviceType::kUnknown: return "unknown";
    case NativeDeviceType::kCpu: return "cpu";
    case NativeDeviceType::kCuda: return "cuda";
    case NativeDeviceType::kCudaHost: return "cuda_host";
    case NativeDeviceType::kOpenCL: return "opencl";
    case NativeDeviceType::kVulkan: return "vulkan";
    case NativeDeviceType::kMetal: return "metal";
    case NativeDeviceType::kVpi: return "vpi";
    case NativeDeviceType::kRocm: return "rocm";
    case NativeDeviceType::kRocmHost: return "rocm_host";
    case NativeDeviceType::kExtDev: return "ext_dev";
    case NativeDeviceType::kCudaManaged: return "cuda_managed";
    case NativeDeviceType::kOneApi: return "oneapi";
    case NativeDeviceType::kWebGpu: return "webgpu";
    case NativeDeviceType::kHexagon: return "hexagon";
    case NativeDeviceType::kMaia: return "maia";
  }
  return "unknown";
}

}  // namespace blobrt
