// Caffe's per-thread context (blobrt/caffe/common.hpp's Caffe::Get), defined here, in
// libblobrt, rather than inline in the header: an inline function's thread_local has a
// copy in every library that calls it, and a library loaded library-local (pycaffe's
// _caffe.so, libcaffe under it) that loads another (a Caffe-layers plugin) would leave the
// plugin's copy unseen by libcaffe: it would say CPU mode while Caffe said GPU.
#include "blobrt/caffe/common.hpp"

namespace caffe {

Caffe& Caffe::Get() {
  thread_local Caffe instance;
  return instance;
}

}  // namespace caffe
