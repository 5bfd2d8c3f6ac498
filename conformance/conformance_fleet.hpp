// `mpirun -np N blobrt-conformance --fleet [--json] [--expect BACKEND] [--gtest_filter=PATTERN]`:
// every rank runs
// the conformance cases on every device it can open (and reports the plugins it found but
// cannot use) and says which backend jobs on it get (blobrt's own selection under that
// rank's environment: BLOBRT_BACKEND, else auto); rank 0 prints one table node x backend x
// device, and every rank exits non-zero if any check failed anywhere, if a rank's jobs
// cannot get a backend (a BLOBRT_BACKEND that cannot be used), or if they would not get
// the one --expect names (docs/dist.md, "Fleet conformance"). --gtest_filter picks cases
// as it does in GoogleTest mode, by the same test names.
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
  std::string jobs;    // the backend jobs on this rank get ("blis:0"), or "error"
};

// What jobs on this rank get: blobrt's selection under this rank's environment.
struct JobBackend {
  std::string spec;       // BLOBRT_BACKEND's value, "auto" when unset
  std::string requested;  // "BLOBRT_BACKEND=cuda", or "BLOBRT_BACKEND unset: auto"
  std::string id;         // "cuda:0"; empty when the selection failed
  std::string error;      // the selection's error
};
JobBackend job_backend();
// Whether `id` ("cuda:1") is what `expect` names: a backend ("cuda") or a device ("cuda:1").
bool expected(const std::string& id, const std::string& expect);

// Whether GoogleTest's --gtest_filter value `filter` ("POS1:POS2-NEG1:NEG2", '*' and '?'
// wildcards; "*": every test) selects the test named `name`, as GoogleTest would.
bool filter_selects(const std::string& filter, const std::string& name);
// The rows of this process (runs the checks). `expect`: --expect's value ("" for none);
// `usage_error`: what was wrong with the command line, reported as a failed row (and then
// no case runs); `filter`:
// --gtest_filter's value ("*" for every case). A device with no case selected is not opened.
std::vector<Row> local_rows(const std::string& node, int rank, const std::string& expect = "",
                            const std::string& usage_error = "", const std::string& filter = "*");
std::string serialize(const std::vector<Row>& rows);
std::vector<Row> deserialize(const std::string& text);
// `filter`: rank 0's --gtest_filter ("*" for every case), said under the table and in the JSON.
std::string table(const std::vector<Row>& rows, const std::string& filter = "*");
std::string json(const std::vector<Row>& rows, const std::string& filter = "*");

// The whole mode: MPI initialised here. Returns the exit status.
int run(int argc, char** argv);

}  // namespace blobrt::fleet

#endif
