// The raw library calls without blobrt, for the dispatch overhead (n = 1, in ns) and the
// large-n ratio: BLIS's bli_?axpyv etc. as the library runs them (one thread), OpenBLAS's
// cblas (what a CPU user would pick instead; loaded from libopenblas.so.0 with Boost.DLL
// so its cblas_* cannot be confused with BLIS's), and CLBlast on OpenCL device 0.
#include <blis.h>

#include <boost/dll/shared_library.hpp>

#include <cstdlib>
#include <memory>
#include <vector>

#ifdef BLOBRT_BENCH_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast.h>
#endif

#include "bench_common.hpp"

namespace blobrt::bench {
namespace {

template <typename T>
struct HostVectors {
  explicit HostVectors(std::int64_t n)
      : x(static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64))),
        y(static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64))) {
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] = T(1) + T(i % 7) * T(0.125);
      y[i] = T(2);
    }
  }
  ~HostVectors() {
    std::free(x);
    std::free(y);
  }
  T* x;
  T* y;
};

template <typename T>
void blis(benchmark::State& state, Level1 op, std::int64_t n) {
  HostVectors<T> v(n);
  T a = T(0.999), s = T(-1), r = 0;
  for (auto _ : state) {
    if constexpr (sizeof(T) == 4) {
      switch (op) {
        case Level1::kAxpy: bli_saxpyv(BLIS_NO_CONJUGATE, n, &a, v.x, 1, v.y, 1); break;
        case Level1::kDot: bli_sdotv(BLIS_NO_CONJUGATE, BLIS_NO_CONJUGATE, n, v.x, 1, v.y, 1, &r); break;
        case Level1::kAsum: bli_sasumv(n, v.x, 1, &r); break;
        case Level1::kScal: bli_sscalv(BLIS_NO_CONJUGATE, n, &s, v.x, 1); break;
      }
    } else {
      switch (op) {
        case Level1::kAxpy: bli_daxpyv(BLIS_NO_CONJUGATE, n, &a, v.x, 1, v.y, 1); break;
        case Level1::kDot: bli_ddotv(BLIS_NO_CONJUGATE, BLIS_NO_CONJUGATE, n, v.x, 1, v.y, 1, &r); break;
        case Level1::kAsum: bli_dasumv(n, v.x, 1, &r); break;
        case Level1::kScal: bli_dscalv(BLIS_NO_CONJUGATE, n, &s, v.x, 1); break;
      }
    }
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
  }
}

// OpenBLAS's cblas entry points, resolved in libopenblas itself.
struct OpenBlas {
  boost::dll::shared_library library;
  void (*saxpy)(int, float, const float*, int, float*, int) = nullptr;
  void (*daxpy)(int, double, const double*, int, double*, int) = nullptr;
  float (*sdot)(int, const float*, int, const float*, int) = nullptr;
  double (*ddot)(int, const double*, int, const double*, int) = nullptr;
  float (*sasum)(int, const float*, int) = nullptr;
  double (*dasum)(int, const double*, int) = nullptr;
  void (*sscal)(int, float, float*, int) = nullptr;
  void (*dscal)(int, double, double*, int) = nullptr;
};

std::shared_ptr<OpenBlas> openblas() {
  static std::shared_ptr<OpenBlas> loaded = []() -> std::shared_ptr<OpenBlas> {
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer aborts on RTLD_DEEPBIND (google/sanitizers#611), and timings under a
    // sanitizer mean nothing: no OpenBLAS yardstick there.
    return nullptr;
#endif
    auto o = std::make_shared<OpenBlas>();
    try {
      o->library.load("libopenblas.so.0", boost::dll::load_mode::search_system_folders |
                                              boost::dll::load_mode::rtld_local |
                                              boost::dll::load_mode::rtld_deepbind);
    } catch (const std::exception&) {
      return nullptr;
    }
    o->saxpy = &o->library.get<void(int, float, const float*, int, float*, int)>("cblas_saxpy");
    o->daxpy = &o->library.get<void(int, double, const double*, int, double*, int)>("cblas_daxpy");
    o->sdot = &o->library.get<float(int, const float*, int, const float*, int)>("cblas_sdot");
    o->ddot = &o->library.get<double(int, const double*, int, const double*, int)>("cblas_ddot");
    o->sasum = &o->library.get<float(int, const float*, int)>("cblas_sasum");
    o->dasum = &o->library.get<double(int, const double*, int)>("cblas_dasum");
    o->sscal = &o->library.get<void(int, float, float*, int)>("cblas_sscal");
    o->dscal = &o->library.get<void(int, double, double*, int)>("cblas_dscal");
    return o;
  }();
  return loaded;
}

template <typename T>
void cblas(benchmark::State& state, Level1 op, std::int64_t n) {
  auto o = openblas();
  HostVectors<T> v(n);
  T a = T(0.999), s = T(-1), r = 0;
  int m = static_cast<int>(n);  // the cblas interface is 32-bit
  for (auto _ : state) {
    if constexpr (sizeof(T) == 4) {
      switch (op) {
        case Level1::kAxpy: o->saxpy(m, a, v.x, 1, v.y, 1); break;
        case Level1::kDot: r = o->sdot(m, v.x, 1, v.y, 1); break;
        case Level1::kAsum: r = o->sasum(m, v.x, 1); break;
        case Level1::kScal: o->sscal(m, s, v.x, 1); break;
      }
    } else {
      switch (op) {
        case Level1::kAxpy: o->daxpy(m, a, v.x, 1, v.y, 1); break;
        case Level1::kDot: r = o->ddot(m, v.x, 1, v.y, 1); break;
        case Level1::kAsum: r = o->dasum(m, v.x, 1); break;
        case Level1::kScal: o->dscal(m, s, v.x, 1); break;
      }
    }
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
  }
}

#ifdef BLOBRT_BENCH_OPENCL
struct ClSetup {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
};

ClSetup* opencl() {
  static ClSetup* setup = []() -> ClSetup* {
    cl_platform_id platform;
    cl_uint count = 0;
    if (clGetPlatformIDs(1, &platform, &count) != CL_SUCCESS || count == 0) return nullptr;
    auto* s = new ClSetup;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &s->device, nullptr) != CL_SUCCESS) return nullptr;
    s->context = clCreateContext(nullptr, 1, &s->device, nullptr, nullptr, nullptr);
    s->queue = clCreateCommandQueue(s->context, s->device, 0, nullptr);
    return s;
  }();
  return setup;
}

template <typename T>
void clblast_raw(benchmark::State& state, Level1 op, std::int64_t n) {
  ClSetup* s = opencl();
  std::vector<T> host(n, T(1.5));
  size_t bytes = n * sizeof(T);
  cl_mem x = clCreateBuffer(s->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host.data(), nullptr);
  cl_mem y = clCreateBuffer(s->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host.data(), nullptr);
  cl_mem out = clCreateBuffer(s->context, CL_MEM_READ_WRITE, sizeof(T), nullptr, nullptr);
  T a = T(0.999), r = 0;
  auto once = [&] {
    switch (op) {
      case Level1::kAxpy: clblast::Axpy<T>(n, a, x, 0, 1, y, 0, 1, &s->queue); break;
      case Level1::kScal: clblast::Scal<T>(n, T(-1), x, 0, 1, &s->queue); break;
      case Level1::kDot: clblast::Dot<T>(n, out, 0, x, 0, 1, y, 0, 1, &s->queue); break;
      case Level1::kAsum: clblast::Asum<T>(n, out, 0, x, 0, 1, &s->queue); break;
    }
    if (op == Level1::kDot || op == Level1::kAsum) {
      clEnqueueReadBuffer(s->queue, out, CL_TRUE, 0, sizeof(T), &r, 0, nullptr, nullptr);
    } else {
      clFinish(s->queue);
    }
  };
  once();
  for (auto _ : state) {
    once();
    benchmark::DoNotOptimize(r);
  }
  clReleaseMemObject(x);
  clReleaseMemObject(y);
  clReleaseMemObject(out);
}
#endif

struct Op {
  const char* name;
  Level1 op;
  Pattern pattern;
};
const Op kOps[] = {{"axpy", Level1::kAxpy, Pattern::kTriad},
                   {"dot", Level1::kDot, Pattern::kDot},
                   {"asum", Level1::kAsum, Pattern::kSum},
                   {"scal", Level1::kScal, Pattern::kScale}};

template <typename T>
void register_type() {
  for (const Op& op : kOps) {
    for (std::int64_t n : sizes()) {
      std::string o = op.name;
      Level1 l = op.op;
      std::int64_t bytes = bytes_moved(op.pattern, n, sizeof(T));
      reg(name("raw", "blis", o, dtype_name<T>(), n),
                                   [l, n, bytes](benchmark::State& s) {
                                     blis<T>(s, l, n);
                                     s.SetBytesProcessed(s.iterations() * bytes);
                                   });
      if (openblas()) {
        reg(name("raw", "openblas", o, dtype_name<T>(), n),
                                     [l, n, bytes](benchmark::State& s) {
                                       cblas<T>(s, l, n);
                                       s.SetBytesProcessed(s.iterations() * bytes);
                                     });
      }
#ifdef BLOBRT_BENCH_OPENCL
      if (opencl()) {
        reg(name("raw", "clblast", o, dtype_name<T>(), n),
                                     [l, n, bytes](benchmark::State& s) {
                                       clblast_raw<T>(s, l, n);
                                       s.SetBytesProcessed(s.iterations() * bytes);
                                     });
      }
#endif
    }
  }
}

}  // namespace

void register_raw() {
  register_type<float>();
  register_type<double>();
}

}  // namespace blobrt::bench
