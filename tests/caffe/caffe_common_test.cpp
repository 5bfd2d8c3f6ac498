// Caffe's common.hpp surface through <blobrt/caffe_compat.hpp>: the random sequences are
// Caffe's (boost::mt19937 through Boost.Random, computed here the way Caffe computes
// them, and a few pinned literals), the Caffe singleton, the device queries, the macros.
#include <gtest/gtest.h>

#include <boost/math/special_functions/next.hpp>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_real.hpp>
#include <boost/random/variate_generator.hpp>

#include "backend_param.hpp"
#include "blobrt/caffe_compat.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace caffe;

// Caffe's own recipe (math_functions.cpp), written out with boost directly.
template <typename Dist>
std::vector<typename Dist::result_type> caffe_draws(unsigned seed, Dist dist, int n) {
  boost::mt19937 engine(seed);
  boost::variate_generator<boost::mt19937*, Dist> draw(&engine, dist);
  std::vector<typename Dist::result_type> out(n);
  for (int i = 0; i < n; ++i) out[i] = draw();
  return out;
}

template <typename T>
class CaffeRngTest : public ::testing::Test {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CaffeRngTest, Dtypes);

TYPED_TEST(CaffeRngTest, UniformIsCaffes) {
  using T = TypeParam;
  Caffe::set_random_seed(1701);
  std::vector<T> got(1000);
  caffe_rng_uniform<T>(1000, T(-2), T(3), got.data());
  const T upper = boost::math::nextafter<T>(T(3), std::numeric_limits<T>::max());
  EXPECT_EQ(got, caffe_draws(1701, boost::uniform_real<T>(T(-2), upper), 1000));
  EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](T v) { return v >= -2 && v <= 3; }));
}

TYPED_TEST(CaffeRngTest, GaussianIsCaffes) {
  using T = TypeParam;
  Caffe::set_random_seed(37);
  std::vector<T> got(999);  // odd: boost's normal draws in pairs
  caffe_rng_gaussian<T>(999, T(1), T(0.5), got.data());
  EXPECT_EQ(got, caffe_draws(37, boost::normal_distribution<T>(T(1), T(0.5)), 999));
}

TYPED_TEST(CaffeRngTest, BernoulliIsCaffesBothOverloads) {
  using T = TypeParam;
  Caffe::set_random_seed(5);
  std::vector<int> ints(500);
  caffe_rng_bernoulli<T>(500, T(0.3), ints.data());
  const auto want = caffe_draws(5, boost::bernoulli_distribution<T>(T(0.3)), 500);
  EXPECT_TRUE(std::equal(ints.begin(), ints.end(), want.begin(), [](int a, bool b) { return a == int(b); }));
  Caffe::set_random_seed(5);
  std::vector<unsigned int> mask(500);  // Caffe's dropout mask
  caffe_rng_bernoulli<T>(500, T(0.3), mask.data());
  EXPECT_TRUE(std::equal(mask.begin(), mask.end(), ints.begin(), [](unsigned a, int b) { return int(a) == b; }));
}

// Values BVLC Caffe gives for seed 1701 (boost::mt19937 and Boost.Random).
TEST(CaffeRng, PinnedValuesForSeed1701) {
  Caffe::set_random_seed(1701);
  EXPECT_EQ(caffe_rng_rand(), 384112814u);
  EXPECT_EQ(caffe_rng_rand(), 2227967492u);
  Caffe::set_random_seed(1701);
  float u[2];
  caffe_rng_uniform<float>(2, -1.f, 1.f, u);
  EXPECT_FLOAT_EQ(u[0], -0.821133554f);
  EXPECT_FLOAT_EQ(u[1], 0.0374782085f);
  Caffe::set_random_seed(1701);
  double g[2];
  caffe_rng_gaussian<double>(2, 0.0, 1.0, g);
  EXPECT_DOUBLE_EQ(g[0], -0.18315754813835758);
  EXPECT_DOUBLE_EQ(g[1], -0.80478203160003048);
  Caffe::set_random_seed(1701);
  int bits[16];
  caffe_rng_bernoulli<float>(16, 0.5f, bits);
  std::string s;
  for (int b : bits) s += char('0' + b);
  EXPECT_EQ(s, "1010001001001110");
}

TEST(CaffeRng, GeneratorIsCaffesAndPerThread) {
  Caffe::set_random_seed(9);
  rng_t* engine = caffe_rng();
  ASSERT_EQ(engine, static_cast<rng_t*>(Caffe::rng_stream().generator()));
  const unsigned first = (*engine)();
  Caffe::set_random_seed(9);
  EXPECT_EQ(caffe_rng_rand(), first);
  Caffe::RNG copy(Caffe::rng_stream());  // Caffe's copies share the generator
  EXPECT_EQ(copy.generator(), Caffe::rng_stream().generator());
  unsigned other_thread = 0;
  std::thread([&] {
    Caffe::set_random_seed(9);
    other_thread = caffe_rng_rand();
    EXPECT_EQ(Caffe::mode(), Caffe::CPU);
  }).join();
  EXPECT_EQ(other_thread, first);
  // Caffe's shuffle draws from the same generator
  std::vector<int> a{1, 2, 3, 4, 5, 6, 7, 8}, b = a;
  Caffe::set_random_seed(3);
  shuffle(a.begin(), a.end());
  boost::mt19937 mine(3);
  shuffle(b.begin(), b.end(), &mine);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(CaffeRng, ChecksThrow) {
  float r[2];
  EXPECT_THROW(caffe_rng_uniform<float>(2, 1.f, 0.f, r), blobrt::Error);
  EXPECT_THROW(caffe_rng_gaussian<float>(2, 0.f, 0.f, r), blobrt::Error);
  int b[2];
  try {
    caffe_rng_bernoulli<float>(2, 1.5f, b);
    ADD_FAILURE() << "p = 1.5 accepted";
  } catch (const blobrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("p 1.5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(caffe_rng_uniform<float>(-1, 0.f, 1.f, r), blobrt::Error);
}

// The device half draws Caffe's host sequence and uploads it.
class CaffeDeviceRngTest : public blobrt::testing::OnEveryDevice {};

TEST_P(CaffeDeviceRngTest, DeviceDrawsAreTheHostSequence) {
  Blob<float> blob(vector<int>{64});
  Caffe::set_random_seed(11);
  caffe_gpu_rng_gaussian<float>(64, 0.f, 2.f, blob.mutable_gpu_data());
  std::vector<float> host(64);
  Caffe::set_random_seed(11);
  caffe_rng_gaussian<float>(64, 0.f, 2.f, host.data());
  EXPECT_TRUE(std::equal(host.begin(), host.end(), blob.cpu_data()));
  Caffe::set_random_seed(11);
  caffe_gpu_rng_uniform<float>(64, -1.f, 1.f, blob.mutable_gpu_data());
  Caffe::set_random_seed(11);
  caffe_rng_uniform<float>(64, -1.f, 1.f, host.data());
  EXPECT_TRUE(std::equal(host.begin(), host.end(), blob.cpu_data()));
  SyncedMemory mask(64 * sizeof(unsigned));
  Caffe::set_random_seed(11);
  caffe_gpu_rng_uniform(64, static_cast<unsigned*>(mask.mutable_gpu_data()));
  Caffe::set_random_seed(11);
  EXPECT_EQ(static_cast<const unsigned*>(mask.cpu_data())[0], caffe_rng_rand());
}

// Caffe::SetDevice and friends index the active backend's devices.
TEST_P(CaffeDeviceRngTest, DeviceQueries) {
  const std::string active = blobrt::current_device_id();
  const int index = std::stoi(active.substr(active.find(':') + 1));
  EXPECT_TRUE(Caffe::CheckDevice(index));
  EXPECT_FALSE(Caffe::CheckDevice(-1));
  EXPECT_FALSE(Caffe::CheckDevice(1000));
  EXPECT_EQ(Caffe::FindDevice(0), 0);
  EXPECT_EQ(Caffe::FindDevice(1000), -1);
  Caffe::SetDevice(index);
  EXPECT_EQ(blobrt::current_device_id(), active);
  EXPECT_THROW(Caffe::SetDevice(1000), blobrt::Error);
  EXPECT_THROW(Caffe::SetDevice(-1), blobrt::Error);
  testing::internal::CaptureStderr();
  Caffe::DeviceQuery();
  EXPECT_NE(testing::internal::GetCapturedStderr().find(active), std::string::npos);
}

INSTANTIATE_ON_EVERY_DEVICE(CaffeDeviceRngTest);

TEST(CaffeSingleton, SolverStateAndMode) {
  EXPECT_TRUE(Caffe::root_solver());
  EXPECT_EQ(Caffe::solver_count(), 1);
  EXPECT_FALSE(Caffe::multiprocess());
  Caffe::set_solver_rank(2);
  Caffe::set_solver_count(4);
  Caffe::set_multiprocess(true);
  EXPECT_FALSE(Caffe::root_solver());
  EXPECT_EQ(Caffe::solver_count(), 4);
  EXPECT_TRUE(Caffe::multiprocess());
  EXPECT_EQ(&Caffe::Get(), &Caffe::Get());
  Caffe::set_solver_rank(0);
  Caffe::set_solver_count(1);
  Caffe::set_multiprocess(false);
  EXPECT_TRUE(Caffe::root_solver());
  // The pre-2017 form (SSD's internal_thread.cpp): the flag itself, per thread.
  Caffe::set_root_solver(false);
  EXPECT_FALSE(Caffe::root_solver());
  std::thread([] { EXPECT_TRUE(Caffe::root_solver()) << "another thread's Caffe starts as the root"; }).join();
  Caffe::set_root_solver(true);
  EXPECT_TRUE(Caffe::root_solver());
  EXPECT_EQ(Caffe::mode(), Caffe::CPU);
  int argc = 1;
  char name[] = "prog";
  char* args[] = {name, nullptr};
  char** argv = args;
  GlobalInit(&argc, &argv);
  EXPECT_EQ(argc, 1);
}

// Caffe's macros, as layer code uses them.
template <typename Dtype>
class Counter {
 public:
  Counter() = default;
  int get() const { return sizeof(Dtype); }
  void fail() { NOT_IMPLEMENTED; }

  DISABLE_COPY_AND_ASSIGN(Counter);
};
INSTANTIATE_CLASS(Counter);

TEST(CaffeMacros, LayerCodeMacros) {
  static_assert(!std::is_copy_constructible<Counter<float> >::value, "DISABLE_COPY_AND_ASSIGN");
  EXPECT_EQ(Counter<double>().get(), 8);
  EXPECT_EQ(std::string(AS_STRING(CAFFE_CUDA_NUM_THREADS)), "512");
  EXPECT_EQ(CAFFE_GET_BLOCKS(513), 2);
  Counter<float> c;
  try {
    c.fail();
    ADD_FAILURE() << "NOT_IMPLEMENTED returned";
  } catch (const blobrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Not Implemented Yet"), std::string::npos) << e.what();
  }
}

// Caffe takes &SyncedMemory::async_gpu_push with cudaStream_t's type.
typedef struct CUstream_st* cudaStream_t;
TEST(CaffeSyncedMemory, AsyncGpuPushAsMemberPointer) {
  void (SyncedMemory::*push)(const cudaStream_t&) = &SyncedMemory::async_gpu_push;
  SyncedMemory mem(16);
  mem.mutable_cpu_data();
  cudaStream_t stream = nullptr;
  (mem.*push)(stream);
  EXPECT_EQ(mem.head(), SyncedMemory::SYNCED);
}

}  // namespace
