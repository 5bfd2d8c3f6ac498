// Finds and loads libblobrt-dist-nccl.so (blobrt-dist/nccl): BLOBRT_DIST_NCCL if set, else the
// installed one. Never throws: a missing part is a reason, and the engine falls back.
#ifndef BLOBRT_DIST_NCCL_LOADER_HPP
#define BLOBRT_DIST_NCCL_LOADER_HPP

#include <string>

#include "dist_nccl_abi.h"

namespace blobrt::dist {

struct NcclPart {
  const blobrt_dist_nccl_v1* table = nullptr;  // null when not loaded
  std::string path;
  std::string version;  // "NCCL 2.x.y (...)"
  std::string reason;   // why not loaded
};

// Loaded once per process and kept (NCCL may not be unloaded while communicators live).
const NcclPart& nccl_part();

}  // namespace blobrt::dist

#endif
