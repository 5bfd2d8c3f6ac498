// What `blobrt info` shows of libblobrt-dist (the MPI library, the NCCL part, the engine
// of each device), behind one C entry point: the `blobrt` command loads libblobrt-dist at
// run time where it is installed, so neither the command nor libblobrt needs MPI.
#include <string>

#include "blobrt/dist/communicator.hpp"
#include "json_writer.hpp"

namespace {

std::string text() {
  using namespace blobrt::dist;
  std::string s = "\nScale-out (libblobrt-dist):\n  MPI: " + mpi_library_version() + "\n";
  const NcclPartReport nccl = nccl_part_report();
  s += "  NCCL part: " + (nccl.loaded ? nccl.version + " (" + nccl.path + ")" : "not loaded: " + nccl.reason) + "\n";
  for (const EngineReport& e : engine_reports()) s += "  " + e.device + ": " + e.engine + " (" + e.details + ")\n";
  return s;
}

std::string json() {
  using namespace blobrt::dist;
  using blobrt::tools::json_string;
  const NcclPartReport nccl = nccl_part_report();
  std::string s = "{\"mpi\": " + json_string(mpi_library_version()) + ", \"nccl_part\": {\"loaded\": " +
                  (nccl.loaded ? "true" : "false") + ", \"path\": " + json_string(nccl.path) +
                  ", \"version\": " + json_string(nccl.version) + ", \"reason\": " + json_string(nccl.reason) +
                  "}, \"engines\": [";
  bool first = true;
  for (const EngineReport& e : engine_reports()) {
    s += std::string(first ? "" : ", ") + "{\"device\": " + json_string(e.device) +
         ", \"engine\": " + json_string(e.engine) + ", \"details\": " + json_string(e.details) + "}";
    first = false;
  }
  return s + "]}";
}

}  // namespace

// The text block (json == 0) or a JSON object (json != 0); valid until the next call on
// the same thread. Never throws: a failure is described in the text.
extern "C" __attribute__((visibility("default"))) const char* blobrt_dist_describe(int as_json) {
  static thread_local std::string answer;
  try {
    answer = as_json ? json() : text();
  } catch (const std::exception& e) {
    answer = as_json ? "{\"error\": " + blobrt::tools::json_string(e.what()) + "}"
                     : std::string("\nScale-out (libblobrt-dist): ") + e.what() + "\n";
  }
  return answer.c_str();
}
