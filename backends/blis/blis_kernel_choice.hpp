// Which of BLIS's kernel sets ("sub-configurations") the plugin runs. BLIS 0.9 picks one from
// cpuid when it initialises (at its first call) and knows AVX-512 only on the Intel CPUs of its
// own table: on other CPUs with AVX-512 (AMD Zen 4 and later) it falls back to 'generic', its
// reference kernels. On this project's AMD EPYC that ran a 500x64x800 sgemm at 38 GFLOP/s,
// against 156 with BLIS's skx kernels and 116 with OpenBLAS, and made `caffe time` of LeNet
// 2.3x slower than BVLC Caffe with OpenBLAS (docs/performance.md, "Caffe's own training stack").
//
// So, once, before the plugin's first BLIS call: where the CPU has the AVX-512 subsets skx's
// kernels use (F, CD, DQ, BW, VL) and this BLIS was built with skx, the plugin sets
// BLIS_ARCH_TYPE to skx, which BLIS reads as it initialises. A BLIS_ARCH_TYPE the user set
// stands, and so does the choice of a BLIS that another part of the process initialised first;
// other CPUs keep BLIS's own choice (it knows the AVX2 Intel and AMD generations). The device's
// details name the kernels in use and why.
#ifndef BLOBRT_BLIS_KERNEL_CHOICE_HPP
#define BLOBRT_BLIS_KERNEL_CHOICE_HPP

#include <blis.h>

#include <cstdlib>
#include <string>

#include "blobrt/plugin_kit.hpp"

namespace blis_plugin {

inline bool cpu_has_skx_subsets() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
}

// Decided once, at the first call, which must come before any BLIS call; says who chose.
inline const std::string& kernel_choice() {
  static const std::string why = []() -> std::string {
    if (!blobrt::plugin_kit::getenv("BLIS_ARCH_TYPE").empty()) return "BLIS_ARCH_TYPE set by the user";
#ifdef BLIS_CONFIG_SKX
    if (cpu_has_skx_subsets()) {
      ::setenv("BLIS_ARCH_TYPE", std::to_string(static_cast<int>(BLIS_ARCH_SKX)).c_str(), 0);
      return "skx chosen by blobrt: the CPU has AVX-512 F/CD/DQ/BW/VL";
    }
#endif
    return "BLIS's own choice for this CPU";
  }();
  return why;
}

// The kernel set BLIS runs. BLIS is initialised first: asked before that, BLIS 0.9 looks its
// choice up in tables it has not filled yet and aborts.
inline std::string kernels_in_use() {
  kernel_choice();
  bli_init();
  return bli_arch_string(bli_arch_query_id());
}

}  // namespace blis_plugin

#endif
