// The numerical checks every Device must pass, shared by the GoogleTest conformance
// suite (tests/, installed as blobrt-conformance) and `blobrt selftest`.
//
// Each check runs one operation on the device under test and compares with a plain
// double-precision loop on the host (not with another Device). Tolerances, with ε the
// machine epsilon of the element type:
//   copies, memset:   exact
//   axpy, scal:       |got − ref| ≤ 2ε·(|α·x| + |y|) per element
//   dot, asum:        |got − ref| ≤ ε·(8 + √n)·Σ|terms|
#ifndef BLOBRT_CONFORMANCE_CHECKS_HPP
#define BLOBRT_CONFORMANCE_CHECKS_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "blobrt/device.hpp"

namespace blobrt::conformance {

enum class Operation { kMemset, kCopyRoundTrip, kCopyDevice, kAxpy, kDot, kAsum, kScal };
const char* to_string(Operation op);
std::vector<Operation> all_operations();

enum class Precision { kFloat, kDouble };
const char* to_string(Precision p);

struct Case {
  Operation op;
  Precision precision;
  std::int64_t n;
  std::int64_t offset;  // elements before the data in every buffer
  std::string name() const;
};

struct Result {
  bool passed = false;
  bool skipped = false;  // e.g. double on a device without fp64
  std::string detail;    // what differed, or why skipped
};

// The standard cases: every operation × precision × n ∈ {0, 1, 7, 1000, 65537, 2^20+3}
// × offset ∈ {0, 5}.
std::vector<Case> standard_cases();

// Runs one case; never throws (a blobrt::Error from the device is a failure with its message).
Result run_case(Device& device, const Case& c);

}  // namespace blobrt::conformance

#endif
