// The two process-wide settings caffe::GlobalInit adds for blobrt (global_init.cpp).
#ifndef BLOBRT_CAFFE_FATAL_HPP
#define BLOBRT_CAFFE_FATAL_HPP

#include <exception>
#include <string>

namespace blobrt_caffe {

// What an escaping exception is, for the fatal line: "blobrt::Error: <message>", the
// type and message of another std::exception, or that it is of an unknown type.
std::string describe_exception(std::exception_ptr error);

// std::set_terminate: an uncaught exception ends the program through LOG(FATAL).
void install_fatal_terminate_handler();

// blobrt::set_log_handler: blobrt's error/warn/info+debug lines to glog's
// ERROR/WARNING/INFO, prefixed "blobrt: ".
void send_blobrt_log_to_glog();

}  // namespace blobrt_caffe

#endif  // BLOBRT_CAFFE_FATAL_HPP
