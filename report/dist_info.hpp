// The "libblobrt-dist" part of `blobrt info`: libblobrt-dist's MPI, its NCCL part, and the
// engine each device here would reduce with (docs/dist.md). libblobrt-dist is loaded
// at run time where it is installed, so `blobrt` itself never needs MPI; without it
// `blobrt info` says so.
#ifndef BLOBRT_TOOLS_DIST_INFO_HPP
#define BLOBRT_TOOLS_DIST_INFO_HPP

#include <string>

namespace blobrt::tools {

std::string dist_text();
std::string dist_json();  // a JSON object, or null

}  // namespace blobrt::tools

#endif
