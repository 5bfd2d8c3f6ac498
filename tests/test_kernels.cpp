// The host kernels' byte copies (core/kernels/blobrt_kernels): streaming stores for large
// copies must copy exactly what memcpy does, whatever the alignment of either end.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "blobrt_kernels/level1.hpp"
#include "blobrt_kernels/stream_copy.hpp"

namespace {

std::vector<unsigned char> pattern(std::size_t bytes, unsigned seed) {
  std::vector<unsigned char> v(bytes);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<unsigned char>(x >> 24);
  }
  return v;
}

// Every length from 0 to 300 bytes at every alignment of source and destination within
// 16 bytes: the head (up to alignment), the 64-byte streaming body and the tail.
TEST(StreamCopyTest, EveryHeadAndTailMatchesMemcpy) {
  const std::vector<unsigned char> src = pattern(400, 1);
  for (std::size_t dst_off = 0; dst_off < 16; ++dst_off) {
    for (std::size_t src_off = 0; src_off < 16; src_off += 5) {
      for (std::size_t bytes = 0; bytes <= 300; ++bytes) {
        std::vector<unsigned char> dst(400, 0xee), want(400, 0xee);
        blobrt_kernels::stream_copy(reinterpret_cast<char*>(dst.data()) + dst_off,
                                    reinterpret_cast<const char*>(src.data()) + src_off, bytes);
        std::memcpy(want.data() + dst_off, src.data() + src_off, bytes);
        ASSERT_EQ(dst, want) << "dst offset " << dst_off << ", src offset " << src_off << ", " << bytes << " bytes";
      }
    }
  }
}

// A copy above the streaming threshold, split across threads, at odd offsets.
TEST(StreamCopyTest, LargeCopyBytesAboveTheThresholdIsExact) {
  const std::size_t bytes = blobrt_kernels::kStreamingCopyBytes + 4099;
  const std::vector<unsigned char> src = pattern(bytes + 8, 2);
  std::vector<unsigned char> dst(bytes + 16, 0xee);
  blobrt_kernels::copy_bytes(dst.data() + 3, src.data() + 5, bytes);
  EXPECT_EQ(dst[0], 0xee);
  EXPECT_EQ(dst[2], 0xee);
  EXPECT_EQ(std::memcmp(dst.data() + 3, src.data() + 5, bytes), 0);
  EXPECT_EQ(dst[bytes + 3], 0xee);
}

// Overlapping ranges keep memmove semantics (one thread, no streaming).
TEST(StreamCopyTest, OverlappingLargeCopyIsAMove) {
  const std::size_t bytes = blobrt_kernels::kStreamingCopyBytes + 64;
  std::vector<unsigned char> buffer = pattern(bytes + 1000, 3);
  std::vector<unsigned char> want = buffer;
  std::memmove(want.data() + 1000, want.data(), bytes);
  blobrt_kernels::copy_bytes(buffer.data() + 1000, buffer.data(), bytes);
  EXPECT_TRUE(buffer == want);
}

}  // namespace
