#include "dist_info.hpp"

#include <boost/dll/shared_library.hpp>
#include <memory>

#include "blobrt/runtime.hpp"

namespace blobrt::tools {
namespace {

using Describe = const char* (*)(int);
constexpr const char* kLibrary = "libblobrt-dist.so.1";

// libblobrt-dist's blobrt_dist_describe, or the reason it is not there: looked for beside
// libblobrt (an install in any prefix), then where the dynamic linker looks.
struct DistLibrary {
  std::shared_ptr<boost::dll::shared_library> library;
  Describe describe = nullptr;
  std::string reason;
};

const DistLibrary& dist_library() {
  static const DistLibrary loaded = [] {
    DistLibrary d;
    std::vector<std::string> candidates;
    const std::string self = blobrt::library_path();
    const std::size_t slash = self.rfind('/');
    if (slash != std::string::npos) candidates.push_back(self.substr(0, slash + 1) + kLibrary);
    candidates.push_back(kLibrary);
    for (const std::string& candidate : candidates) {
      try {
        auto library = std::make_shared<boost::dll::shared_library>(
            candidate, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local |
                           (candidate.find('/') == std::string::npos ? boost::dll::load_mode::search_system_folders
                                                                     : boost::dll::load_mode::default_mode));
        if (!library->has("blobrt_dist_describe")) {
          d.reason = candidate + " has no blobrt_dist_describe";
          continue;
        }
        d.describe = library->get<const char*(int)>("blobrt_dist_describe");
        d.library = library;
        return d;
      } catch (const std::exception& e) {
        const std::string what = e.what();
        if (what.find("cannot open shared object file") == std::string::npos) d.reason = candidate + ": " + what;
      }
    }
    if (d.reason.empty()) {
      d.reason = "no " + std::string(kLibrary) + " beside libblobrt or on the dynamic linker's path";
    }
    return d;
  }();
  return loaded;
}

}  // namespace

std::string dist_text() {
  const DistLibrary& d = dist_library();
  if (d.describe) return d.describe(0);
  return "\nlibblobrt-dist: not installed here (" + d.reason + ")\n";
}

std::string dist_json() {
  const DistLibrary& d = dist_library();
  return d.describe ? d.describe(1) : "null";
}

}  // namespace blobrt::tools
