// A program whose static object uses blobrt after main returns, on the device named in
// argv[1]. The object is made before main and before any plugin is loaded, so its
// destructor runs after the plugins' libraries registered their own teardown
// (device/exit_guard.hpp). It computes on a blob made in main, on a new blob, and on the
// host device; each step prints its result or its error. Exits 0 unless main fails.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/runtime.hpp"

namespace {

void fill(blobrt::Blob<float>& blob, float value) {
  float* data = blob.mutable_cpu_data();
  for (std::int64_t i = 0; i < blob.count(); ++i) data[i] = value;
  blob.mutable_gpu_data();  // the head moves to the device: the math below runs there
}

float fresh_asum() {
  blobrt::Blob<float> fresh(std::vector<int>{1000});
  fill(fresh, 0.5f);
  fresh.scale_data(3.0f);
  return fresh.asum_data();
}

template <typename Step>
void report(const char* name, Step step) {
  try {
    std::printf("at-exit %s=%g\n", name, static_cast<double>(step()));
  } catch (const std::exception& e) {
    std::printf("at-exit %s error: %s\n", name, e.what());
  }
  std::fflush(stdout);
}

struct UsesBlobsAtExit {
  blobrt::Blob<float> kept;  // no memory yet: making it loads nothing

  ~UsesBlobsAtExit() {
    report("kept", [this] { return kept.asum_data(); });
    report("fresh", fresh_asum);
    report("host", [] {
      blobrt::select_backend("host");
      return fresh_asum();
    });
  }  // `kept` is freed here, on its own device
};

UsesBlobsAtExit at_exit_user;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
    return 2;
  }
  try {
    blobrt::select_backend(argv[1]);
    at_exit_user.kept.Reshape(std::vector<int>{4096});
    fill(at_exit_user.kept, 1.0f);
    std::printf("main device=%s asum=%g\n", blobrt::current_device_id().c_str(),
                static_cast<double>(at_exit_user.kept.asum_data()));
  } catch (const std::exception& e) {
    std::printf("main error: %s\n", e.what());
    return 3;
  }
  return 0;
}
