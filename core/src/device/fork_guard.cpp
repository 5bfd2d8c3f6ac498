#include "fork_guard.hpp"

#include <pthread.h>

namespace blobrt::fork_guard {

std::atomic<std::uint64_t> generation_counter{0};

namespace {
const bool registered = [] {
  ::pthread_atfork(nullptr, nullptr, [] { generation_counter.fetch_add(1, std::memory_order_relaxed); });
  return true;
}();
}  // namespace

}  // namespace blobrt::fork_guard
