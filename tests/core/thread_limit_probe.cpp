// Blob math and blobrt's thread team, seen from a process of its own, for
// thread_limit_test.cpp.
//   thread_limit_probe                  RLIMIT_NPROC 1, as an unprivileged user (root
//                                       drops to nobody, as limits do not bind root): it
//                                       must print the right sum, not die for want of a
//                                       thread.
//   thread_limit_probe --count-helpers  no limit: after the same math, prints how many
//                                       helper threads (named blobrt-team) the process
//                                       has, which BLOBRT_NUM_THREADS sets.
#include <dirent.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/runtime.hpp"

namespace {

int count_helpers() {
  int count = 0;
  DIR* tasks = ::opendir("/proc/self/task");
  if (!tasks) return -1;
  while (dirent* entry = ::readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + entry->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    count += name == "blobrt-team";
  }
  ::closedir(tasks);
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  const bool count_mode = argc > 1 && std::strcmp(argv[1], "--count-helpers") == 0;
  if (!count_mode) {
    struct rlimit one = {1, 1};
    if (::setrlimit(RLIMIT_NPROC, &one) != 0) return 2;
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 2;
    pthread_t thread;
    bool blocked = ::pthread_create(&thread, nullptr, [](void*) -> void* { return nullptr; }, nullptr) != 0;
    if (!blocked) ::pthread_join(thread, nullptr);
    std::printf("threads_blocked=%d\n", blocked ? 1 : 0);
  }
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
    std::printf("device=%s asum=%.0f\n", blobrt::current_device_id().c_str(), static_cast<double>(blob.asum_data()));
    if (count_mode) std::printf("helpers=%d\n", count_helpers());
    return blob.asum_data() == 2.0f * n ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("error=%s\n", e.what());
    return 3;
  }
}
