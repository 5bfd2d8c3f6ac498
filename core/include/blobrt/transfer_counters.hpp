// The bytes SyncedMemory copied between the host mirror and a device (and device to
// device), counted by the memory layer (core/src/memory/) since start or the last reset.
// Host-memory devices never add to it. runtime.hpp includes this header.
#ifndef BLOBRT_TRANSFER_COUNTERS_HPP
#define BLOBRT_TRANSFER_COUNTERS_HPP

#include <cstdint>

namespace blobrt {

struct TransferCounters {
  std::uint64_t host_to_device = 0;
  std::uint64_t device_to_host = 0;
};
TransferCounters transfer_counters();
void reset_transfer_counters();

}  // namespace blobrt

#endif  // BLOBRT_TRANSFER_COUNTERS_HPP
