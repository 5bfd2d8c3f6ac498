// Prints what libblobrt did with its environment, for setuid_test.py: run setuid root by
// another user, it must show the environment ignored, and the plugins (and this process
// after discovery) seeing only the scrubbed environment (blobrt/environment.hpp).
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

#include "blobrt/runtime.hpp"

namespace {
const char* value(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "(unset)";
}
}  // namespace

int main() {
  const blobrt::Inventory& inv = blobrt::inventory();
  std::printf("environment_ignored=%d\n", inv.environment_ignored ? 1 : 0);
  for (const auto& d : inv.directories) std::printf("searched=%s (%s)\n", d.path.c_str(), d.origin.c_str());
  for (const auto& p : inv.plugins) {
    std::printf("plugin=%s reason=%s\n", p.name.c_str(), p.reason.c_str());
    for (const auto& d : p.devices) std::printf("device %s: %s\n", d.id().c_str(), d.details.c_str());
  }
  std::printf("own pid %d\n", static_cast<int>(::getpid()));
  std::printf("own: OCL_ICD_VENDORS=%s HOME=%s PATH=%s LANG=%s\n", value("OCL_ICD_VENDORS"), value("HOME"),
              value("PATH"), value("LANG"));
  return 0;
}
