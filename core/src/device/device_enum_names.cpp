// The spellings of device.hpp's enums, all in one place: what logs, errors, `blobrt info`
// and its JSON (docs/blobrt-info.schema.json) print for them.
#include "blobrt/device.hpp"

#include "blobrt/plugin_abi.h"  // BLOBRT_EW_OP_COUNT

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

const char* to_string(ElementwiseOp op) noexcept {
  static const char* const names[] = {"set", "add_scalar", "scale", "axpby", "add", "sub", "mul", "div",
                                      "powx", "sqr", "sqrt", "exp", "log", "abs", "sign", "sgnbit"};
  const int code = static_cast<int>(op);
  return code >= 0 && code < BLOBRT_EW_OP_COUNT ? names[code] : "unknown";
}

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
