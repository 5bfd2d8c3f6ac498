// blobrt-plugin-scanner MANIFEST: loads one plugin, asks for its devices and opens and
// closes each of them, in a process of its own, so that the process that asked
// (libblobrt, child_probe.cpp) survives a plugin that crashes, exits or hangs in any entry
// point it will call to use a device (init, device_count, properties, open, close).
// Prints "usable=0|1" and "reason=..." on stdout.
#include <cstdio>
#include <string>

#include "child_probe.hpp"
#include "loader.hpp"
#include "plugin_text.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: blobrt-plugin-scanner MANIFEST\n");
    return 2;
  }
  blobrt::LoadedPlugin loaded;
  blobrt::PluginReport report = blobrt::probe_in_process(argv[1], &loaded);
  if (report.usable && loaded.table) {
    for (const blobrt::DeviceDescription& device : report.devices) {
      void* context = nullptr;
      blobrt_error err{};
      if (loaded.table->open_device(device.index, &context, &err) != BLOBRT_OK) {
        report.usable = false;
        report.reason = "device " + std::to_string(device.index) + " cannot be opened: " +
                        blobrt::plugin_message(err, "no message from the plugin");
        break;
      }
      loaded.table->close_device(context);
    }
  }
  std::string answer = blobrt::encode_probe_result(report);
  std::fwrite(answer.data(), 1, answer.size(), stdout);
  return 0;
}
