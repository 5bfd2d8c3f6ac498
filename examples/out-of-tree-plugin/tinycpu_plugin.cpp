// A complete blobrt backend: a CPU device on the plugin kit's host-memory device. Everything
// but its name and description comes from HostMemoryDevice; to use a library of your own,
// define any entry of the table (blobrt/plugin_abi.h's BLOBRT_PLUGIN_V1_ENTRIES) by its
// field name, as the in-tree BLIS backend does for axpy, scal, gemm and gemv.
#include <blobrt/plugin_kit_host.hpp>

namespace {

namespace kit = blobrt::plugin_kit;

struct TinyCpu : kit::HostMemoryDevice {
  static int device_properties(int32_t index, blobrt_device_properties* out, blobrt_error* err) {
    if (int status = kit::check_index(err, "tinycpu", index, 1)) return status;
    kit::set_text(out->name, "host CPU (tinycpu example)");
    kit::set_text(out->details, "out-of-tree example on the blobrt plugin kit");
    kit::fill_host_properties(out);
    return BLOBRT_OK;
  }
};

}  // namespace

BLOBRT_PLUGIN_DEFINE(TinyCpu, "tinycpu", "tinycpu 0.1")
