// Ordinary host memory for the host mirror and the host device: the plugin kit's
// (blobrt/plugin_kit_host.hpp, HostMemory), 64-byte aligned so the vectorised kernels and
// BLAS get full cache lines, on huge pages when large; failure reported as blobrt::Error.
#ifndef BLOBRT_HOST_MEMORY_HPP
#define BLOBRT_HOST_MEMORY_HPP

#include <cstddef>

namespace blobrt::host_memory {

constexpr std::size_t kAlignment = 64;

// Never returns null: throws blobrt::Error naming the bytes. Zero bytes gives a valid block.
void* allocate(std::size_t bytes);
void release(void* pointer) noexcept;
// memset to zero, split across threads for large blocks (first touch is bandwidth-bound).
void zero(void* pointer, std::size_t bytes);

}  // namespace blobrt::host_memory

#endif  // BLOBRT_HOST_MEMORY_HPP
