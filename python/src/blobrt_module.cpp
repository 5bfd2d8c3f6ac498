// blobrt._blobrt: the nanobind extension behind the `blobrt` Python package
// (python/blobrt/__init__.py adds the DLPack wrapper and the file helpers; docs/python.md).
//
// One Python class, Blob, over Blob<float> or Blob<double> (the dtype chosen at
// construction). .data/.diff are NumPy arrays over the Blob's host memory that hold a
// reference to its SyncedMemory, so they outlive the Blob; each access makes the host
// side current and marks it newest (pycaffe's semantics). .device_data/.device_diff
// export the active device's memory through DLPack where it has an address (host memory,
// CUDA); OpenCL buffers have none and say so.
//
// The parts are listed in py_blob.hpp; this file holds the module, its log functions and
// the runtime's (backend, devices, version, the info report).

#include <optional>
#include <string>

#include "info_report.hpp"
#include "log_bridge.hpp"
#include "py_blob.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt::python {
namespace {

using namespace nb::literals;

// blobrt's log from Python: a handler, the level.
void register_log(nb::module_& m) {
  m.def("set_log_handler", [](nb::handle handler) {
        if (!handler.is_none() && !PyCallable_Check(handler.ptr())) {
          detail::fail_as<InvalidTypeError>("blobrt.set_log_handler: expected a callable or None, got ",
                                            nb::cast<std::string>(nb::repr(handler)));
        }
        LogBridge::get().set(handler);
      },
      "handler"_a.none(),
      nb::sig("def set_log_handler(handler: collections.abc.Callable[[str, str], object] | None) -> None"),
      "Sends blobrt's log messages (at or above the level in force) to handler(level, message) instead of "
      "stderr / BLOBRT_LOG_FILE: level is 'error', 'warn', 'info' or 'debug', message has no prefix. Messages "
      "from other threads arrive in order through the main thread. None restores the default. "
      "blobrt.log_to_logging() puts the logging module behind it.");
  m.def("set_log_level", [](const std::string& level) {
        const std::optional<LogLevel> parsed = parse_log_level(level);
        if (!parsed) {
          detail::fail_as<InvalidValueError>("blobrt.set_log_level: '", level,
                                             "' is not one of off, error, warn, info, debug");
        }
        blobrt::set_log_level(*parsed);
      },
      "level"_a, "The level in force from now on ('off', 'error', 'warn', 'info', 'debug'; case-insensitive), "
      "instead of BLOBRT_LOG's.");
  m.def("log_level", [] { return std::string(to_string(blobrt::log_level())); },
        "The level in force: set_log_level's, else BLOBRT_LOG's, else 'warn'.");
}

// The runtime: the backend, the devices, the node's report, the version.
void register_runtime_functions(nb::module_& m) {
  m.def("select_backend", &select_backend, "spec"_a,
        "Selects 'auto', 'host', 'NAME' or 'NAME:INDEX' (as BLOBRT_BACKEND); raises blobrt.Error listing what "
        "was found if it cannot be used.");
  // blobrt.active_device(), its older name, is a Python function in __init__.py that warns.
  m.def("current_device_id", &current_device_id,
        "The calling thread's current device's id, e.g. 'blis:0' (selected per BLOBRT_BACKEND on first use).");
  m.def("available_devices", &available_devices, "Every backend:index that can be opened here, host first.");
  // One description of the node for `blobrt info --json` and blobrt.info() / devices()
  // (report/info_report.hpp; docs/blobrt-info.schema.json): the same keys in both.
  m.def("_info_json", [] { return tools::dump_json(tools::info_report(), -1); },
        "What `blobrt info --json` prints, as JSON text (blobrt.info() parses it).");
  m.def("version", [] { return std::string(version()); }, "libblobrt's version, e.g. '1.4.0' (also blobrt.__version__).");
}

}  // namespace
}  // namespace blobrt::python

NB_MODULE(_blobrt, m) {
  using namespace blobrt::python;
  m.doc() = "blobrt's Blob and runtime (the extension behind the blobrt package)";
  register_errors(m);
  register_device_array(m);
  register_blob(m);
  register_file_functions(m);
  register_model_file_functions(m);
  register_runtime_functions(m);
  register_log(m);
}
