// Which of BLIS's kernel sets ("sub-configurations") the plugin runs. BLIS 0.9 picks one from
// cpuid when it initialises (at its first call) and knows AVX-512 only on the Intel CPUs of its
// own table: on other CPUs with AVX-512 (AMD Zen 4 and later) it falls back to 'generic', its
// reference kernels. On this project's AMD EPYC that ran a 500x64x800 sgemm at 38 GFLOP/s,
// against 156 with BLIS's skx kernels and 116 with OpenBLAS, and made `caffe time` of LeNet
// 2.3x slower than BVLC Caffe with OpenBLAS (docs/performance.md, "Caffe's own training stack").
//
// So, once, before the plugin's first BLIS call: on an AMD CPU with the AVX-512 subsets skx's
// kernels use (F, CD, DQ, BW, VL), where this BLIS was built with skx, the plugin sets
// BLIS_ARCH_TYPE to skx, initialises BLIS (which reads it then and only then), and takes the
// variable away again, so that no child process inherits it. Intel CPUs keep BLIS's own
// choice (BLIS counts their FMA units and picks haswell on purpose where skx would be
// slower), as do AVX2-only CPUs, a BLIS_ARCH_TYPE the user set, and a BLIS that another part
// of the process initialised first. The device's details name the kernels in use and who
// chose them. (The variable is set while the plugin's table is first asked for, when
// blobrt loads the plugin; the process's other threads are not reading the environment then
// in any program blobrt knows of, but glibc's setenv is not safe against a concurrent getenv.)
#ifndef BLOBRT_BLIS_KERNEL_CHOICE_HPP
#define BLOBRT_BLIS_KERNEL_CHOICE_HPP

#include <blis.h>

#include <cstdlib>
#include <string>

#include "blobrt/plugin_kit.hpp"

namespace blis_plugin {

inline bool amd_cpu_with_skx_subsets() {
  __builtin_cpu_init();
  return __builtin_cpu_is("amd") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
}

// Decided once, at the first call, which must come before any BLIS call; says who chose.
inline const std::string& kernel_choice() {
  static const std::string why = []() -> std::string {
    if (!blobrt::plugin_kit::getenv("BLIS_ARCH_TYPE").empty()) return "BLIS_ARCH_TYPE set by the user";
#ifdef BLIS_CONFIG_SKX
    if (amd_cpu_with_skx_subsets()) {
      ::setenv("BLIS_ARCH_TYPE", std::to_string(static_cast<int>(BLIS_ARCH_SKX)).c_str(), 1);
      bli_init();  // reads BLIS_ARCH_TYPE now, if BLIS was not initialised before
      ::unsetenv("BLIS_ARCH_TYPE");
      if (bli_arch_query_id() == BLIS_ARCH_SKX) {
        return "skx chosen by blobrt: an AMD CPU with AVX-512 F/CD/DQ/BW/VL, which BLIS 0.9 does not know";
      }
      return "BLIS's own choice: BLIS was initialised before the plugin could choose";
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
