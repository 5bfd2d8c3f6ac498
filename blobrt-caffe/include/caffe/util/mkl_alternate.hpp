// caffe/util/mkl_alternate.hpp for Caffe's own sources built on blobrt. Caffe's defines
// MKL's vector functions over CBLAS for its math_functions.cpp, which blobrt replaces;
// the element-wise functions layer code calls (caffe_add, caffe_sqr, caffe_cpu_sign, ...)
// are <blobrt/caffe/math_functions.hpp>'s, on the host device's kernels. No <cblas.h>:
// CBLAS_TRANSPOSE and CblasNoTrans/CblasTrans come from there too (installed by
// blobrt-caffe; docs/caffe-on-blobrt.md).
#ifndef CAFFE_UTIL_MKL_ALTERNATE_H_
#define CAFFE_UTIL_MKL_ALTERNATE_H_

#include <math.h>

#include "caffe/common.hpp"

#endif  // CAFFE_UTIL_MKL_ALTERNATE_H_
