// Prints what the loader would search, for setuid_test.py: run setuid root by another
// user, it must show that the environment was ignored.
#include <cstdio>

#include "blobrt/runtime.hpp"

int main() {
  const blobrt::Inventory& inv = blobrt::inventory();
  std::printf("environment_ignored=%d\n", inv.environment_ignored ? 1 : 0);
  for (const auto& d : inv.directories) std::printf("searched=%s (%s)\n", d.path.c_str(), d.origin.c_str());
  return 0;
}
