// Memory exhaustion: a first touch that cannot be allocated throws blobrt::Error naming
// the bytes and the device; nothing leaks; the blob and the runtime stay usable; many
// allocate/free cycles leave resident memory flat.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <string>

#include "backend_param.hpp"
#include "blobrt/blob.hpp"

namespace blobrt {
namespace {

long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

class ExhaustionTest : public testing::OnEveryDevice {};

TEST_P(ExhaustionTest, ImpossibleFirstTouchIsAnErrorAndTheBlobSurvives) {
  // 2^20 x 2^20 floats = 4 TiB: more than any machine here can give.
  Blob<float> blob(std::vector<int>{1 << 20, 1 << 20});
  const std::string bytes = std::to_string(4ULL << 40);
  for (int side = 0; side < 2; ++side) {
    try {
      side == 0 ? (void)blob.mutable_cpu_data() : (void)blob.mutable_gpu_data();
      ADD_FAILURE() << "a 4 TiB allocation succeeded";
    } catch (const OutOfMemoryError& e) {  // typed: a caller can tell it from other errors
      std::string what = e.what();
      EXPECT_NE(what.find(bytes), std::string::npos) << what;
      EXPECT_NE(what.find(GetParam().substr(0, GetParam().find(':'))), std::string::npos) << what;
    }
    EXPECT_EQ(blob.data()->head(), SyncedMemory::UNINITIALIZED);
  }
  // The same blob, reshaped to something reasonable, works (capacity was never taken).
  blob.Reshape(std::vector<int>{1000});
  blob.mutable_cpu_data()[999] = 3;
  EXPECT_EQ(blob.asum_data(), 3);
  Blob<float> other(1, 1, 1, 10);
  EXPECT_EQ(other.asum_data(), 0);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

TEST_P(ExhaustionTest, AllocateFreeCyclesLeaveMemoryFlat) {
  if (kAddressSanitizer) {
    GTEST_SKIP() << "AddressSanitizer's quarantine keeps freed memory resident; its leak checker covers this build";
  }
  auto cycle = [] {
    Blob<float> blob(std::vector<int>{1 << 16});  // 256 KiB, data and diff
    blob.mutable_cpu_data()[0] = 1;
    blob.mutable_gpu_diff();
    blob.cpu_diff();
  };
  for (int i = 0; i < 200; ++i) cycle();  // warm allocator caches
  long before = resident_bytes();
  for (int i = 0; i < 10000; ++i) cycle();
  long growth = resident_bytes() - before;
  EXPECT_LT(growth, 4 << 20) << "resident memory grew by " << growth << " bytes over 10,000 cycles";
}

INSTANTIATE_ON_EVERY_DEVICE(ExhaustionTest);

}  // namespace
}  // namespace blobrt
