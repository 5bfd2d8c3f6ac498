// caffe/util/math_functions.hpp for Caffe's own sources built on blobrt: both halves
// (caffe_cpu_* on host pointers, caffe_gpu_* on the active backend's handles) are
// <blobrt/caffe/math_functions.hpp>'s, with Caffe's signatures (installed by blobrt-caffe;
// docs/caffe-on-blobrt.md).
#ifndef CAFFE_UTIL_MATH_FUNCTIONS_H_
#define CAFFE_UTIL_MATH_FUNCTIONS_H_

#include <stdint.h>
#include <cmath>

#include "glog/logging.h"

#include "caffe/common.hpp"
#include "caffe/util/device_alternate.hpp"
#include "caffe/util/mkl_alternate.hpp"

#endif  // CAFFE_UTIL_MATH_FUNCTIONS_H_
