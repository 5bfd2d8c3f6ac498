// Blob math in a process that cannot start a single thread: RLIMIT_NPROC 1, as an
// unprivileged user (root drops to nobody, as limits do not bind root). For
// test_thread_limit.cpp: it must print the right sum, not die of libgomp's "Thread
// creation failed".
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/runtime.hpp"

int main() {
  struct rlimit one = {1, 1};
  if (::setrlimit(RLIMIT_NPROC, &one) != 0) return 2;
  if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 2;
  pthread_t thread;
  bool blocked = ::pthread_create(&thread, nullptr, [](void*) -> void* { return nullptr; }, nullptr) != 0;
  if (!blocked) ::pthread_join(thread, nullptr);
  std::printf("threads_blocked=%d\n", blocked ? 1 : 0);
  try {
    const int n = 1 << 22;
    blobrt::Blob<float> blob(std::vector<int>{n});
    float* data = blob.mutable_cpu_data();
    float* diff = blob.mutable_cpu_diff();
    for (int i = 0; i < n; ++i) {
      data[i] = 3;
      diff[i] = 1;
    }
    blob.mutable_gpu_data();
    blob.Update();
    std::printf("device=%s asum=%.0f\n", blobrt::active_backend().c_str(), static_cast<double>(blob.asum_data()));
    return blob.asum_data() == 2.0f * n ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("error=%s\n", e.what());
    return 3;
  }
}
