// `blobrt info --caffe LIBCAFFE` (caffe_layers.cpp).
#ifndef BLOBRT_CLI_CAFFE_LAYERS_HPP
#define BLOBRT_CLI_CAFFE_LAYERS_HPP

#include <string>

namespace blobrt::tools {

// The "Caffe layers:" section for the Caffe library at `library` (one saying so where it is
// not a portable build); throws blobrt::Error naming it where it cannot be loaded.
std::string caffe_layers_text(const std::string& library);

}  // namespace blobrt::tools

#endif  // BLOBRT_CLI_CAFFE_LAYERS_HPP
