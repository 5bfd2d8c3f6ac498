#include "selftest.hpp"

#include <chrono>
#include <map>

#include "blobrt/runtime.hpp"
#include "conformance_checks.hpp"

namespace blobrt::tools {

bool selftest(const std::string& backend, std::ostream& out) {
  std::shared_ptr<Device> device = backend.empty() ? active_device() : open_device(backend);
  const DeviceDescription& d = device->description();
  out << "selftest of " << d.id() << " (" << d.name << ") against the host reference\n";
  // One line per operation and precision, summarising its cases.
  struct Tally {
    int passed = 0, failed = 0, skipped = 0;
    std::string first_failure;
  };
  std::map<std::string, Tally> tallies;
  std::vector<std::string> order;
  auto start = std::chrono::steady_clock::now();
  for (const conformance::Case& c : conformance::standard_cases()) {
    std::string key = std::string(conformance::to_string(c.op)) + " " + conformance::to_string(c.precision);
    if (!tallies.count(key)) order.push_back(key);
    Tally& t = tallies[key];
    conformance::Result r = conformance::run_case(*device, c);
    if (r.skipped) {
      ++t.skipped;
      if (t.first_failure.empty()) t.first_failure = r.detail;
    } else if (r.passed) {
      ++t.passed;
    } else {
      ++t.failed;
      if (t.first_failure.empty() || t.failed == 1) t.first_failure = c.name() + ": " + r.detail;
    }
  }
  int failed = 0, passed = 0, skipped = 0;
  for (const std::string& key : order) {
    const Tally& t = tallies[key];
    const char* verdict = t.failed ? "FAIL" : t.passed ? "PASS" : "SKIP";
    out << "  " << verdict << "  " << key << "  (" << t.passed << " passed, " << t.failed << " failed";
    if (t.skipped) out << ", " << t.skipped << " skipped";
    out << ")";
    if (t.failed || (!t.passed && t.skipped)) out << "  " << t.first_failure;
    out << "\n";
    failed += t.failed;
    passed += t.passed;
    skipped += t.skipped;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << "selftest " << d.id() << ": " << passed << " passed, " << failed << " failed";
  if (skipped) out << ", " << skipped << " skipped";
  out << " in " << seconds << " s\n";
  return failed == 0;
}

}  // namespace blobrt::tools
