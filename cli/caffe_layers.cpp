// `blobrt info --caffe LIBCAFFE`: a portable Caffe build's layers on this node's devices
// (docs/caffe-on-blobrt.md, "Checking a node"). The Caffe library is loaded with Boost.DLL
// (its static initialisers note its layer classes and where its Caffe-layers plugins are)
// and asked, through the libblobrt-caffe it links, for blobrt_caffe_layer_report: the
// command itself links no Caffe and no libblobrt-caffe.
#include "caffe_layers.hpp"

#include <boost/dll/shared_library.hpp>

#include "blobrt/error.hpp"

namespace blobrt::tools {

std::string caffe_layers_text(const std::string& library) {
  // Kept loaded: the plugins it loads stay registered with it until the program ends.
  static boost::dll::shared_library caffe;
  try {
    caffe.load(library, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_global);
  } catch (const std::exception& error) {
    throw blobrt::Error("--caffe " + library + ": cannot be loaded: " + error.what());
  }
  // dlsym on the library's handle searches what it links too (libblobrt-caffe, which every
  // portable build links: its GPU methods dispatch there).
  if (!caffe.has("blobrt_caffe_layer_report")) {
    return "Caffe layers:\n  " + library +
           " is not a portable Caffe build (it does not link libblobrt-caffe): in GPU mode its layers run their "
           "CPU code, or their own CUDA code in a CUDA build\n";
  }
  return caffe.get<const char*()>("blobrt_caffe_layer_report")();
}

}  // namespace blobrt::tools
