// fork() detection, once for libblobrt and the plugins: how many fork()s lie between this
// process and the one this shared object was loaded in (0 there, incremented in every
// fork()ed child by a pthread_atfork handler registered at load). libblobrt's fork guard
// compares it with a device's (device/fork_guard.hpp); the thread team runs every split on
// the calling thread in a child (parallel.hpp), which has no helper threads.
//
// Header-only: each shared object that includes it keeps (and registers) its own counter
// (hidden, so a plugin never shares libblobrt's).
#ifndef BLOBRT_KERNELS_FORK_GENERATION_HPP
#define BLOBRT_KERNELS_FORK_GENERATION_HPP

#include <pthread.h>

#include <atomic>
#include <cstdint>

namespace blobrt_kernels {

__attribute__((visibility("hidden"))) inline std::atomic<std::uint64_t>& fork_generation_counter() {
  static std::atomic<std::uint64_t> counter{0};
  return counter;
}
inline const bool fork_generation_registered = (::pthread_atfork(nullptr, nullptr, [] {
  fork_generation_counter().fetch_add(1, std::memory_order_relaxed);
}), true);

// One relaxed load: cheap enough for every device call.
inline std::uint64_t fork_generation() noexcept { return fork_generation_counter().load(std::memory_order_relaxed); }
inline bool in_forked_child() noexcept { return fork_generation() != 0; }

}  // namespace blobrt_kernels

#endif
