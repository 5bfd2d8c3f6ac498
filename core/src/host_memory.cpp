#include "host_memory.hpp"

#include <cstdlib>
#include <cstring>

#include "blobrt/error.hpp"
#include "blobrt_kernels/level1.hpp"

namespace blobrt::host_memory {

void* allocate(std::size_t bytes) {
  // aligned_alloc wants a multiple of the alignment.
  std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  if (rounded < bytes) detail::fail("host: cannot allocate ", bytes, " bytes (size overflow)");
  void* pointer = std::aligned_alloc(kAlignment, rounded);
  if (!pointer) detail::fail("host: cannot allocate ", bytes, " bytes (out of memory)");
  return pointer;
}

void release(void* pointer) noexcept { std::free(pointer); }

void zero(void* pointer, std::size_t bytes) { blobrt_kernels::fill_bytes(pointer, 0, bytes); }

}  // namespace blobrt::host_memory
