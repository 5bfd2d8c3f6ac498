#include "exit_guard.hpp"

#include <cstdlib>

namespace blobrt::exit_guard {

std::atomic<bool> exiting_flag{false};

namespace {

std::atomic<void (*)() noexcept> closer{nullptr};

// Registered several times; only the first to run (the newest registration) acts.
void run_at_exit() {
  if (exiting_flag.exchange(true)) return;
  if (auto* close_devices = closer.load()) close_devices();
}

}  // namespace

void arm(void (*close_devices)() noexcept) {
  closer.store(close_devices);
  // A failed registration (no slot left) only loses the early close: the devices then
  // stay open until the process ends.
  (void)std::atexit(run_at_exit);
}

}  // namespace blobrt::exit_guard
