#include "scale_out_info.hpp"

#include <sstream>

#include "json_writer.hpp"
#ifdef BLOBRT_HAVE_DIST
#include "blobrt/dist/communicator.hpp"
#endif

namespace blobrt::tools {

#ifdef BLOBRT_HAVE_DIST
std::string scale_out_text() {
  std::ostringstream s;
  s << "\nScale-out (libblobrt-dist):\n  MPI: " << dist::mpi_library_version() << "\n";
  const dist::NcclPartReport nccl = dist::nccl_part_report();
  s << "  NCCL part: " << (nccl.loaded ? nccl.version + " (" + nccl.path + ")" : "not loaded: " + nccl.reason) << "\n";
  for (const dist::EngineReport& e : dist::engine_reports()) {
    s << "  " << e.device << ": " << e.engine << " (" << e.details << ")\n";
  }
  return s.str();
}

std::string scale_out_json() {
  std::ostringstream s;
  const dist::NcclPartReport nccl = dist::nccl_part_report();
  s << "{\"mpi\": " << json_string(dist::mpi_library_version()) << ", \"nccl_part\": {\"loaded\": "
    << (nccl.loaded ? "true" : "false") << ", \"path\": " << json_string(nccl.path)
    << ", \"version\": " << json_string(nccl.version) << ", \"reason\": " << json_string(nccl.reason)
    << "}, \"engines\": [";
  bool first = true;
  for (const dist::EngineReport& e : dist::engine_reports()) {
    s << (first ? "" : ", ") << "{\"device\": " << json_string(e.device) << ", \"engine\": " << json_string(e.engine)
      << ", \"details\": " << json_string(e.details) << "}";
    first = false;
  }
  s << "]}";
  return s.str();
}
#else
std::string scale_out_text() {
  return "\nScale-out: not built (libblobrt-dist needs Open MPI at build time: meson option mpi)\n";
}
std::string scale_out_json() { return "null"; }
#endif

}  // namespace blobrt::tools
