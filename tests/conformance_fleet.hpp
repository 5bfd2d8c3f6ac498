// `mpirun -np N blobrt-conformance --fleet [--json]`: every rank runs the conformance
// cases on every device it can open (and reports the plugins it found but cannot use),
// rank 0 prints one table node x backend x device, and every rank exits non-zero if any
// check failed anywhere (docs/scale-out.md, "Fleet conformance").
#ifndef BLOBRT_TESTS_CONFORMANCE_FLEET_HPP
#define BLOBRT_TESTS_CONFORMANCE_FLEET_HPP

#include <string>
#include <vector>

namespace blobrt::fleet {

// One line of the table: what one rank found for one device or unusable plugin.
struct Row {
  std::string node;
  int rank = 0;
  std::string backend;
  std::string device;  // "blis:0", or "-" for a plugin without a usable device
  std::string name;    // the device's name, or the plugin's manifest
  std::string status;  // "passed", "failed", "skipped"
  int passed = 0, failed = 0, skipped = 0;
  std::string detail;  // first failures, or why skipped
};

// The rows of this process (runs the checks).
std::vector<Row> local_rows(const std::string& node, int rank);
std::string serialize(const std::vector<Row>& rows);
std::vector<Row> deserialize(const std::string& text);
std::string table(const std::vector<Row>& rows);
std::string json(const std::vector<Row>& rows);

// The whole mode: MPI initialised here. Returns the exit status.
int run(int argc, char** argv);

}  // namespace blobrt::fleet

#endif
