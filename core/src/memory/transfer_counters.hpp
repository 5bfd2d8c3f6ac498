// Counting the bytes SyncedMemory copies between mirrors (blobrt/transfer_counters.hpp).
#ifndef BLOBRT_MEMORY_TRANSFER_COUNTERS_HPP
#define BLOBRT_MEMORY_TRANSFER_COUNTERS_HPP

#include <cstddef>

namespace blobrt::detail {

void count_host_to_device(std::size_t bytes) noexcept;
void count_device_to_host(std::size_t bytes) noexcept;

}  // namespace blobrt::detail

#endif
