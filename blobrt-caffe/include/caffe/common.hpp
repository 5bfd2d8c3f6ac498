// caffe/common.hpp for Caffe's own sources built on blobrt (installed by blobrt-caffe;
// docs/caffe-on-blobrt.md). It stands where Caffe's header does, under Caffe's include
// guard, and gives what Caffe's gives: gflags and glog, device_alternate.hpp, and
// <blobrt/caffe_compat.hpp>'s Caffe class, RNG and macros. GlobalInit is libblobrt-caffe's.
#ifndef CAFFE_COMMON_HPP_
#define CAFFE_COMMON_HPP_

// Tells the compat header that Caffe's own util/io.hpp API is in use (this layer's
// io.hpp), so it does not put blobrt's proto helpers into namespace caffe beside it.
#if defined(BLOBRT_CAFFE_COMPAT_HPP) && !defined(BLOBRT_CAFFE_HEADERS)
#error "<blobrt/caffe_compat.hpp> was included before caffe/common.hpp: include Caffe's headers first (the compat header alone makes GlobalInit an empty function)"
#endif
#ifndef BLOBRT_CAFFE_HEADERS
#define BLOBRT_CAFFE_HEADERS 1
#endif

// caffe::shared_ptr is boost::shared_ptr, as in Caffe; boost::dynamic_pointer_cast & co.
// also take std::shared_ptr (Boost's pointer_cast.hpp), which blobrt's own API returns.
#include <boost/pointer_cast.hpp>
#include <boost/shared_ptr.hpp>
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "caffe/util/device_alternate.hpp"
#include <blobrt/caffe_compat.hpp>

// As Caffe's common.hpp: gflags 2.1 moved its namespace from google to gflags.
#ifndef GFLAGS_GFLAGS_H_
namespace gflags = google;
#endif

namespace caffe {

// Caffe's: parses the command line's flags (gflags), starts glog with argv[0], installs
// glog's failure signal handler; and, for blobrt, makes an exception that escapes the
// program (a blobrt::Error from a check inside Caffe's code) end it as CHECK does (the
// message on stderr through LOG(FATAL), non-zero exit), and sends blobrt's own log lines
// to glog. Defined in libblobrt-caffe (pkg-config blobrt-caffe, CMake blobrt::caffe).
void GlobalInit(int* pargc, char*** pargv);

}  // namespace caffe

#endif  // CAFFE_COMMON_HPP_
