// caffe::GlobalInit for Caffe's programs built on blobrt (declared in caffe/common.hpp).
// Caffe's own (common.cpp, which blobrt replaces) parses gflags, starts glog and installs
// glog's failure signal handler. blobrt adds two things a Caffe program otherwise lacks:
//   - blobrt's checks throw blobrt::Error where Caffe's CHECK would have aborted. One that
//     escapes the program would end it in a bare std::terminate ("terminate called after
//     throwing an instance of ..."), with no log line. The terminate handler set here ends
//     it as a failed CHECK does: LOG(FATAL) with the exception's message, then abort.
//   - blobrt's own log lines (which backend was picked, a plugin skipped) go to glog,
//     beside Caffe's, instead of blobrt's separate stderr format.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "caffe/common.hpp"
#include "caffe_fatal.hpp"

namespace caffe {

void GlobalInit(int* pargc, char*** pargv) {
  ::gflags::ParseCommandLineFlags(pargc, pargv, true);
  ::google::InitGoogleLogging(*(pargv)[0]);
  ::google::InstallFailureSignalHandler();
  blobrt_caffe::install_fatal_terminate_handler();
  blobrt_caffe::send_blobrt_log_to_glog();
}

}  // namespace caffe
