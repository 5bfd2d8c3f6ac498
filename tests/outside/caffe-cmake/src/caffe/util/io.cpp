// Stands for a Caffe fork's own src/caffe/util/io.cpp, which a build on blobrt keeps.
#include "caffe/util/io.hpp"

namespace caffe {

std::string ForkOnlyLabelName(int label) { return "fork-label-" + std::to_string(label); }

}  // namespace caffe
