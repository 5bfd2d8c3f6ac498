// What `blobrt info` shows of libblobrt-dist (the MPI library, the NCCL part, the engine
// of each device), behind one C entry point: the `blobrt` command loads libblobrt-dist at
// run time where it is installed, so neither the command nor libblobrt needs MPI.
#include <string>

#include "blobrt/dist/communicator.hpp"
#include "json_out.hpp"

namespace {

std::string text() {
  using namespace blobrt::dist;
  std::string s = "\nlibblobrt-dist:\n  MPI: " + mpi_library_version() + "\n";
  const NcclPartReport nccl = nccl_part_report();
  s += "  NCCL part: " + (nccl.loaded ? nccl.version + " (" + nccl.path + ")" : "not loaded: " + nccl.reason) + "\n";
  for (const EngineReport& e : engine_reports()) s += "  " + e.device + ": " + e.engine + " (" + e.details + ")\n";
  return s;
}

std::string json() {
  using namespace blobrt::dist;
  using blobrt::tools::string_or_null;
  const NcclPartReport nccl = nccl_part_report();
  blobrt::tools::json engines = blobrt::tools::json::array();
  for (const EngineReport& e : engine_reports()) {
    engines.push_back({{"device", e.device}, {"engine", e.engine}, {"details", string_or_null(e.details)}});
  }
  const blobrt::tools::json out = {
      {"mpi", mpi_library_version()},
      {"nccl_part",
       {{"loaded", nccl.loaded},
        {"path", string_or_null(nccl.path)},
        {"version", string_or_null(nccl.version)},
        {"reason", string_or_null(nccl.reason)}}},
      {"engines", engines}};
  return blobrt::tools::dump_json(out, -1);
}

}  // namespace

// The text block (json == 0) or a JSON object (json != 0); valid until the next call on
// the same thread. Never throws: a failure is described in the text.
extern "C" __attribute__((visibility("default"))) const char* blobrt_dist_describe(int as_json) {
  static thread_local std::string answer;
  try {
    answer = as_json ? json() : text();
  } catch (const std::exception& e) {
    answer = as_json ? blobrt::tools::dump_json({{"error", e.what()}}, -1)
                     : std::string("\nlibblobrt-dist: ") + e.what() + "\n";
  }
  return answer.c_str();
}
