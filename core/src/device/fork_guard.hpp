// fork() and the devices opened before it. Most device libraries do not survive a fork:
// PoCL's and libgomp's worker threads do not exist in the child (calls into them hang),
// CUDA forbids it. A device remembers the fork generation it was opened in; in a child,
// a plugin device whose manifest does not say `fork_safe = yes` refuses every call with a
// clear error instead of hanging, and never calls the plugin to free anything.
#ifndef BLOBRT_FORK_GUARD_HPP
#define BLOBRT_FORK_GUARD_HPP

#include <cstdint>

#include "blobrt_kernels/fork_generation.hpp"

namespace blobrt::fork_guard {

// Incremented in every fork()ed child (pthread_atfork, registered when libblobrt loads);
// one relaxed load, cheap enough for every device call.
inline std::uint64_t generation() noexcept { return blobrt_kernels::fork_generation(); }

}  // namespace blobrt::fork_guard

#endif
