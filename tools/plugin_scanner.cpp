// blobrt-plugin-scanner MANIFEST: loads one plugin and asks for its devices, in a process
// of its own, so that the process that asked (libblobrt, child_probe.cpp) survives a
// plugin that crashes or hangs. Prints "usable=0|1" and "reason=..." on stdout.
#include <cstdio>
#include <string>

#include "child_probe.hpp"
#include "loader.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: blobrt-plugin-scanner MANIFEST\n");
    return 2;
  }
  blobrt::PluginReport report = blobrt::probe_in_process(argv[1]);
  std::string answer = blobrt::encode_probe_result(report);
  std::fwrite(answer.data(), 1, answer.size(), stdout);
  return 0;
}
