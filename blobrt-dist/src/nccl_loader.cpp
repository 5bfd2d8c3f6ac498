#include "nccl_loader.hpp"

#include <boost/dll/shared_library.hpp>
#include <boost/filesystem/operations.hpp>
#include <cstdlib>
#include <exception>
#include <memory>

#include "blobrt/environment.hpp"
#include "blobrt_dist_config.h"

namespace blobrt::dist {
namespace {

NcclPart load() {
  NcclPart part;
  // Names a library to load: ignored in a setuid/setgid process, as every blobrt variable.
  const std::string named = blobrt::environment::get("BLOBRT_DIST_NCCL").value_or("");
  part.path = !named.empty() ? named : BLOBRT_DIST_NCCL_PATH;
  boost::system::error_code ec;
  if (!boost::filesystem::exists(part.path, ec)) {
    part.reason = part.path + " is not installed (GPU nodes get it with the `cuda` install tag; "
                  "BLOBRT_DIST_NCCL names another)";
    return part;
  }
  try {
    // NCCL reads its own variables with getenv (NCCL_NET_PLUGIN names a library to load):
    // in a setuid/setgid process they are removed first (blobrt/environment.hpp).
    blobrt::environment::scrub_for_loaded_code();
    // Never unloaded: see the header.
    static auto* library = new boost::dll::shared_library();
    library->load(part.path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    if (!library->has(BLOBRT_DIST_NCCL_ENTRY_SYMBOL)) {
      part.reason = part.path + " has no " BLOBRT_DIST_NCCL_ENTRY_SYMBOL;
      return part;
    }
    auto entry = library->get<const blobrt_dist_nccl_v1*()>(BLOBRT_DIST_NCCL_ENTRY_SYMBOL);
    const blobrt_dist_nccl_v1* table = entry();
    if (!table || table->struct_size < sizeof(blobrt_dist_nccl_v1)) {
      part.reason = part.path + ": table too small for this libblobrt-dist";
      return part;
    }
    char text[256] = {};
    if (table->version(text, sizeof text) != 0) {
      part.reason = part.path + ": ncclGetVersion failed";
      return part;
    }
    part.version = text;
    part.table = table;
  } catch (const std::exception& e) {
    part.reason = "cannot load " + part.path + ": " + e.what();
  }
  return part;
}

}  // namespace

const NcclPart& nccl_part() {
  static const NcclPart* part = new NcclPart(load());
  return *part;
}

}  // namespace blobrt::dist
