// libblobrt's own code logs through the public API (blobrt/log.hpp): blobrt::log::warn(...),
// info(...), debug(...), error(...), each a no-op below the level in force.
#ifndef BLOBRT_LOG_HPP
#define BLOBRT_LOG_HPP

#include "blobrt/log.hpp"

#endif
