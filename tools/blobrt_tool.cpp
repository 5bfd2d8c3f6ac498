// The `blobrt` command: info (what was found and why), inspect (a BlobProto file, binary or text),
// selftest (a backend checked against the host reference).
// Every failure is one line on stderr and a non-zero exit; nothing aborts.
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"
#include "blobrt/plugin_abi.h"
#include "blobrt/environment.hpp"
#include "blobrt/runtime.hpp"
#include "json_writer.hpp"
#include "scale_out_info.hpp"
#include "selftest.hpp"

namespace {

using blobrt::tools::json_string;

const char* kUsage =
    "usage: blobrt info [--json] [--rescan]   (--rescan: probe every plugin again, not from the cache)\n"
    "       blobrt inspect FILE   (a BlobProto, binary or text: decided from the file, -: standard input)\n"
    "       blobrt selftest [--backend NAME[:DEVICE]]\n"
    "       blobrt --version | --help\n";

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  std::ostringstream s;
  s.precision(unit ? 1 : 0);
  s << std::fixed << value << " " << units[unit];
  return s.str();
}

void print_device_text(const blobrt::DeviceDescription& d) {
  std::cout << "    device " << d.index << ": " << d.name << "\n"
            << "      type " << blobrt::to_string(d.kind) << ", memory " << human_bytes(d.memory_bytes)
            << (d.host_memory ? " (host memory, zero-copy)" : "")
            << (d.host_alias_buffers ? " (buffers in host memory: mirrors without copies)" : "")
            << (d.supports_fp64 ? ", fp64" : ", no fp64") << (d.has_pinned_host ? ", pinned host memory" : "")
            << "\n";
  if (!d.details.empty()) std::cout << "      " << d.details << "\n";
}

std::string device_json(const blobrt::DeviceDescription& d) {
  std::ostringstream s;
  s << "{\"id\": " << json_string(d.id()) << ", \"index\": " << d.index
    << ", \"name\": " << json_string(d.name) << ", \"details\": " << json_string(d.details)
    << ", \"type\": " << json_string(blobrt::to_string(d.kind)) << ", \"memory_bytes\": " << d.memory_bytes
    << ", \"host_memory\": " << (d.host_memory ? "true" : "false")
    << ", \"host_alias_buffers\": " << (d.host_alias_buffers ? "true" : "false")
    << ", \"fp64\": " << (d.supports_fp64 ? "true" : "false") << "}";
  return s.str();
}

int cmd_info(bool json) {
  const blobrt::Inventory& inv = blobrt::inventory();
  // Selection may fail (a named backend that cannot be used): report it and exit 1,
  // after printing what was found.
  std::string active, selection_error;
  std::vector<std::string> notes;
  try {
    active = blobrt::active_backend();
    notes = blobrt::selection_log();
  } catch (const blobrt::Error& e) {
    selection_error = e.what();
  }
  const blobrt::DeviceDescription& host = blobrt::host_device()->description();
  if (json) {
    std::cout << "{\n  \"version\": " << json_string(blobrt::version()) << ",\n  \"abi\": \""
              << BLOBRT_PLUGIN_ABI_MAJOR << "." << BLOBRT_PLUGIN_ABI_MINOR << "\",\n"
              << "  \"library\": " << json_string(blobrt::library_path()) << ",\n"
              << "  \"environment_ignored\": " << (inv.environment_ignored ? "true" : "false") << ",\n"
              << "  \"search_path\": [";
    for (std::size_t i = 0; i < inv.directories.size(); ++i) {
      const auto& d = inv.directories[i];
      std::cout << (i ? ", " : "") << "{\"path\": " << json_string(d.path) << ", \"origin\": "
                << json_string(d.origin) << ", \"exists\": " << (d.exists ? "true" : "false")
                << ", \"refused\": " << json_string(d.refused) << "}";
    }
    std::cout << "],\n  \"plugins\": [\n    {\"name\": \"host\", \"builtin\": true, \"usable\": true, "
              << "\"devices\": [" << device_json(host) << "]}";
    for (const auto& p : inv.plugins) {
      std::cout << ",\n    {\"name\": " << json_string(p.name) << ", \"builtin\": false, \"manifest\": "
                << json_string(p.manifest) << ", \"library\": " << json_string(p.library)
                << ", \"abi\": " << json_string(p.abi) << ", \"priority\": " << p.priority
                << ", \"library_version\": " << json_string(p.library_version)
                << ", \"usable\": " << (p.usable ? "true" : "false") << ", \"reason\": "
                << json_string(p.reason) << ", \"requires\": [";
      for (std::size_t i = 0; i < p.required_libraries.size(); ++i) {
        std::cout << (i ? ", " : "") << json_string(p.required_libraries[i]);
      }
      std::cout << "], \"devices\": [";
      for (std::size_t i = 0; i < p.devices.size(); ++i) {
        std::cout << (i ? ", " : "") << device_json(p.devices[i]);
      }
      std::cout << "]}";
    }
    std::cout << "\n  ],\n  \"active\": " << (active.empty() ? "null" : json_string(active))
              << ",\n  \"selection\": [";
    for (std::size_t i = 0; i < notes.size(); ++i) std::cout << (i ? ", " : "") << json_string(notes[i]);
    std::cout << "],\n  \"error\": " << (selection_error.empty() ? "null" : json_string(selection_error))
              << ",\n  \"scale_out\": " << blobrt::tools::scale_out_json() << "\n}\n";
  } else {
    std::cout << "blobrt " << blobrt::version() << " (plugin ABI " << BLOBRT_PLUGIN_ABI_MAJOR << "."
              << BLOBRT_PLUGIN_ABI_MINOR << ")\n";
    // Which copy is in use, where several are installed (a system one, a wheel's).
    std::cout << "libblobrt " << blobrt::library_path() << "\n\nPlugin search path:\n";
    if (inv.environment_ignored) {
      std::cout << "  (environment variables ignored: setuid/setgid process; plugin code sees only the\n"
                   "   locale, TERM, USER, LOGNAME and PATH="
                << blobrt::environment::kScrubbedPath << ")\n";
    }
    for (const auto& d : inv.directories) {
      std::cout << "  " << d.path << "  [" << d.origin << (d.exists ? "" : ", does not exist")
                << (d.refused.empty() ? "" : ", " + d.refused) << "]\n";
    }
    std::cout << "\nBackends:\n  host  (built-in)  usable\n";
    print_device_text(host);
    for (const auto& p : inv.plugins) {
      std::cout << "  " << (p.name.empty() ? "?" : p.name) << "  " << p.manifest << "\n"
                << "    library " << p.library << ", ABI " << p.abi << ", priority " << p.priority;
      if (!p.library_version.empty()) std::cout << ", " << p.library_version;
      std::cout << "\n";
      if (!p.required_libraries.empty()) {
        std::cout << "    requires";
        for (const auto& r : p.required_libraries) std::cout << " " << r;
        std::cout << "\n";
      }
      std::cout << "    " << (p.usable ? "usable" : "NOT USABLE: " + p.reason) << "\n";
      for (const auto& d : p.devices) print_device_text(d);
    }
    std::cout << "\nSelection:\n";
    for (const auto& n : notes) std::cout << "  " << n << "\n";
    if (!active.empty()) std::cout << "\nActive device: " << active << "\n";
    std::cout << blobrt::tools::scale_out_text();
  }
  if (!selection_error.empty()) {
    std::cerr << "blobrt: " << selection_error << "\n";
    return 1;
  }
  return 0;
}

template <typename T>
void print_stats(const char* label, const T* values, std::int64_t n) {
  if (n == 0) {
    std::cout << "  " << label << ": (none)\n";
    return;
  }
  double min = std::numeric_limits<double>::infinity(), max = -min, sum = 0, asum = 0, sumsq = 0;
  std::int64_t non_finite = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double v = values[i];
    if (!std::isfinite(v)) {
      ++non_finite;
      continue;
    }
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
    asum += std::fabs(v);
    sumsq += v * v;
  }
  std::cout << "  " << label << ": min " << min << ", max " << max << ", mean " << sum / n << ", asum "
            << asum << ", sumsq " << sumsq;
  if (non_finite) std::cout << ", " << non_finite << " non-finite";
  std::cout << "\n";
}

int inspect_proto(const std::string& file, const blobrt::BlobProto& proto);

int cmd_inspect(const std::string& file) {
  blobrt::BlobProto proto;
  // Binary or text by the one rule of blobrt/io.hpp, as Python's blobrt.load and inspect.
  blobrt::ReadBlobProtoFromFileOrDie(file == "-" ? std::string("/dev/stdin") : file, &proto);
  try {
    return inspect_proto(file, proto);
  } catch (const blobrt::Error& e) {
    throw blobrt::Error(file + ": " + e.what());  // shape/data mismatches name the file too
  }
}

int inspect_proto(const std::string& file, const blobrt::BlobProto& proto) {
  bool is_double = proto.double_data_size() > 0 || proto.double_diff_size() > 0;
  if (is_double) {
    blobrt::Blob<double> blob;
    blob.FromProto(proto, true);
    std::cout << file << "\n  shape " << blob.shape_string() << ", precision double (double_data)\n";
    print_stats("data", blob.count() ? blob.cpu_data() : nullptr, blob.count());
    if (proto.double_diff_size() > 0 || proto.diff_size() > 0) print_stats("diff", blob.count() ? blob.cpu_diff() : nullptr, blob.count());
    else std::cout << "  diff: (none)\n";
  } else {
    blobrt::Blob<float> blob;
    blob.FromProto(proto, true);
    std::cout << file << "\n  shape " << blob.shape_string() << ", precision float (data)"
              << (proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width()
                      ? ", legacy 4-D num/channels/height/width"
                      : "")
              << "\n";
    print_stats("data", blob.count() ? blob.cpu_data() : nullptr, blob.count());
    if (proto.diff_size() > 0) print_stats("diff", blob.count() ? blob.cpu_diff() : nullptr, blob.count());
    else std::cout << "  diff: (none)\n";
  }
  return 0;
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string& command = args[0];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "blobrt " << blobrt::version() << "\n";
    return 0;
  }
  if (command == "info") {
    bool json = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--json") {
        json = true;
      } else if (args[i] == "--rescan") {
        // Read before discovery, which has not run yet (verdict_cache.hpp).
        ::setenv("BLOBRT_PLUGIN_CACHE", "refresh", 1);
      } else {
        std::cerr << "blobrt info: unexpected argument '" << args[i] << "'\n" << kUsage;
        return 2;
      }
    }
    return cmd_info(json);
  }
  if (command == "inspect") {
    if (args.size() != 2) {
      std::cerr << "blobrt inspect: expected one FILE\n" << kUsage;
      return 2;
    }
    return cmd_inspect(args[1]);
  }
  if (command == "selftest") {
    std::string backend;
    if (args.size() == 3 && args[1] == "--backend") {
      backend = args[2];
    } else if (args.size() == 2 && args[1].rfind("--backend=", 0) == 0) {
      backend = args[1].substr(10);
    } else if (args.size() != 1) {
      std::cerr << "blobrt selftest: expected [--backend NAME[:DEVICE]]\n" << kUsage;
      return 2;
    }
    return blobrt::tools::selftest(backend, std::cout) ? 0 : 1;
  }
  std::cerr << "blobrt: unknown command '" << command << "'\n" << kUsage;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    // One line: the first line of the message; the rest (search path, plugins) follows.
    std::cerr << "blobrt: " << e.what() << "\n";
    return 1;
  }
}
