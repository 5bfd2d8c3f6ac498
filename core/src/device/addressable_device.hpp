// A device whose buffer handles are not addresses (an OpenCL cl_mem), seen through handles
// that are: each buffer gets a range of a reserved, inaccessible stretch of the address
// space, so `handle + n` (what Caffe's GPU code does to gpu_data()) is a handle into the
// same buffer at byte n (inside blobrt: the description still says addressable_handles
// false, so DLPack export and NCCL, which hand handles to other libraries, refuse them).
// Every operation finds the buffer and the byte offset a handle
// stands for and calls the device with them; a handle inside no live buffer is a
// blobrt::Error naming it, never a call with a wild cl_mem. The runtime opens such devices
// this way when asked (request_addressable_handles, BLOBRT_ADDRESSABLE_HANDLES=1):
// blobrt-caffe's portable build asks (docs/caffe-on-blobrt.md).
#ifndef BLOBRT_ADDRESSABLE_DEVICE_HPP
#define BLOBRT_ADDRESSABLE_DEVICE_HPP

#include <memory>

#include "blobrt/device.hpp"

namespace blobrt {

// `device` behind addressable handles; `device` itself if its handles are addresses
// already. `range_bytes`: the address space its handles get (0: four times its memory,
// within a quarter of the process's RLIMIT_AS).
std::shared_ptr<Device> make_addressable(std::shared_ptr<Device> device, std::size_t range_bytes = 0);

}  // namespace blobrt

#endif
