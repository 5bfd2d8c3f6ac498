// bernoulli_mask (blobrt/math_operations.h): a 0/1 mask drawn from the Philox4x32-10 stream,
// the host kernel and its MathSemantics (blobrt_kernels/math_operation.hpp), and the
// generator itself, which every backend's kernel computes the same way (the conformance suite
// compares their masks with this one bit for bit; tests/core check it against Random123's
// known answers).
#ifndef BLOBRT_KERNELS_BERNOULLI_MASK_HPP
#define BLOBRT_KERNELS_BERNOULLI_MASK_HPP

#include <array>
#include <cstdint>
#include <limits>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"
#include "blobrt_kernels/parallel.hpp"

namespace blobrt_kernels {

// Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC 2011): ten rounds of two 32 x 32 -> 64-bit
// multiplications on the counter, the key bumped by the Weyl constants between rounds.
struct Philox4x32 {
  using Block = std::array<std::uint32_t, 4>;
  static constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // the round multipliers
  static constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // the key's Weyl steps

  static Block block(Block c, std::uint32_t k0, std::uint32_t k1) {
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k0 += kW0;
        k1 += kW1;
      }
      const std::uint64_t p0 = std::uint64_t{kM0} * c[0], p1 = std::uint64_t{kM1} * c[2];
      c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<std::uint32_t>(p1),
           static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<std::uint32_t>(p0)};
    }
    return c;
  }
  // The four words of the stream keyed by `seed` from word 4 * b.
  static Block words(std::uint64_t seed, std::uint64_t b) {
    return block({static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32), 0, 0},
                 static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  }
};

template <>
struct MathSemantics<MathOp::bernoulli_mask> {
  using Args = MathArgs<MathOp::bernoulli_mask>;
  static std::array<Operand, 1> operands(const Args& a) { return {{{"mask", a.mask, a.mask_offset, a.n, false, true}}}; }
  static bool only_scales(const Args&, double*) { return false; }
  static const char* invalid(const Args& a) {
    if (a.threshold > std::int64_t{std::numeric_limits<std::uint32_t>::max()}) {
      return "the threshold must be below 2^32 (it is compared with 32-bit words)";
    }
    if (a.n < 0 || a.counter < 0) return nullptr;  // the sizes' own check says so
    if (a.n > std::numeric_limits<std::int64_t>::max() - a.counter) return "counter + n must stay below 2^63";
    return nullptr;
  }
  // Block by block, the elements split across the team (ten rounds per four words cost far
  // more than the store: a smaller share than a streaming operation's is worth a thread);
  // the blocks at either end of a share may be partial.
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    T* mask = p[0];
    const auto threshold = static_cast<std::uint32_t>(a.threshold);
    const auto seed = static_cast<std::uint64_t>(a.seed), first = static_cast<std::uint64_t>(a.counter);
    parallel_for(
        a.n,
        [&](std::int64_t begin, std::int64_t stop) {
          const std::uint64_t end = first + static_cast<std::uint64_t>(stop);
          for (std::uint64_t w = first + static_cast<std::uint64_t>(begin); w < end;) {
            const Philox4x32::Block words = Philox4x32::words(seed, w >> 2);
            for (std::uint64_t lane = w & 3; lane < 4 && w < end; ++lane, ++w) {
              mask[w - first] = words[lane] > threshold ? T(1) : T(0);
            }
          }
        },
        kParallelThreshold / 16);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "bernoulli_mask";
  }
};

}  // namespace blobrt_kernels

#endif
