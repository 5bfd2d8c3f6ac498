// Stands for a Caffe fork's own include/caffe/util/io.hpp, with a function BVLC Caffe's lacks
// (as SSD's MapLabelToName): blobrt-caffe's io.hpp, found first, must hand over to this one.
#ifndef CAFFE_UTIL_IO_H_
#define CAFFE_UTIL_IO_H_

#include <string>

#include "caffe/common.hpp"

namespace caffe {

std::string ForkOnlyLabelName(int label);

}  // namespace caffe

#endif  // CAFFE_UTIL_IO_H_
