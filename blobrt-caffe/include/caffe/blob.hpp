// caffe/blob.hpp for Caffe's own sources built on blobrt: caffe::Blob is
// <blobrt/caffe_compat.hpp>'s (installed by blobrt-caffe; docs/caffe-on-blobrt.md).
#ifndef CAFFE_BLOB_HPP_
#define CAFFE_BLOB_HPP_

#include <algorithm>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"
#include "caffe/syncedmem.hpp"

const int kMaxBlobAxes = 32;

#endif  // CAFFE_BLOB_HPP_
