// The benchmarks' operand fill (benchmarks/bench_fill.hpp) on every device: one host chunk
// of whole periods, then device copies doubling the filled part. The values at every count
// around the chunk's edges, read back whole: the GPU figures' probe checks its sums only at
// sizes a GPU run reaches, so a wrong doubling would otherwise show first on a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "backend_param.hpp"
#include "bench_fill.hpp"

namespace blobrt {
namespace {

class BenchFill : public testing::OnEveryDevice {};

template <typename T, typename Value>
void check_fill(Device& device, std::int64_t count, std::int64_t period, Value value) {
  DeviceBuffer buffer = device.allocate(static_cast<std::size_t>(count ? count : 1) * sizeof(T));
  bench::fill_periodic<T>(device, buffer, count, period, value);
  std::vector<T> got(static_cast<std::size_t>(count));
  device.copy_to_host(buffer, 0, got.data(), got.size() * sizeof(T));
  device.release(buffer);
  for (std::int64_t i = 0; i < count; ++i) {
    ASSERT_EQ(got[i], value(i % period)) << "count " << count << ", period " << period << ", element " << i;
  }
}

TEST_P(BenchFill, EveryElementHasItsPeriodicValue) {
  for (std::int64_t period : {1, 7, 13}) {
    const std::int64_t chunk = period * ((std::int64_t(1) << 16) / period + 1);  // as fill_periodic's
    for (std::int64_t count : {std::int64_t(0), std::int64_t(1), period - 1, period, chunk - 1, chunk, chunk + 1,
                               2 * chunk + 3, 5 * chunk + period + 1}) {
      if (count < 0) continue;
      check_fill<float>(device(), count, period, [](std::int64_t k) { return 1.0f + k * 0.125f; });
      check_fill<double>(device(), count, period, [](std::int64_t k) { return 0.5 + (k * 3 % 13) * 0.0625; });
    }
  }
}

TEST_P(BenchFill, OperandValuesAreTheDocumentedOnes) {
  const std::int64_t count = 100003;
  DeviceBuffer buffer = device().allocate(count * sizeof(float));
  bench::fill_operand<float>(device(), buffer, count);
  std::vector<float> got(count);
  device().copy_to_host(buffer, 0, got.data(), count * sizeof(float));
  device().release(buffer);
  for (std::int64_t i = 0; i < count; ++i) ASSERT_EQ(got[i], 1.0f + static_cast<float>(i % 7) / 8) << i;
}

INSTANTIATE_ON_EVERY_DEVICE(BenchFill);

}  // namespace
}  // namespace blobrt
