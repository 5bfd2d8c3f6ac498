// caffe/syncedmem.hpp for Caffe's own sources built on blobrt: caffe::SyncedMemory,
// CaffeMallocHost and CaffeFreeHost are <blobrt/caffe_compat.hpp>'s (installed by
// blobrt-caffe; docs/caffe-on-blobrt.md).
#ifndef CAFFE_SYNCEDMEM_HPP_
#define CAFFE_SYNCEDMEM_HPP_

#include <cstdlib>

#include "caffe/common.hpp"

#endif  // CAFFE_SYNCEDMEM_HPP_
