// memcpy with non-temporal (streaming) stores, for copies larger than the cache.
//
// An ordinary store first reads the destination's cache line (read for ownership), so a
// copy that does not fit in the cache moves three bytes for every two it needs: glibc's
// memcpy switches to streaming stores only above its own threshold (about 3/4 of the
// last-level cache per thread), which the per-thread chunks of a large copy stay under.
// Streaming stores skip that read; the benchmark's probe (benchmarks/bench_probe.cpp)
// shows copies of 2^22..2^26 elements 1.5-2x faster with them on this machine.
// Header-only: used by libblobrt and by the plugins that include level1.hpp.
#ifndef BLOBRT_KERNELS_STREAM_COPY_HPP
#define BLOBRT_KERNELS_STREAM_COPY_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace blobrt_kernels {

// Copies of more than this many bytes stream their stores. Measured here (2 cores, a
// 32 MiB L3 slice; blobrt-bench `device/host:0/d2d` against the probe): at 16 MiB plain memcpy is
// faster (65 against 45 GB/s: source and destination partly stay in the cache between
// calls), at 32 MiB streaming is (44 against 34), at 64 MiB more so (42 against 29). The
// cache size is not asked of sysconf: in a virtual machine it reports the host's whole L3
// (256 MiB here), not the slice the guest gets.
constexpr std::size_t kStreamingCopyBytes = std::size_t(16) << 20;

// memcpy(dst, src, bytes) for non-overlapping ranges with streaming stores of 16 bytes
// where the destination is aligned, ending with a store fence so that the data is visible
// to any thread that synchronises with this one afterwards.
inline void stream_copy(char* dst, const char* src, std::size_t bytes) {
#if defined(__SSE2__)
  std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15;
  if (head > bytes) head = bytes;
  std::memcpy(dst, src, head);
  std::size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace blobrt_kernels

#endif
