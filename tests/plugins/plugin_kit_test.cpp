// The plugin kit's CPU BLAS device (blobrt/plugin_kit_host.hpp, HostBlasDevice): what it
// hands a library's typed calls (element offsets, Caffe's row-major leading dimensions with
// and without transposition, both precisions, large calls split into chunks and bands),
// checked through the table table_of builds, with calls that compute with plain loops.
#include <gtest/gtest.h>

#include <cmath>

#include <atomic>
#include <cstdint>
#include <vector>

#include "blobrt/plugin_kit_host.hpp"
#include "blobrt_kernels/small_gemm.hpp"

namespace {

namespace kit = blobrt::plugin_kit;

// A "library": plain loops on host arrays, counting its calls.
struct Loops {
  static inline std::atomic<int> axpy_calls{0}, gemv_calls{0}, gemm_calls{0};
  template <typename T>
  static void axpy(int64_t n, T alpha, T* x, T* y) {
    ++axpy_calls;
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
  }
  template <typename T>
  static void scal(int64_t n, T alpha, T* x) {
    for (int64_t i = 0; i < n; ++i) x[i] *= alpha;
  }
  template <typename T>
  static void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, T* a, int64_t lda, T* b, int64_t ldb,
                   T beta, T* c, int64_t ldc) {
    ++gemm_calls;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
        }
        c[i * ldc + j] = alpha * sum + beta * c[i * ldc + j];
      }
    }
  }
  // A is rows x cols as stored; y = alpha op(A) x + beta y.
  template <typename T>
  static void gemv(bool t, int64_t rows, int64_t cols, T alpha, T* a, int64_t lda, T* x, T beta, T* y) {
    ++gemv_calls;
    const int64_t out = t ? cols : rows, in = t ? rows : cols;
    for (int64_t i = 0; i < out; ++i) {
      T sum = 0;
      for (int64_t j = 0; j < in; ++j) sum += (t ? a[j * lda + i] : a[i * lda + j]) * x[j];
      y[i] = alpha * sum + beta * y[i];
    }
  }
};

struct LoopsDevice : kit::HostBlasDevice<Loops> {
  static int device_properties(int32_t, blobrt_device_properties* out, blobrt_error*) {
    kit::fill_host_properties(out);
    return BLOBRT_OK;
  }
};

const blobrt_plugin_v1& table() {
  static const blobrt_plugin_v1 t = kit::table_of<LoopsDevice>("loops", "plain loops");
  return t;
}

// Small integers: every sum below is exact in float.
template <typename T>
std::vector<T> values(std::size_t n, int seed) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<int>((i * 7 + seed * 3) % 11) - 5);
  return v;
}

TEST(PluginKitTest, TableHasTheLibrarysCallsAndTheKitsKernels) {
  const blobrt_plugin_v1& t = table();
  EXPECT_EQ(t.saxpy, &kit::HostBlasDevice<Loops>::axpy<float>);
  EXPECT_EQ(t.dscal, &kit::HostBlasDevice<Loops>::scal<double>);
  EXPECT_EQ(t.sdot, &kit::HostMemoryDevice::dot<float>);
  EXPECT_EQ(t.allocate, &kit::HostMemory::allocate);
  EXPECT_NE(t.gemm, nullptr);
  EXPECT_NE(t.elementwise, nullptr);
  EXPECT_EQ(t.view, nullptr);  // the core does views of host pointers itself
  EXPECT_EQ(t.struct_size, sizeof(blobrt_plugin_v1));
}

// The kit's table gemm against a plain loop; `library` says whether the library's gemm must
// be the one called (above blobrt_kernels::is_small_gemm) or must not be (below it).
template <typename T>
void check_gemm(int32_t precision, int64_t m, int64_t n, int64_t k, bool library) {
  const int64_t ao = 2, bo = 3, co = 1;
  ASSERT_EQ(blobrt_kernels::is_small_gemm(m, n, k), !library);
  Loops::gemm_calls = 0;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      std::vector<T> a = values<T>(ao + m * k, 1), b = values<T>(bo + k * n, 2), c = values<T>(co + m * n, 3);
      std::vector<T> expected = c;
      const int64_t lda = ta ? m : k, ldb = tb ? k : n;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          T sum = 0;
          for (int64_t p = 0; p < k; ++p) {
            sum += a[ao + (ta ? p * lda + i : i * lda + p)] * b[bo + (tb ? j * ldb + p : p * ldb + j)];
          }
          expected[co + i * n + j] = 2 * sum + 3 * c[co + i * n + j];
        }
      }
      ASSERT_EQ(table().gemm(nullptr, precision, ta, tb, m, n, k, 2.0, a.data(), ao, b.data(), bo, 3.0, c.data(), co,
                             nullptr),
                BLOBRT_OK);
      for (std::size_t i = 0; i < c.size(); ++i) {
        ASSERT_NEAR(c[i], expected[i], 1e-5 * (1 + std::abs(expected[i])))
            << "element " << i << ", trans_a " << ta << " trans_b " << tb << ", " << m << "x" << n << "x" << k;
      }
    }
  }
  EXPECT_EQ(Loops::gemm_calls.load(), library ? 4 : 0) << m << "x" << n << "x" << k;
}

TEST(PluginKitTest, GemmGetsOffsetsAndCaffesLeadingDimensions) {
  check_gemm<float>(BLOBRT_FLOAT32, 40, 36, 30, true);
  check_gemm<double>(BLOBRT_FLOAT64, 40, 36, 30, true);
}

// Problems too small for a library call to pay (Caffe's per-image bias outer products, the
// softmax's 10x1x1) run on blobrt's small-gemm loops, with the same results.
TEST(PluginKitTest, SmallGemmsStayOnTheKitsLoops) {
  check_gemm<float>(BLOBRT_FLOAT32, 3, 4, 5, false);
  check_gemm<double>(BLOBRT_FLOAT64, 3, 4, 5, false);
  check_gemm<float>(BLOBRT_FLOAT32, 64, 500, 1, false);  // ip1's bias
  check_gemm<float>(BLOBRT_FLOAT32, 32, 32, 32, false);  // 2^15 multiply-adds, the limit
}

// y = 2 op(A) x + y over bands of y: large enough that the kit splits it (2^19 elements of A
// per band at least), so every band must start at its own rows (or columns) of A.
void check_gemv(bool trans) {
  const int64_t m = trans ? 8 : (int64_t(1) << 17) + 3, n = trans ? (int64_t(1) << 17) + 3 : 8, ao = 5;
  std::vector<double> a = values<double>(ao + m * n, 4), x = values<double>(trans ? m : n, 5);
  std::vector<double> y = values<double>(trans ? n : m, 6), expected = y;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    double sum = 0;
    for (std::size_t j = 0; j < x.size(); ++j) sum += a[ao + (trans ? j * n + i : i * n + j)] * x[j];
    expected[i] = 2 * sum + y[i];
  }
  Loops::gemv_calls = 0;
  ASSERT_EQ(table().gemv(nullptr, BLOBRT_FLOAT64, trans ? BLOBRT_TRANS : BLOBRT_NO_TRANS, m, n, 2.0, a.data(), ao,
                         x.data(), 0, 1.0, y.data(), 0, nullptr),
            BLOBRT_OK);
  EXPECT_EQ(y, expected);
  EXPECT_GT(Loops::gemv_calls.load(), 1) << "one call: the kit did not split a large gemv";
}

TEST(PluginKitTest, LargeGemvIsSplitIntoBandsOfY) {
  check_gemv(false);
  check_gemv(true);
}

TEST(PluginKitTest, LargeAxpyIsSplitIntoChunks) {
  const int64_t n = (int64_t(1) << 20) + 5, xo = 3, yo = 7;
  std::vector<float> x = values<float>(xo + n, 7), y = values<float>(yo + n, 8), expected = y;
  for (int64_t i = 0; i < n; ++i) expected[yo + i] += 3 * x[xo + i];
  Loops::axpy_calls = 0;
  ASSERT_EQ(table().saxpy(nullptr, n, 3.0f, x.data(), xo, y.data(), yo, nullptr), BLOBRT_OK);
  EXPECT_EQ(y, expected);
  EXPECT_GT(Loops::axpy_calls.load(), 1);
}

}  // namespace
