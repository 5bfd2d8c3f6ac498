// caffe::GlobalInit as a Caffe program meets it (caffe_global_init_test.py runs this):
//   flags ARGS...  GlobalInit parses --iterations (a gflags flag, as tools/caffe.cpp defines
//                  its own) and prints its value and what is left of argv
//   throw          a blobrt check fails inside "Caffe's code" and nothing catches it: the
//                  program must end as a failed CHECK does (LOG(FATAL), abort), not in a bare
//                  std::terminate
//   log            blobrt logs a warning: it must come out through glog
#include <cstring>
#include <iostream>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"

#include <blobrt/log.hpp>

DEFINE_int32(iterations, 50, "a flag as tools/caffe.cpp defines them");

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  caffe::GlobalInit(&argc, &argv);
  if (mode == "flags") {
    std::cout << "iterations=" << FLAGS_iterations << " argc=" << argc;
    for (int i = 1; i < argc; ++i) std::cout << " " << argv[i];
    std::cout << std::endl;
    return 0;
  }
  if (mode == "throw") {
    caffe::Blob<float> blob(2, 3, 4, 5);
    std::cout << blob.data_at(9, 0, 0, 0) << std::endl;  // out of range: blobrt::Error
    return 0;
  }
  if (mode == "log") {
    blobrt::set_log_level(blobrt::LogLevel::kWarn);  // whatever BLOBRT_LOG the test runs under
    blobrt::log_write(blobrt::LogLevel::kWarn, "a warning from blobrt");
    return 0;
  }
  std::cerr << "usage: caffe_global_init_probe flags|throw|log\n";
  return 2;
}
