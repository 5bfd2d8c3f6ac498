#include "host_memory.hpp"

#include <cstdlib>
#include <cstring>

#include "blobrt/error.hpp"
#include "blobrt_kernels/huge_pages.hpp"
#include "blobrt_kernels/level1.hpp"

namespace blobrt::host_memory {

void* allocate(std::size_t bytes) {
  void* pointer = blobrt_kernels::allocate_host(bytes, kAlignment);
  if (!pointer) detail::fail_as<OutOfMemoryError>("host: cannot allocate ", bytes, " bytes (out of memory)");
  return pointer;
}

void release(void* pointer) noexcept { std::free(pointer); }

void zero(void* pointer, std::size_t bytes) { blobrt_kernels::fill_bytes(pointer, 0, bytes); }

}  // namespace blobrt::host_memory
