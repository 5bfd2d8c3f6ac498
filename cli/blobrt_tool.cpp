// The `blobrt` command: info (what was found and why), inspect (a BlobProto file, binary or
// text, or a Caffe model file's layers), selftest (a backend checked against the host reference). The command line is
// CLI11's; every failure is one line on stderr and a non-zero exit (kExitCodes); nothing aborts.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"
#include "blobrt/runtime.hpp"
#include "caffe_layers.hpp"
#include "info_report.hpp"
#include "info_text.hpp"
#include "inspect_report.hpp"
#include "json_out.hpp"
#include "selftest.hpp"

namespace {

constexpr const char* kExitCodes =
    "Exit codes:\n"
    "  0  success\n"
    "  1  failure: info could not select the default device (BLOBRT_BACKEND), inspect could not\n"
    "     read the file, selftest found a wrong result\n"
    "  2  usage error: an unknown command or option, a missing or bad value\n";

int cmd_info(bool as_json, bool brief, const std::string& caffe) {
  // Caffe's library first: it asks for addressable handles before any device opens.
  const std::string caffe_section = caffe.empty() ? std::string() : blobrt::tools::caffe_layers_text(caffe);
  const blobrt::tools::json report = blobrt::tools::info_report();
  if (as_json) {
    std::cout << blobrt::tools::dump_json(report) << "\n";
  } else {
    std::cout << (brief ? blobrt::tools::info_brief(report) : blobrt::tools::info_text(report)) << caffe_section;
  }
  // Selection may fail (a named backend that cannot be used): reported after what was found.
  const blobrt::tools::json& error = report["selection"]["error"];
  if (!error.is_null()) {
    std::cerr << "blobrt: " << error.get<std::string>() << "\n";
    return 1;
  }
  return 0;
}

int cmd_inspect(const std::string& file, bool as_json) {
  const blobrt::tools::json report = blobrt::tools::inspect_file(file);
  std::cout << (as_json ? blobrt::tools::dump_json(report) + "\n" : blobrt::tools::inspect_file_text(report));
  return 0;
}

bool is_command(const std::string& word) { return word == "info" || word == "inspect" || word == "selftest"; }

int run(int argc, char** argv) {
  CLI::App app{"blobrt: what this node's blobrt found (info), a BlobProto file (inspect), a backend "
               "checked against the host reference (selftest).",
               "blobrt"};
  app.footer(kExitCodes);
  app.set_version_flag("--version", std::string("blobrt ") + blobrt::version());
  app.require_subcommand(1);

  CLI::App* info = app.add_subcommand("info", "Plugins found, their verdicts and devices, the selection");
  bool info_json = false, info_brief = false, rescan = false;
  info->add_flag("--json", info_json, "JSON (docs/blobrt-info.schema.json)");
  info->add_flag("--brief", info_brief, "one line per device, like clinfo -l")->excludes("--json");
  info->add_flag("--rescan", rescan, "probe every plugin again, not from the cache");
  std::string caffe;
  info->add_option("--caffe", caffe,
                   "LIBCAFFE: a Caffe library built the portable way; adds which of its layers run on each device "
                   "and its Caffe-layers plugins")
      ->excludes("--json")
      ->excludes("--brief");
  info->footer(kExitCodes);

  CLI::App* inspect = app.add_subcommand("inspect", "Shape, precision and statistics of a BlobProto file, or the layers and blob shapes of a Caffe model file (.caffemodel)");
  std::string file;
  bool inspect_json = false;
  inspect->add_option("FILE", file, "a BlobProto, binary or text (decided from the file), or a .caffemodel; - for standard input (a BlobProto)")
      ->required();
  inspect->add_flag("--json", inspect_json, "JSON (docs/blobrt-inspect.schema.json)");
  inspect->footer(kExitCodes);

  CLI::App* selftest = app.add_subcommand("selftest", "The conformance checks on one device");
  std::string backend;
  selftest->add_option("--backend", backend, "NAME or NAME:DEVICE (default: the active device)");
  selftest->footer(kExitCodes);

  // CLI11 would say only that a command is required.
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::cerr << "blobrt: unknown command '" << argv[1] << "' (info, inspect, selftest)\n"
              << "Run 'blobrt --help' for usage.\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line naming what was wrong, then where to read more; exit 2 as documented.
    const CLI::App* sub = app.get_subcommands().empty() ? &app : app.get_subcommands().front();
    std::cerr << "blobrt" << (sub == &app ? "" : " " + sub->get_name()) << ": " << e.what() << "\n"
              << "Run 'blobrt" << (sub == &app ? "" : " " + sub->get_name()) << " --help' for usage.\n";
    return 2;
  }
  if (info->parsed()) {
    // Read before discovery, which has not run yet (verdict_cache.hpp).
    if (rescan) ::setenv("BLOBRT_PLUGIN_CACHE", "refresh", 1);
    return cmd_info(info_json, info_brief, caffe);
  }
  if (inspect->parsed()) return cmd_inspect(file, inspect_json);
  return blobrt::tools::selftest(backend, std::cout) ? 0 : 1;
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
