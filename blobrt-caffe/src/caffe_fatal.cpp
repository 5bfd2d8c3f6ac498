#include "caffe_fatal.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <typeinfo>

#include <glog/logging.h>

#include <blobrt/error.hpp>
#include <blobrt/log.hpp>

namespace blobrt_caffe {
namespace {

std::string demangled(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

[[noreturn]] void end_as_check_does() {
  const std::exception_ptr error = std::current_exception();
  if (!error) {
    LOG(FATAL) << "std::terminate called without an active exception";
  }
  LOG(FATAL) << "uncaught exception: " << describe_exception(error);
  std::abort();  // LOG(FATAL) does not return; this keeps [[noreturn]] honest.
}

}  // namespace

std::string describe_exception(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const blobrt::Error& e) {
    return std::string("blobrt::Error: ") + e.what();
  } catch (const std::exception& e) {
    return demangled(typeid(e).name()) + ": " + e.what();
  } catch (...) {
    const std::type_info* type = abi::__cxa_current_exception_type();
    return "an exception of type " + (type ? demangled(type->name()) : std::string("unknown"));
  }
}

void install_fatal_terminate_handler() { std::set_terminate(end_as_check_does); }

void send_blobrt_log_to_glog() {
  blobrt::set_log_handler([](blobrt::LogLevel level, const std::string& message) {
    switch (level) {
      case blobrt::LogLevel::kError:
        LOG(ERROR) << "blobrt: " << message;
        break;
      case blobrt::LogLevel::kWarn:
        LOG(WARNING) << "blobrt: " << message;
        break;
      default:
        LOG(INFO) << "blobrt: " << message;
        break;
    }
  });
}

}  // namespace blobrt_caffe
