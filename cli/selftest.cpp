#include "selftest.hpp"

#include <chrono>
#include <map>
#include <vector>

#include "blobrt/runtime.hpp"
#include "conformance_checks.hpp"

namespace blobrt::tools {

bool selftest(const std::string& backend, std::ostream& out) {
  std::shared_ptr<Device> device = backend.empty() ? current_device() : open_device(backend);
  const DeviceDescription& d = device->description();
  out << "selftest of " << d.id() << " (" << d.name << ") against the host reference\n";
  out.flush();
  // One line per operation and precision, summarising its cases, written (and flushed) as
  // soon as that operation's last case has run: the user sees progress, not a silent wait.
  struct Tally {
    int passed = 0, failed = 0, skipped = 0;
    std::string first_failure;
  };
  const std::vector<conformance::Case> cases = conformance::standard_cases();
  auto key_of = [](const conformance::Case& c) {
    return std::string(conformance::to_string(c.op)) + " " + conformance::to_string(c.precision);
  };
  std::map<std::string, std::size_t> last_case;
  for (std::size_t i = 0; i < cases.size(); ++i) last_case[key_of(cases[i])] = i;
  std::map<std::string, Tally> tallies;
  int failed = 0, passed = 0, skipped = 0;
  auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const conformance::Case& c = cases[i];
    const std::string key = key_of(c);
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
    if (last_case[key] != i) continue;
    const char* verdict = t.failed ? "FAIL" : t.passed ? "PASS" : "SKIP";
    out << "  " << verdict << "  " << key << "  (" << t.passed << " passed, " << t.failed << " failed";
    if (t.skipped) out << ", " << t.skipped << " skipped";
    out << ")";
    if (t.failed || (!t.passed && t.skipped)) out << "  " << t.first_failure;
    out << std::endl;
    failed += t.failed;
    passed += t.passed;
    skipped += t.skipped;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << "selftest " << d.id() << ": " << passed << " passed, " << failed << " failed";
  if (skipped) out << ", " << skipped << " skipped";
  out << " in " << seconds << " s" << std::endl;
  return failed == 0;
}

}  // namespace blobrt::tools
