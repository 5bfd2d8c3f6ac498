// blobrt-plugin-scanner [--answer-fd N] MANIFEST: loads one plugin, asks for its devices
// (every field of each description) and opens and closes each of them, in a process of its
// own, so that the process that asked (libblobrt, child_probe.cpp) survives a plugin that
// crashes, exits or hangs in any entry point it will call to use a device (the entry
// symbol, device_count, device_properties, open_device, close_device).
// The answer (child_probe.hpp has the protocol) goes to fd N, a pipe only libblobrt
// holds, so that nothing a plugin prints can be taken for it; without --answer-fd it
// goes to stdout, for a person trying a plugin by hand.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "child_probe.hpp"
#include "loader.hpp"

namespace {

int usage() {
  std::fprintf(stderr, "usage: blobrt-plugin-scanner [--answer-fd N] MANIFEST\n");
  return 2;
}

bool write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}


}  // namespace

int main(int argc, char** argv) {
  int answer_fd = STDOUT_FILENO;
  const char* manifest = nullptr;
  if (argc == 4 && std::strcmp(argv[1], "--answer-fd") == 0) {
    char* end = nullptr;
    long fd = std::strtol(argv[2], &end, 10);
    if (*end != '\0' || fd < 0 || fd > 1024) return usage();
    answer_fd = static_cast<int>(fd);
    manifest = argv[3];
  } else if (argc == 2) {
    manifest = argv[1];
  } else {
    return usage();
  }

  // Loaded, asked for its devices, each opened and closed (loader.cpp); the answer carries
  // every device's description, so that libblobrt need not load the plugin to list them.
  blobrt::InProcessProbe probe = blobrt::probe_in_process(manifest);
  blobrt::ProbeVerdict verdict;
  verdict.status = probe.status;
  verdict.library_version = probe.report.library_version;
  verdict.devices = probe.report.devices;
  verdict.reason = probe.report.reason;
  verdict.objects = blobrt::loaded_objects();
  if (!write_all(answer_fd, blobrt::encode_probe_result(verdict))) {
    std::fprintf(stderr, "blobrt-plugin-scanner: cannot write the answer to fd %d: %s\n", answer_fd,
                 std::strerror(errno));
    return 1;
  }
  return 0;
}
