// Process exit and the devices plugins opened.
//
// At exit, handlers run in the reverse order of their registration. The libraries behind
// a plugin (PoCL, CLBlast, the CUDA runtime, the plugin itself) register their teardown
// when they are loaded, which is after the program's own static objects were made; so
// they are torn down before those objects' destructors run, and a static Blob freed then
// would call into destroyed libraries (the crash Caffe's users meet as
// "cudaErrorCudartUnloading"). blobrt registers its handler again after each plugin device
// is opened and after each operation's first call (which may load more code), so it runs
// before any of that teardown: it closes every open plugin device, and from then on a
// plugin device refuses every call with a clear error and frees nothing (the memory goes
// with the process). The built-in host device keeps working.
#ifndef BLOBRT_EXIT_GUARD_HPP
#define BLOBRT_EXIT_GUARD_HPP

#include <atomic>

namespace blobrt::exit_guard {

extern std::atomic<bool> exiting_flag;

// True once the exit handler ran. One relaxed load: cheap enough for every device call.
inline bool exiting() noexcept { return exiting_flag.load(std::memory_order_relaxed); }

// (Re)registers the exit handler, so that it runs before every handler registered so far.
// At exit the handler sets exiting() and calls `close_devices` once.
void arm(void (*close_devices)() noexcept);

}  // namespace blobrt::exit_guard

#endif
