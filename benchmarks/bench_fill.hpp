// Filling benchmark operands on any device, fast at GPU sizes (bench_device, bench_math,
// bench_cuda).
#ifndef BLOBRT_BENCH_FILL_HPP
#define BLOBRT_BENCH_FILL_HPP

#include <algorithm>
#include <cstdint>
#include <vector>

#include "blobrt/device.hpp"

namespace blobrt::bench {

// Fills `count` elements of T at `buffer`, on any device, with value(i % period): one host
// chunk of whole periods, then copies on the device that double the filled part. Google
// Benchmark calls a benchmark's function several times while it settles on an iteration
// count, so at GPU sizes a host loop and a host-to-device copy of gigabytes per call would
// cost minutes; this costs device bandwidth.
template <typename T, typename Value>
void fill_periodic(Device& device, DeviceBuffer buffer, std::int64_t count, std::int64_t period, Value value) {
  const std::int64_t chunk = std::min(count, period * ((std::int64_t(1) << 16) / period + 1));
  std::vector<T> host(static_cast<std::size_t>(chunk));
  for (std::int64_t i = 0; i < chunk; ++i) host[i] = value(i % period);
  device.copy_to_device(host.data(), buffer, 0, host.size() * sizeof(T));
  // The filled part is whole periods, so each copy continues the pattern.
  for (std::int64_t filled = chunk; filled < count; filled *= 2) {
    const std::int64_t n = std::min(filled, count - filled);
    device.copy_device(buffer, 0, buffer, static_cast<std::size_t>(filled) * sizeof(T),
                       static_cast<std::size_t>(n) * sizeof(T));
  }
}

// The operand values of the level-1 and Blob benchmarks: 1 + (i % 7) / 8.
template <typename T>
void fill_operand(Device& device, DeviceBuffer buffer, std::int64_t count) {
  fill_periodic<T>(device, buffer, count, 7, [](std::int64_t k) { return T(1) + T(k) * T(0.125); });
}

}  // namespace blobrt::bench

#endif
