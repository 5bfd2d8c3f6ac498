// A Blob of 2^31 + 8 floats (issue 27): Update, asum, sumsq (a dot), Device::dot and scale on
// every device give exactly what the reference device gives (blis:0, else host:0) and what
// this test computes itself, across the 2^31 boundary and in the tail.
//
// The values are zeros except small multiples of 1/2 at every 65536th element and at the
// elements a 32-bit count gets wrong: the largest power of two below the count, the one
// before it, and the last 8. Every product and every partial sum, in any reduction order, is
// then a multiple of 1/4 below 2^22 (asserted), so exact in float: EXPECT_EQ on floats is
// right here, and cuBLAS, CLBlast and BLIS, which reduce in different orders, must agree to
// the bit.
//
// BLOBRT_LARGE_BLOB_COUNT sets the count (default 2^31 + 8; meson's large_blob_small runs
// 2^24 + 8, which fits anywhere). Host memory for 4 x count floats (the blob's data and diff
// on the host or its pinned mirrors, and the reference's), and on a device with its own memory
// 2 x count floats there, or the case is skipped with the figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backend_param.hpp"
#include "blobrt/blob.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt {
namespace {

constexpr std::int64_t kStride = 65536;

std::int64_t count_from_env() {
  const char* text = std::getenv("BLOBRT_LARGE_BLOB_COUNT");
  return text ? std::stoll(text) : (std::int64_t{1} << 31) + 8;
}

std::string reference_device() {
  const auto all = available_devices();
  return std::find(all.begin(), all.end(), "blis:0") != all.end() ? "blis:0" : "host:0";
}

std::vector<std::string> devices_under_test() {
  auto all = available_devices();
  all.erase(std::remove(all.begin(), all.end(), reference_device()), all.end());
  return all;
}

std::uint64_t mem_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    meminfo.ignore(64, '\n');
  }
  return 0;
}

std::string gib(std::uint64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1ull << 30) << " GiB";
  return out.str();
}

// Where the values are, and what they are.
struct Pattern {
  std::int64_t count, pow2 = 1;
  explicit Pattern(std::int64_t n) : count(n) {
    while (pow2 * 2 < n) pow2 *= 2;
  }
  bool edge(std::int64_t i) const { return i == pow2 - 1 || i == pow2 || i >= count - 8; }
  // At the edges data - diff is never 0, so Update, asum, the dots and scale all see them.
  float data(std::int64_t i) const {
    if (edge(i)) return 1.5f + 0.5f * static_cast<float>(i % 4);                       // 1.5 .. 3
    return i % kStride ? 0.0f : 0.5f * static_cast<float>((i / kStride) % 9) - 2.0f;  // -2 .. 2
  }
  float diff(std::int64_t i) const {
    if (edge(i)) return -0.5f - 0.5f * static_cast<float>(i % 3);                      // -1.5 .. -0.5
    return i % kStride ? 0.0f : 0.5f * static_cast<float>((i / kStride) % 7) - 1.5f;  // -1.5 .. 1.5
  }
  float updated(std::int64_t i) const { return data(i) - diff(i); }  // exact: multiples of 1/2
  std::vector<std::int64_t> positions() const {
    std::vector<std::int64_t> at;
    for (std::int64_t i = 0; i < count; i += kStride) at.push_back(i);
    for (std::int64_t i : {pow2 - 1, pow2}) at.push_back(i);
    for (std::int64_t i = count - 8; i < count; ++i) at.push_back(i);
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    return at;
  }
};

// The exact results, summed in double (exact too), and the largest partial sum any order
// can reach.
struct Expected {
  double dot = 0, asum_diff = 0, sumsq_diff = 0, asum_updated = 0, sumsq_updated = 0, bound = 0;
  explicit Expected(const Pattern& p) {
    double dot_bound = 0;
    for (std::int64_t i : p.positions()) {
      dot += double{p.data(i)} * p.diff(i);
      dot_bound += std::fabs(double{p.data(i)} * p.diff(i));
      asum_diff += std::fabs(p.diff(i));
      sumsq_diff += double{p.diff(i)} * p.diff(i);
      asum_updated += std::fabs(p.updated(i));
      sumsq_updated += double{p.updated(i)} * p.updated(i);
    }
    bound = std::max({dot_bound, asum_diff, sumsq_diff, asum_updated, sumsq_updated});
  }
};

// Every element equals the reference's and the exact value; the first that does not is named.
template <typename Exact>
void expect_array(const std::string& what, const std::string& id, const float* got, const std::string& ref_id,
                  const float* ref, std::int64_t count, Exact exact) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (got[i] != ref[i] || got[i] != exact(i)) {
      ADD_FAILURE() << what << ": first difference at index " << i << " of " << count << ": " << id << " "
                    << got[i] << ", " << ref_id << " " << ref[i] << ", exact " << exact(i);
      return;
    }
  }
}

class LargeBlob : public ::testing::TestWithParam<std::string> {};

TEST_P(LargeBlob, MatchesTheReferenceExactly) {
  const std::string id = GetParam(), ref_id = reference_device();
  const std::int64_t count = count_from_env();
  ASSERT_TRUE(count >= 32 && count % 2 == 0 && count / 2 <= INT_MAX)
      << "BLOBRT_LARGE_BLOB_COUNT=" << count << ": an even count from 32 to 2^32 - 2";
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * sizeof(float);

  const DeviceDescription description = open_device(id)->description();
  const std::uint64_t host_needed = 4 * bytes + 4 * bytes / 16, host_available = mem_available_bytes();
  const std::uint64_t device_needed = 2 * bytes + 2 * bytes / 16;
  std::string short_of;
  if (host_available < host_needed) {
    short_of += "host memory: needs " + gib(host_needed) + " (data and diff for " + id + " and " + ref_id +
                "), MemAvailable " + gib(host_available) + "; ";
  }
  if (description.memory_model == MemoryModel::kSeparate && description.memory_bytes < device_needed) {
    short_of += id + "'s memory: needs " + gib(device_needed) + " (data and diff), has " +
                gib(description.memory_bytes) + "; ";
  }
  if (!short_of.empty()) {
    short_of.resize(short_of.size() - 2);
    GTEST_SKIP() << id << ": a Blob of " << count << " floats does not fit: " << short_of;
  }

  const Pattern p(count);
  const Expected exact(p);
  ASSERT_LT(exact.bound, 1 << 22) << "the sums would not be exact in float; a smaller count";

  const std::vector<int> shape{2, static_cast<int>(count / 2)};  // dimensions are ints, the count 64-bit
  // Makes the blob on its device, fills it, and puts both heads on the device (Caffe's GPU mode).
  auto make = [&](const std::string& device_id) {
    DeviceGuard guard(device_id);
    auto made = std::make_unique<Blob<float>>(shape);
    float* data = made->mutable_cpu_data();  // zeros
    float* diff = made->mutable_cpu_diff();
    for (std::int64_t i : p.positions()) {
      data[i] = p.data(i);
      diff[i] = p.diff(i);
    }
    made->mutable_gpu_data();
    made->mutable_gpu_diff();
    return made;
  };
  const std::unique_ptr<Blob<float>> blob = make(id), ref = make(ref_id);
  // `step` on a blob, under the blob's device.
  auto on = [](Blob<float>& b, auto step) {
    DeviceGuard guard(b.data()->device());
    return step(b);
  };
  // The same float from both blobs, and the exact one.
  auto same = [&](const char* what, double expected, auto step) {
    const float got = on(*blob, step), want = on(*ref, step);
    EXPECT_EQ(got, want) << what << ": " << id << " against " << ref_id;
    EXPECT_EQ(got, static_cast<float>(expected)) << what << " on " << id << " against the exact value";
  };
  auto data_of = [](Blob<float>& b) { return b.cpu_data(); };
  auto diff_of = [](Blob<float>& b) { return b.cpu_diff(); };

  same("Device::dot(data, diff)", exact.dot, [&](Blob<float>& b) {
    float result = -1;
    b.data()->device()->dot(count, b.gpu_data(), 0, b.gpu_diff(), 0, &result);
    return result;
  });
  same("asum_diff", exact.asum_diff, [](Blob<float>& b) { return b.asum_diff(); });
  same("sumsq_diff", exact.sumsq_diff, [](Blob<float>& b) { return b.sumsq_diff(); });
  for (auto* each : {blob.get(), ref.get()}) on(*each, [](Blob<float>& b) { b.Update(); });
  same("asum_data after Update", exact.asum_updated, [](Blob<float>& b) { return b.asum_data(); });
  same("sumsq_data after Update", exact.sumsq_updated, [](Blob<float>& b) { return b.sumsq_data(); });
  expect_array("data after Update", id, on(*blob, data_of), ref_id, on(*ref, data_of), count,
               [&](std::int64_t i) { return p.updated(i); });

  same("asum_data after scale_data(0.5)", exact.asum_updated / 2,
       [](Blob<float>& b) { return b.scale_data(0.5f), b.asum_data(); });
  expect_array("data after scale_data(0.5)", id, on(*blob, data_of), ref_id, on(*ref, data_of), count,
               [&](std::int64_t i) { return p.updated(i) / 2; });
  same("asum_diff after scale_diff(0.5)", exact.asum_diff / 2,
       [](Blob<float>& b) { return b.scale_diff(0.5f), b.asum_diff(); });
  expect_array("diff after scale_diff(0.5)", id, on(*blob, diff_of), ref_id, on(*ref, diff_of), count,
               [&](std::int64_t i) { return p.diff(i) / 2; });
}  // both blobs are freed here, whatever failed

INSTANTIATE_TEST_SUITE_P(Devices, LargeBlob, ::testing::ValuesIn(devices_under_test()),
                         blobrt::testing::device_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LargeBlob);  // only the reference device here

}  // namespace
}  // namespace blobrt
