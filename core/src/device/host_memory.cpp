#include "host_memory.hpp"

#include "blobrt/error.hpp"
#include "blobrt/plugin_kit_host.hpp"

namespace blobrt::host_memory {

using Memory = plugin_kit::HostMemory;  // the plugin kit's: one allocator for libblobrt and CPU plugins
static_assert(Memory::kAlignment == kAlignment, "host mirrors and buffers share one alignment");

void* allocate(std::size_t bytes) {
  void* pointer = Memory::allocate_bytes(bytes);
  if (!pointer) detail::fail_as<OutOfMemoryError>("host: cannot allocate ", bytes, " bytes (out of memory)");
  return pointer;
}

void release(void* pointer) noexcept { Memory::release(nullptr, pointer); }

void zero(void* pointer, std::size_t bytes) { Memory::memset(nullptr, pointer, 0, 0, bytes, nullptr); }

}  // namespace blobrt::host_memory
