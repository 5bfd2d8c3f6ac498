// blobrt's log into a Python callable (blobrt.set_log_handler; blobrt.log_to_logging puts
// the `logging` module behind it). libblobrt may log from any thread, some holding its own
// locks, so the handler never waits for the GIL: a message is queued, and handed to Python
// at once when the logging thread already holds the GIL (a Python call into blobrt), else
// by a pending call (Py_AddPendingCall) that the main thread runs at its next chance.
// Messages keep their order. A handler that raises is reported through sys.unraisablehook
// and keeps receiving; a handler that logs through blobrt has that message queued behind.
#ifndef BLOBRT_PYTHON_LOG_BRIDGE_HPP
#define BLOBRT_PYTHON_LOG_BRIDGE_HPP

#include <nanobind/nanobind.h>

#include <deque>
#include <mutex>
#include <string>
#include <utility>

#include "blobrt/log.hpp"

namespace blobrt::python {

class LogBridge {
 public:
  // Leaked on purpose: libblobrt may log from other threads until the process ends.
  static LogBridge& get() {
    static LogBridge* bridge = new LogBridge;
    return *bridge;
  }

  // With the GIL. None restores blobrt's own sink (stderr or BLOBRT_LOG_FILE).
  void set(nanobind::handle handler) {
    if (handler.is_none()) {
      blobrt::set_log_handler({});
      deliver_pending();  // what was queued still reaches the handler it was meant for
      handler_ = nanobind::object();
      return;
    }
    handler_ = nanobind::borrow(handler);
    blobrt::set_log_handler([this](LogLevel level, const std::string& message) { receive(level, message); });
  }

 private:
  LogBridge() = default;

  void receive(LogLevel level, const std::string& message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace_back(level, message);
    }
    if (Py_IsInitialized() && PyGILState_Check()) {
      deliver_pending();
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (scheduled_) return;
    // Needs no thread state; -1 (the interpreter's queue is full) leaves the message for
    // the next delivery.
    scheduled_ = Py_AddPendingCall(&LogBridge::pending_call, this) == 0;
  }

  static int pending_call(void* self) {
    static_cast<LogBridge*>(self)->deliver_pending();
    return 0;
  }

  // With the GIL. Re-entry (the handler logs through blobrt) leaves the new message to the
  // loop already running, after the one being handled.
  void deliver_pending() {
    if (delivering_) return;
    delivering_ = true;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);  // a Python error in flight is not the handler's
    for (;;) {
      std::pair<LogLevel, std::string> item;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (queue_.empty()) {
          scheduled_ = false;
          break;
        }
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      if (!handler_.is_valid()) continue;
      PyObject* result =
          PyObject_CallFunction(handler_.ptr(), "ss", blobrt::to_string(item.first), item.second.c_str());
      if (result) {
        Py_DECREF(result);
      } else {
        PyErr_WriteUnraisable(handler_.ptr());
      }
    }
    PyErr_Restore(type, value, traceback);
    delivering_ = false;
  }

  std::mutex mutex_;
  std::deque<std::pair<LogLevel, std::string>> queue_;  // guarded by mutex_
  bool scheduled_ = false;                              // guarded by mutex_
  nanobind::object handler_;                            // with the GIL only
  bool delivering_ = false;                             // with the GIL only
};

}  // namespace blobrt::python

#endif
