#include "transfer_counters.hpp"

#include <atomic>
#include <cstdint>

#include "blobrt/transfer_counters.hpp"

namespace blobrt {
namespace {
std::atomic<std::uint64_t> host_to_device{0};
std::atomic<std::uint64_t> device_to_host{0};
}  // namespace

namespace detail {
void count_host_to_device(std::size_t bytes) noexcept {
  host_to_device.fetch_add(bytes, std::memory_order_relaxed);
}
void count_device_to_host(std::size_t bytes) noexcept {
  device_to_host.fetch_add(bytes, std::memory_order_relaxed);
}
}  // namespace detail

TransferCounters transfer_counters() {
  return {host_to_device.load(std::memory_order_relaxed),
          device_to_host.load(std::memory_order_relaxed)};
}

void reset_transfer_counters() {
  host_to_device.store(0, std::memory_order_relaxed);
  device_to_host.store(0, std::memory_order_relaxed);
}

}  // namespace blobrt
