// A program that uses an installed blobrt as any project would (built by
// tests/outside/outside_in_test.py with pkg-config, meson and CMake): one Blob, Caffe's math on
// whatever backend BLOBRT_BACKEND names, the version header.
#include <blobrt/blob.hpp>
#include <blobrt/plugin_abi.h>
#include <blobrt/runtime.hpp>
#include <blobrt/version.hpp>

#include <cstdio>

static_assert(BLOBRT_VERSION_PLUGIN_ABI_MAJOR == BLOBRT_PLUGIN_ABI_MAJOR &&
                  BLOBRT_VERSION_PLUGIN_ABI_MINOR == BLOBRT_PLUGIN_ABI_MINOR,
              "version.hpp and plugin_abi.h disagree");

int main() {
  blobrt::Blob<float> blob({2, 3, 4});
  float* data = blob.mutable_cpu_data();
  float* diff = blob.mutable_cpu_diff();
  for (int i = 0; i < blob.count(); ++i) {
    data[i] = static_cast<float>(i);
    diff[i] = 1.0f;
  }
  blob.Update();  // data -= diff, on the active device
  std::printf("consumer %s: device=%s asum=%g\n", BLOBRT_VERSION_STRING, blobrt::current_device_id().c_str(),
              static_cast<double>(blob.asum_data()));
  return 0;
}
