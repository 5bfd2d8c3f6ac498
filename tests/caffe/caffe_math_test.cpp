// Every function of Caffe's math_functions.hpp through <blobrt/caffe_compat.hpp>, both
// halves, on every device, against a plain host reference with Caffe's semantics:
// transposes, n = 0 and n = 1, offset host pointers, in-place calls Caffe makes, and
// caffe_copy following Caffe::mode (GPU mode on gpu_data() handles copies on the device).
#include <gtest/gtest.h>

#include "backend_param.hpp"
#include "blobrt/caffe_compat.hpp"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace caffe;  // as Caffe code does

template <typename T>
vector<T> ramp(int n, T scale, T shift) {
  vector<T> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<T>(((i * 7) % 11) - 5) * scale + shift;
  return v;
}

// Plain row-major reference for C = alpha op(A) op(B) + beta C (Caffe's leading dimensions).
template <typename T>
void ref_gemm(bool ta, bool tb, int m, int n, int k, T alpha, const T* a, const T* b, T beta, T* c) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += double(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      c[i * n + j] = static_cast<T>(alpha * s + (beta == 0 ? 0 : beta * c[i * n + j]));
    }
  }
}

template <typename T>
void expect_near(const vector<T>& got, const vector<T>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(double(want[i])))) << what << " at " << i;
  }
}

// A blob holding `values`, for the device half.
template <typename T>
shared_ptr<Blob<T> > blob_of(const vector<T>& values) {
  shared_ptr<Blob<T> > b(new Blob<T>(vector<int>{static_cast<int>(values.size())}));
  std::copy(values.begin(), values.end(), b->mutable_cpu_data());
  return b;
}
template <typename T>
vector<T> values_of(Blob<T>& b) {
  return vector<T>(b.cpu_data(), b.cpu_data() + b.count());
}

template <typename T>
class CaffeMathTest : public blobrt::testing::OnEveryDevice {
 public:
  void TearDown() override { Caffe::set_mode(Caffe::CPU); }
  double tol() const { return std::is_same<T, float>::value ? 1e-5 : 1e-12; }

  // gemm on both halves against the reference, every transpose pair.
  void check_gemm(int m, int n, int k) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        const vector<T> a = ramp<T>(m * k, T(0.5), T(0.25)), b = ramp<T>(k * n, T(-0.25), T(1));
        vector<T> c = ramp<T>(m * n, T(1), T(0)), want = c;
        const CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
        ref_gemm<T>(ta, tb, m, n, k, T(1.5), a.data(), b.data(), T(-0.5), want.data());
        vector<T> host = c;
        caffe_cpu_gemm<T>(TA, TB, m, n, k, T(1.5), a.data(), b.data(), T(-0.5), host.data());
        const std::string what = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                                 " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb);
        expect_near(host, want, tol() * (k + 1), "cpu " + what);
        if (m * n == 0) continue;
        auto A = blob_of(a.empty() ? vector<T>{0} : a), B = blob_of(b.empty() ? vector<T>{0} : b), C = blob_of(c);
        caffe_gpu_gemm<T>(TA, TB, m, n, k, T(1.5), A->gpu_data(), B->gpu_data(), T(-0.5), C->mutable_gpu_data());
        expect_near(values_of(*C), want, tol() * (k + 1), "gpu " + what);
      }
    }
  }
};

class CaffeMathFloat : public CaffeMathTest<float> {};
class CaffeMathDouble : public CaffeMathTest<double> {};

#define BOTH(Name, Body)                                 \
  TEST_P(CaffeMathFloat, Name) { run_##Name<float>(this); } \
  TEST_P(CaffeMathDouble, Name) { run_##Name<double>(this); }

template <typename T, typename Fixture>
void run_Gemm(Fixture* f) {
  f->check_gemm(2, 4, 3);  // Caffe's test_util_blas shape
  f->check_gemm(1, 1, 1);
  f->check_gemm(5, 3, 7);
  f->check_gemm(3, 2, 0);  // k = 0: C = beta C
  f->check_gemm(0, 3, 2);  // nothing
}
BOTH(Gemm, )

template <typename T, typename Fixture>
void run_Gemv(Fixture* f) {
  const double tol = std::is_same<T, float>::value ? 1e-4 : 1e-12;
  for (int m : {1, 2, 5}) {
    for (int n : {1, 3, 4}) {
      for (int t = 0; t < 2; ++t) {
        const vector<T> a = ramp<T>(m * n, T(0.5), T(0.1));
        const vector<T> x = ramp<T>(t ? m : n, T(1), T(-0.5));
        vector<T> y = ramp<T>(t ? n : m, T(2), T(0)), want = y;
        // y = alpha op(A) x + beta y is gemm with one column
        ref_gemm<T>(t, false, t ? n : m, 1, t ? m : n, T(2), a.data(), x.data(), T(0.5), want.data());
        vector<T> host = y;
        caffe_cpu_gemv<T>(t ? CblasTrans : CblasNoTrans, m, n, T(2), a.data(), x.data(), T(0.5), host.data());
        expect_near(host, want, tol, "cpu gemv");
        auto A = blob_of(a), X = blob_of(x), Y = blob_of(y);
        caffe_gpu_gemv<T>(t ? CblasTrans : CblasNoTrans, m, n, T(2), A->gpu_data(), X->gpu_data(), T(0.5),
                          Y->mutable_gpu_data());
        expect_near(values_of(*Y), want, tol, "gpu gemv");
      }
    }
  }
  (void)f;
}
BOTH(Gemv, )

// Element-wise: the CPU function, its GPU twin and the reference for one element.
template <typename T>
struct Unary {
  const char* name;
  std::function<void(int, const T*, T*)> cpu, gpu;
  std::function<T(T)> ref;
};
template <typename T>
struct Binary {
  const char* name;
  std::function<void(int, const T*, const T*, T*)> cpu, gpu;
  std::function<T(T, T)> ref;
};

template <typename T, typename Fixture>
void run_Elementwise(Fixture* f) {
  const double tol = f->tol() * 10;
  const T alpha = T(0.75), beta = T(-1.25);
  vector<Unary<T> > unary = {
      {"sqr", caffe_sqr<T>, nullptr, [](T v) { return v * v; }},  // no caffe_gpu_sqr in Caffe
      {"sqrt", caffe_sqrt<T>, caffe_gpu_sqrt<T>, [](T v) { return std::sqrt(std::fabs(v)); }},
      {"exp", caffe_exp<T>, caffe_gpu_exp<T>, [](T v) { return std::exp(v); }},
      {"log", caffe_log<T>, caffe_gpu_log<T>, [](T v) { return std::log(std::fabs(v)); }},
      {"abs", caffe_abs<T>, caffe_gpu_abs<T>, [](T v) { return std::fabs(v); }},
      {"fabs", caffe_cpu_fabs<T>, caffe_gpu_fabs<T>, [](T v) { return std::fabs(v); }},
      {"sign", caffe_cpu_sign<T>, caffe_gpu_sign<T>, [](T v) { return T((0 < v) - (v < 0)); }},
      {"sgnbit", caffe_cpu_sgnbit<T>, caffe_gpu_sgnbit<T>, [](T v) { return T(std::signbit(v) ? 1 : 0); }},
      {"powx", [&](int n, const T* a, T* y) { caffe_powx<T>(n, a, alpha, y); },
       [&](int n, const T* a, T* y) { caffe_gpu_powx<T>(n, a, alpha, y); },
       [&](T v) { return T(std::pow(v, alpha)); }},
      {"scale", [&](int n, const T* a, T* y) { caffe_cpu_scale<T>(n, beta, a, y); },
       [&](int n, const T* a, T* y) { caffe_gpu_scale<T>(n, beta, a, y); }, [&](T v) { return beta * v; }},
  };
  vector<Binary<T> > binary = {
      {"add", caffe_add<T>, caffe_gpu_add<T>, [](T a, T b) { return a + b; }},
      {"sub", caffe_sub<T>, caffe_gpu_sub<T>, [](T a, T b) { return a - b; }},
      {"mul", caffe_mul<T>, caffe_gpu_mul<T>, [](T a, T b) { return a * b; }},
      {"div", caffe_div<T>, caffe_gpu_div<T>, [](T a, T b) { return a / b; }},
  };
  for (int n : {1, 2, 17, 1000}) {
    vector<T> a = ramp<T>(n, T(0.5), T(0.125)), b = ramp<T>(n, T(-0.25), T(3.0625));
    // sqrt, log and powx of non-negative values only (Caffe's callers give those)
    vector<T> pos(n);
    for (int i = 0; i < n; ++i) pos[i] = std::fabs(a[i]) + T(0.5);
    if (n > 2) a[1] = T(-0.0);  // sign of -0 is 0, sgnbit of -0 is 1
    for (auto& op : unary) {
      const bool positive = std::string(op.name) == "sqrt" || std::string(op.name) == "log" ||
                            std::string(op.name) == "powx";
      const vector<T>& in = positive ? pos : a;
      vector<T> want(n), host(n, T(9));
      for (int i = 0; i < n; ++i) want[i] = op.ref(in[i]);
      op.cpu(n, in.data(), host.data());
      expect_near(host, want, tol, std::string("cpu ") + op.name + " n=" + std::to_string(n));
      vector<T> inplace = in;  // Caffe's in-place form: caffe_sqr(n, x, x)
      op.cpu(n, inplace.data(), inplace.data());
      expect_near(inplace, want, tol, std::string("cpu in place ") + op.name);
      if (!op.gpu) continue;
      auto X = blob_of(in);
      Blob<T> Y(vector<int>{n});
      op.gpu(n, X->gpu_data(), Y.mutable_gpu_data());
      expect_near(values_of(Y), want, tol, std::string("gpu ") + op.name + " n=" + std::to_string(n));
      op.gpu(n, X->gpu_data(), X->mutable_gpu_data());
      expect_near(values_of(*X), want, tol, std::string("gpu in place ") + op.name);
    }
    for (auto& op : binary) {
      vector<T> want(n), host(n);
      for (int i = 0; i < n; ++i) want[i] = op.ref(a[i], b[i]);
      op.cpu(n, a.data(), b.data(), host.data());
      expect_near(host, want, tol, std::string("cpu ") + op.name);
      vector<T> inplace = b;  // caffe_mul(n, a, y, y)
      op.cpu(n, a.data(), inplace.data(), inplace.data());
      expect_near(inplace, want, tol, std::string("cpu in place ") + op.name);
      auto A = blob_of(a), B = blob_of(b);
      op.gpu(n, A->gpu_data(), B->gpu_data(), B->mutable_gpu_data());
      expect_near(values_of(*B), want, tol, std::string("gpu in place ") + op.name);
    }
    // axpby, add_scalar, set, axpy, scal
    vector<T> want(n), y = b;
    for (int i = 0; i < n; ++i) want[i] = alpha * a[i] + beta * b[i];
    caffe_cpu_axpby<T>(n, alpha, a.data(), beta, y.data());
    expect_near(y, want, tol, "cpu axpby");
    auto A = blob_of(a), B = blob_of(b);
    caffe_gpu_axpby<T>(n, alpha, A->gpu_data(), beta, B->mutable_gpu_data());
    expect_near(values_of(*B), want, tol, "gpu axpby");
    for (int i = 0; i < n; ++i) want[i] += alpha;
    caffe_add_scalar<T>(n, alpha, y.data());
    expect_near(y, want, tol, "cpu add_scalar");
    caffe_gpu_add_scalar<T>(n, alpha, B->mutable_gpu_data());
    expect_near(values_of(*B), want, tol, "gpu add_scalar");
    for (int i = 0; i < n; ++i) want[i] += 2 * a[i];
    caffe_axpy<T>(n, T(2), a.data(), y.data());
    caffe_gpu_axpy<T>(n, T(2), A->gpu_data(), B->mutable_gpu_data());
    expect_near(y, want, tol, "cpu axpy");
    expect_near(values_of(*B), want, tol, "gpu axpy");
    for (int i = 0; i < n; ++i) want[i] *= -3;
    caffe_scal<T>(n, T(-3), y.data());
    caffe_gpu_scal<T>(n, T(-3), B->mutable_gpu_data());
    expect_near(y, want, tol, "cpu scal");
    expect_near(values_of(*B), want, tol, "gpu scal");
    caffe_set<T>(n, T(2.5), y.data());
    caffe_gpu_set<T>(n, T(-1.5), B->mutable_gpu_data());
    EXPECT_EQ(y, vector<T>(n, T(2.5)));
    EXPECT_EQ(values_of(*B), vector<T>(n, T(-1.5)));
    caffe_gpu_set<T>(n, T(0), B->mutable_gpu_data());
    EXPECT_EQ(values_of(*B), vector<T>(n, T(0)));
  }
}
BOTH(Elementwise, )

template <typename T, typename Fixture>
void run_Reductions(Fixture* f) {
  for (int n : {1, 3, 257}) {
    const vector<T> x = ramp<T>(n, T(0.5), T(-0.25)), y = ramp<T>(n, T(1.5), T(0.5));
    double dot = 0, asum = 0;
    for (int i = 0; i < n; ++i) {
      dot += double(x[i]) * y[i];
      asum += std::fabs(x[i]);
    }
    const double tol = f->tol() * 10 * (1 + asum);
    EXPECT_NEAR(caffe_cpu_dot<T>(n, x.data(), y.data()), dot, tol);
    EXPECT_NEAR(caffe_cpu_asum<T>(n, x.data()), asum, tol);
    auto X = blob_of(x), Y = blob_of(y);
    T gdot = 7, gasum = 7;
    caffe_gpu_dot<T>(n, X->gpu_data(), Y->gpu_data(), &gdot);
    caffe_gpu_asum<T>(n, X->gpu_data(), &gasum);
    EXPECT_NEAR(gdot, dot, tol);
    EXPECT_NEAR(gasum, asum, tol);
    // strided: every second of x with every third of y, and BLAS's negative increments
    const int m = (n + 2) / 3;
    vector<T> xs = ramp<T>(2 * m, T(1), T(0)), ys = ramp<T>(3 * m, T(0.5), T(1));
    double sdot = 0, rdot = 0;
    for (int i = 0; i < m; ++i) {
      sdot += double(xs[2 * i]) * ys[3 * i];
      rdot += double(xs[2 * (m - 1 - i)]) * ys[3 * i];
    }
    EXPECT_NEAR(caffe_cpu_strided_dot<T>(m, xs.data(), 2, ys.data(), 3), sdot, tol);
    EXPECT_NEAR(caffe_cpu_strided_dot<T>(m, xs.data(), -2, ys.data(), 3), rdot, tol);
  }
  // n = 0: 0, nothing read (Caffe's BLAS answers 0)
  EXPECT_EQ(caffe_cpu_dot<T>(0, nullptr, nullptr), T(0));
  EXPECT_EQ(caffe_cpu_asum<T>(0, nullptr), T(0));
  T out = 5;
  caffe_gpu_asum<T>(0, nullptr, &out);
  EXPECT_EQ(out, T(0));
}
BOTH(Reductions, )

// Offsets on host pointers (Caffe code writes `data + offset`): only the range moves.
template <typename T, typename Fixture>
void run_OffsetHostPointers(Fixture*) {
  vector<T> x = ramp<T>(10, T(1), T(0)), y(10, T(1));
  caffe_axpy<T>(3, T(2), x.data() + 4, y.data() + 6);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(y[i], i >= 6 && i < 9 ? 1 + 2 * x[i - 2] : T(1)) << i;
  caffe_mul<T>(2, x.data() + 1, x.data() + 3, y.data() + 1);
  EXPECT_EQ(y[1], x[1] * x[3]);
  EXPECT_EQ(y[3], T(1));
  // gemm on a sub-matrix: rows 1..2 of a 3x2 times a 2x2
  vector<T> a = ramp<T>(6, T(1), T(0)), b = ramp<T>(4, T(1), T(1)), c(4, T(0)), want(4, T(0));
  ref_gemm<T>(false, false, 2, 2, 2, T(1), a.data() + 2, b.data(), T(0), want.data());
  caffe_cpu_gemm<T>(CblasNoTrans, CblasNoTrans, 2, 2, 2, T(1), a.data() + 2, b.data(), T(0), c.data());
  EXPECT_EQ(c, want);
}
BOTH(OffsetHostPointers, )

// n = 0 touches nothing (null pointers are fine); Caffe's CHECKs throw blobrt::Error.
template <typename T, typename Fixture>
void run_EmptyAndChecks(Fixture*) {
  caffe_axpy<T>(0, T(1), nullptr, nullptr);
  caffe_add<T>(0, nullptr, nullptr, nullptr);
  caffe_gpu_add<T>(0, nullptr, nullptr, nullptr);
  caffe_copy<T>(0, nullptr, nullptr);
  caffe_set<T>(0, T(1), nullptr);
  caffe_gpu_set<T>(0, T(1), nullptr);
  caffe_cpu_gemm<T>(CblasNoTrans, CblasNoTrans, 0, 0, 0, T(1), nullptr, nullptr, T(0), nullptr);
  T x = 1, y = 0;
  try {
    caffe_cpu_sign<T>(0, &x, &y);  // Caffe: CHECK_GT(n, 0)
    ADD_FAILURE() << "caffe_cpu_sign with n = 0 passed";
  } catch (const blobrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("caffe_cpu_sign: n 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(caffe_cpu_fabs<T>(1, &x, nullptr), blobrt::Error);
  EXPECT_THROW(caffe_add<T>(-1, &x, &x, &y), blobrt::Error);
  EXPECT_THROW(caffe_cpu_gemm<T>(CblasNoTrans, CblasNoTrans, -1, 1, 1, T(1), &x, &x, T(0), &y), blobrt::Error);
  EXPECT_THROW(caffe_cpu_gemm<T>(static_cast<CBLAS_TRANSPOSE>(7), CblasNoTrans, 1, 1, 1, T(1), &x, &x, T(0), &y),
               blobrt::Error);
  caffe_cpu_sgnbit<T>(1, &x, &y);
  EXPECT_EQ(y, T(0));
  EXPECT_EQ(caffe_sign<T>(T(-3)), -1);
  EXPECT_EQ(caffe_nextafter<T>(T(1)), std::nextafter(T(1), std::numeric_limits<T>::max()));
}
BOTH(EmptyAndChecks, )

// Caffe's GPUMathFunctionsTest.TestCopy: in GPU mode caffe_copy on two gpu_data() handles
// copies on the device (a host memcpy on cl_mem handles corrupted the heap).
template <typename T, typename Fixture>
void run_CopyFollowsMode(Fixture*) {
  const vector<T> values = ramp<T>(1000, T(0.5), T(1));
  auto bottom = blob_of(values);
  Blob<T> top(vector<int>{1000});
  Caffe::set_mode(Caffe::GPU);
  caffe_copy(1000, bottom->gpu_data(), top.mutable_gpu_data());
  EXPECT_EQ(values_of(top), values);
  // host pointers in GPU mode: Caffe's cudaMemcpyDefault copies them too, either way
  vector<T> host(1000);
  caffe_copy(1000, top.gpu_data(), host.data());
  EXPECT_EQ(host, values);
  vector<T> back(1000);
  caffe_copy(1000, host.data(), back.data());
  EXPECT_EQ(back, values);
  Caffe::set_mode(Caffe::CPU);
  vector<T> plain(1000);
  caffe_copy(1000, bottom->cpu_data(), plain.data());
  EXPECT_EQ(plain, values);
  vector<int> labels{1, 2, 3}, copy(3);
  caffe_copy(3, labels.data(), copy.data());  // Caffe instantiates int and unsigned too
  EXPECT_EQ(copy, labels);
}
BOTH(CopyFollowsMode, )

INSTANTIATE_ON_EVERY_DEVICE(CaffeMathFloat);
INSTANTIATE_ON_EVERY_DEVICE(CaffeMathDouble);

}  // namespace
