// What every Device shares: the default of the optional view().
#include "blobrt/device.hpp"

#include <cstdint>

#include "blobrt/error.hpp"

namespace blobrt {

DeviceBuffer Device::view(DeviceBuffer buffer, std::size_t offset, std::size_t bytes) {
  const DeviceDescription& d = description();
  if (!d.host_memory) {
    detail::fail_as<UnsupportedError>(d.id(), " (", d.name, "): its plugin offers no views of a buffer (",
                                      bytes, " bytes at offset ", offset, ")");
  }
  if (d.view_alignment && offset % d.view_alignment) {
    detail::fail(d.id(), ": view offset ", offset, " is not a multiple of the device's view alignment ",
                 d.view_alignment);
  }
  // Handles of this device are host pointers: a view is the pointer at the offset.
  return static_cast<char*>(buffer) + offset;
}

}  // namespace blobrt
