// libblobrt-dist under `mpirun -np N` (tests/meson.build runs it with several backends,
// and with a different backend on each rank). Every rank runs every test.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/dist/communicator.hpp"
#include "blobrt/runtime.hpp"
#include "engines.hpp"

namespace blobrt::dist {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// A parameter list with both precisions, odd sizes, and empty and one-element blobs.
struct Params {
  std::vector<std::unique_ptr<Blob<float>>> f;
  std::vector<std::unique_ptr<Blob<double>>> d;
  std::vector<ParamRef> list;
  Params() {
    const std::vector<std::vector<int>> shapes = {{3, 4}, {1}, {0, 5}, {17, 3, 3}, {257}, {2, 2, 2, 2}, {1000}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      if (i % 3 == 1) {
        d.push_back(std::make_unique<Blob<double>>(shapes[i]));
        list.emplace_back(d.back().get());
      } else {
        f.push_back(std::make_unique<Blob<float>>(shapes[i]));
        list.emplace_back(f.back().get());
      }
    }
  }
};

// Integer values: any order of summation gives the exact result.
double value(int rank, std::size_t param, std::int64_t i) { return (rank + 1) * 1000.0 + param * 10.0 + i % 7; }

template <typename F>
void each_element(const std::vector<ParamRef>& list, F&& f) {
  for (std::size_t p = 0; p < list.size(); ++p) {
    if (list[p].is_double()) {
      for (std::int64_t i = 0; i < list[p].count(); ++i) f(p, i, list[p].as_double(), i);
    } else {
      for (std::int64_t i = 0; i < list[p].count(); ++i) f(p, i, list[p].as_float(), i);
    }
  }
}

void fill_diffs(const std::vector<ParamRef>& list, int rank) {
  for (std::size_t p = 0; p < list.size(); ++p) {
    if (list[p].count() == 0) continue;
    if (list[p].is_double()) {
      double* x = list[p].as_double()->mutable_cpu_diff();
      for (std::int64_t i = 0; i < list[p].count(); ++i) x[i] = value(rank, p, i);
    } else {
      float* x = list[p].as_float()->mutable_cpu_diff();
      for (std::int64_t i = 0; i < list[p].count(); ++i) x[i] = static_cast<float>(value(rank, p, i));
    }
  }
}

double expected_sum(std::size_t p, std::int64_t i) {
  double s = 0;
  for (int r = 0; r < world_size(); ++r) s += value(r, p, i);
  return s;
}

// Number of elements that differ from `expect(p, i)`, with the first one described.
template <typename Expect>
int count_mismatches(const std::vector<ParamRef>& list, Expect expect, double tolerance, std::string* first) {
  int bad = 0;
  for (std::size_t p = 0; p < list.size(); ++p) {
    for (std::int64_t i = 0; i < list[p].count(); ++i) {
      double got = list[p].is_double() ? list[p].as_double()->cpu_diff()[i] : list[p].as_float()->cpu_diff()[i];
      double want = expect(p, i);
      if (std::fabs(got - want) > tolerance * std::max(1.0, std::fabs(want))) {
        if (!bad++) *first = "param " + std::to_string(p) + "[" + std::to_string(i) + "] = " + std::to_string(got) +
                             ", expected " + std::to_string(want);
      }
    }
  }
  return bad;
}

class DistTest : public ::testing::Test {
 protected:
  std::string where() const { return "rank " + std::to_string(world_rank()) + " on " + current_device_id(); }
  // Every diff equals the exact sum over ranks of fill_diffs' values.
  void expect_exact_sums(const std::vector<ParamRef>& list) {
    std::string first;
    EXPECT_EQ(count_mismatches(list, expected_sum, 0.0, &first), 0) << where() << ": " << first;
  }
};

TEST_F(DistTest, SumIsExactForIntegerValuedDiffs) {
  Params params;
  Communicator comm;
  fill_diffs(params.list, comm.rank());
  comm.allreduce_diffs(params.list);
  expect_exact_sums(params.list);
  EXPECT_TRUE(comm.last_stats().relaid_out);
  // Again, with new values written on the host between: the layout is kept.
  fill_diffs(params.list, comm.rank());
  comm.allreduce_diffs(params.list);
  expect_exact_sums(params.list);
  EXPECT_FALSE(comm.last_stats().relaid_out) << where();
}

TEST_F(DistTest, MeanDividesByTheNumberOfRanks) {
  Params params;
  Communicator comm;
  fill_diffs(params.list, comm.rank());
  comm.allreduce_diffs(params.list, Reduction::kMean);
  std::string first;
  auto mean = [](std::size_t p, std::int64_t i) { return expected_sum(p, i) / world_size(); };
  EXPECT_EQ(count_mismatches(params.list, mean, 1e-6, &first), 0) << where() << ": " << first;
}

TEST_F(DistTest, RandomDiffsMatchASerialSumToFloatTolerance) {
  Blob<float> a(std::vector<int>{100003});
  Blob<double> b(std::vector<int>{4099});
  std::vector<ParamRef> list{&a, &b};
  auto random_value = [](int rank, std::size_t p, std::int64_t i) {
    std::mt19937_64 gen(rank * 1000003ull + p * 7919ull + static_cast<std::uint64_t>(i));
    return std::uniform_real_distribution<double>(-1, 1)(gen);
  };
  float* x = a.mutable_cpu_diff();
  for (std::int64_t i = 0; i < a.count(); ++i) x[i] = static_cast<float>(random_value(world_rank(), 0, i));
  double* y = b.mutable_cpu_diff();
  for (std::int64_t i = 0; i < b.count(); ++i) y[i] = random_value(world_rank(), 1, i);
  Communicator comm(MPI_COMM_WORLD, Options{64 << 10});
  comm.allreduce_diffs(list);
  auto serial = [&](std::size_t p, std::int64_t i) {
    double s = 0;
    for (int r = 0; r < world_size(); ++r) s += p == 0 ? static_cast<float>(random_value(r, 0, i)) : random_value(r, 1, i);
    return s;
  };
  std::string first;
  EXPECT_EQ(count_mismatches({&a}, serial, 1e-5, &first), 0) << where() << ": " << first;
  EXPECT_EQ(count_mismatches({&b}, [&](std::size_t, std::int64_t i) { return serial(1, i); }, 1e-12, &first), 0)
      << where() << ": " << first;
}

TEST_F(DistTest, BroadcastGivesEveryRankTheRootsData) {
  Params params;
  for (std::size_t p = 0; p < params.list.size(); ++p) {
    const ParamRef& r = params.list[p];
    if (!r.count()) continue;
    if (r.is_double()) {
      double* x = r.as_double()->mutable_cpu_data();
      for (std::int64_t i = 0; i < r.count(); ++i) x[i] = value(world_rank(), p, i);
    } else {
      float* x = r.as_float()->mutable_cpu_data();
      for (std::int64_t i = 0; i < r.count(); ++i) x[i] = static_cast<float>(value(world_rank(), p, i));
    }
  }
  Communicator comm;
  const int root = comm.size() - 1;
  comm.broadcast_data(params.list, root);
  int bad = 0;
  for (std::size_t p = 0; p < params.list.size(); ++p) {
    const ParamRef& r = params.list[p];
    for (std::int64_t i = 0; i < r.count(); ++i) {
      double got = r.is_double() ? r.as_double()->cpu_data()[i] : r.as_float()->cpu_data()[i];
      bad += got != value(root, p, i);
    }
  }
  EXPECT_EQ(bad, 0) << where();
  EXPECT_THROW(comm.broadcast_data(params.list, comm.size()), Error);
}

// Bucket sizes from 1 KiB to more than the whole list: same sums, and one collective per
// bucket of each precision's group.
class BucketSizes : public DistTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(BucketSizes, SameSumsAndOneCollectivePerBucket) {
  Params params;
  Communicator comm(MPI_COMM_WORLD, Options{GetParam()});
  fill_diffs(params.list, comm.rank());
  comm.allreduce_diffs(params.list);
  expect_exact_sums(params.list);
  if (GetParam() >= (1u << 20)) EXPECT_EQ(comm.last_stats().collectives, 2) << where() << ": one per precision";
  if (GetParam() == 1024) EXPECT_GT(comm.last_stats().collectives, 4) << where();
}

INSTANTIATE_TEST_SUITE_P(Dist, BucketSizes, ::testing::Values(std::size_t{1024}, std::size_t{1028}, std::size_t{4096},
                                                                std::size_t{1} << 20, std::size_t{1} << 30));

TEST_F(DistTest, HostMemoryDevicesReduceInPlaceWithoutCopies) {
  // Every rank reduces (the collectives must match); the checks are for the ranks whose
  // device keeps its memory in host memory and offers views.
  const DeviceDescription& d = current_device()->description();
  const bool in_host_memory = d.memory_model != MemoryModel::kSeparate && d.view_alignment != 0;
  Params params;
  Communicator comm;
  fill_diffs(params.list, comm.rank());
  comm.allreduce_diffs(params.list);  // lays out
  fill_diffs(params.list, comm.rank());
  reset_transfer_counters();
  comm.allreduce_diffs(params.list);
  // The layout's alignment is the largest view alignment of any rank (64 bytes at least).
  unsigned long long mine = std::max<std::size_t>(64, d.view_alignment), alignment = 0;
  MPI_Allreduce(&mine, &alignment, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (!in_host_memory) return;  // staged by design
  EXPECT_EQ(comm.last_stats().bytes_staged, 0u) << where();
  EXPECT_EQ(transfer_counters().host_to_device + transfer_counters().device_to_host, 0u) << where();
  if (d.memory_model == MemoryModel::kShared) {
    // Caffe's layout: the float diffs lie one after another in one allocation.
    const char* first = reinterpret_cast<const char*>(params.f[0]->cpu_diff());
    const char* next = reinterpret_cast<const char*>(params.f[2]->cpu_diff());  // f[1] is empty
    EXPECT_EQ(static_cast<unsigned long long>(next - first), alignment)
        << where() << ": 12 floats, then padding to the layout's alignment";
  }
}

TEST_F(DistTest, MismatchedShapesAreAClearErrorOnEveryRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const int odd = world_size() - 1;
  Blob<float> a(std::vector<int>{3, 4});
  Blob<float> b(std::vector<int>{3, world_rank() == odd ? 5 : 4});
  Communicator comm;
  try {
    comm.allreduce_diffs({&a, &b});
    ADD_FAILURE() << where() << ": no error";
  } catch (const Error& e) {
    std::string others = odd == 1 ? "rank 0" : "ranks 0";
    EXPECT_NE(std::string(e.what()).find("parameter 1 is float [3 4] on " + others), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("but float [3 5] on rank " + std::to_string(odd)), std::string::npos)
        << e.what();
  }
}

TEST_F(DistTest, MismatchedCountsAreAClearErrorOnEveryRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  Blob<float> a(std::vector<int>{8});
  Blob<double> b(std::vector<int>{8});
  std::vector<ParamRef> list{&a};
  if (world_rank() == 0) list.emplace_back(&b);
  Communicator comm;
  try {
    comm.allreduce_diffs(list);
    ADD_FAILURE() << where() << ": no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 has 2 parameters"), std::string::npos) << e.what();
  }
  // The communicator is still usable afterwards.
  comm.allreduce_diffs({&a});
}

TEST_F(DistTest, ReshapedBlobIsLaidOutAgain) {
  Params params;
  Communicator comm;
  fill_diffs(params.list, comm.rank());
  comm.allreduce_diffs(params.list);
  params.f[0]->Reshape(std::vector<int>{50, 50});  // larger: a new diff allocation
  fill_diffs(params.list, comm.rank());
  comm.allreduce_diffs(params.list);
  EXPECT_TRUE(comm.last_stats().relaid_out) << where();
  expect_exact_sums(params.list);
}

// After fusion a diff is a view of exactly count() elements. A blob shrunk within its
// capacity, reduced (laid out again with the smaller view), then grown back must get fresh
// memory: writing its full diff must leave the next blob's diff alone (first in the list)
// and stay inside the fused buffer (last in the list: ASan's heap-buffer-overflow).
TEST_F(DistTest, ShrunkThenGrownBlobNeverWritesPastItsView) {
  for (bool last : {false, true}) {
    SCOPED_TRACE(last ? "grown blob last in the list" : "grown blob first in the list");
    Blob<float> grown(std::vector<int>{1000}), other(std::vector<int>{1000});
    std::vector<ParamRef> list = last ? std::vector<ParamRef>{&other, &grown} : std::vector<ParamRef>{&grown, &other};
    Communicator comm;
    fill_diffs(list, comm.rank());
    comm.allreduce_diffs(list);  // fused
    grown.Reshape(std::vector<int>{16});
    fill_diffs(list, comm.rank());
    comm.allreduce_diffs(list);  // laid out again: grown's diff is a 16-float view
    expect_exact_sums(list);
    grown.Reshape(std::vector<int>{1000});
    EXPECT_GE(grown.diff()->size(), 1000 * sizeof(float)) << where();
    fill_diffs(list, comm.rank());
    // Rewrite grown's diff after the other's, as a backward pass in any order may.
    const std::size_t g = last ? 1 : 0;
    float* x = grown.mutable_cpu_diff();
    for (int i = 0; i < 1000; ++i) x[i] = static_cast<float>(value(comm.rank(), g, i));
    const float* o = other.cpu_diff();
    int overwritten = 0;
    for (int i = 0; i < 1000; ++i) overwritten += o[i] != static_cast<float>(value(comm.rank(), 1 - g, i));
    EXPECT_EQ(overwritten, 0) << where() << ": values of the next diff overwritten by the grown blob";
    comm.allreduce_diffs(list);
    EXPECT_TRUE(comm.last_stats().relaid_out) << where();
    expect_exact_sums(list);
  }
}

TEST_F(DistTest, FusedDiffsOutliveTheCommunicator) {
  Params params;
  {
    Communicator comm;
    fill_diffs(params.list, comm.rank());
    comm.allreduce_diffs(params.list);
  }
  expect_exact_sums(params.list);
  params.f[2]->scale_diff(2.0f);  // still a working buffer on the device
  EXPECT_EQ(params.f[2]->cpu_diff()[0], 2.0f * static_cast<float>(expected_sum(3, 0)));
}

TEST_F(DistTest, EngineIsNamedForTheActiveDevice) {
  Communicator comm;
  Blob<float> a(std::vector<int>{4});
  comm.allreduce_diffs({&a});
  const EngineReport r = comm.engine();
  EXPECT_EQ(r.device, current_device()->description().id());
  const MemoryModel m = current_device()->description().memory_model;
  if (m == MemoryModel::kShared) EXPECT_EQ(r.engine, "mpi in place");
  if (m == MemoryModel::kAliased) EXPECT_EQ(r.engine, "mpi on host aliases");
  if (m == MemoryModel::kSeparate) EXPECT_EQ(r.engine, "mpi via host staging");
}

// Each bucket is one collective: ranks with different bucket sizes would pair collectives
// of different lengths. The constructor fails on every rank, naming ranks and sizes.
TEST_F(DistTest, BucketSizesThatDifferAcrossRanksAreAClearErrorOnEveryRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const int odd = world_size() - 1;
  try {
    Communicator comm(MPI_COMM_WORLD, Options{world_rank() == odd ? 2048u : 1024u});
    ADD_FAILURE() << where() << ": no error";  // and no reduction: it could hang or corrupt
  } catch (const Error& e) {
    std::string others = odd == 1 ? "rank 0" : "ranks 0";
    for (int r = 1; r < odd; ++r) others += ", " + std::to_string(r);
    others += odd == 1 ? " has" : " have";
    EXPECT_NE(std::string(e.what()).find(others + " 1024 bytes (Options::bucket_bytes)"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(odd) + " has 2048 bytes (Options::bucket_bytes)"),
              std::string::npos)
        << e.what();
  }
  // Nothing is left half-done: the next communicator reduces.
  Params params;
  Communicator comm(MPI_COMM_WORLD, Options{1024});
  fill_diffs(params.list, comm.rank());
  comm.allreduce_diffs(params.list);
  expect_exact_sums(params.list);
}

// BLOBRT_DIST_BUCKET_BYTES as each rank's environment gives it: the same everywhere (the
// ordinary runs) reduces; different or invalid on some rank (the dist_bucket_mismatch run,
// MPMD) is one error on every rank naming each rank's setting, never a crash or a hang.
TEST_F(DistTest, BucketSizesFromTheEnvironmentMustAgree) {
  const char* env = std::getenv("BLOBRT_DIST_BUCKET_BYTES");
  const std::string mine = env ? env : "";
  char text[64] = {};
  mine.copy(text, sizeof text - 1);
  std::vector<char> all(64 * static_cast<std::size_t>(world_size()));
  MPI_Allgather(text, 64, MPI_CHAR, all.data(), 64, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> values;
  for (int r = 0; r < world_size(); ++r) values.emplace_back(&all[64 * static_cast<std::size_t>(r)]);
  bool same = true;
  for (const std::string& v : values) same = same && v == values[0];
  if (same && (values[0].empty() || std::strtoull(values[0].c_str(), nullptr, 10) > 0)) {
    Params params;
    Communicator comm;
    fill_diffs(params.list, comm.rank());
    comm.allreduce_diffs(params.list);
    expect_exact_sums(params.list);
    return;
  }
  try {
    Communicator comm;
    ADD_FAILURE() << where() << ": no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    for (int r = 0; r < world_size(); ++r) {
      const std::string& v = values[static_cast<std::size_t>(r)];
      const bool valid = v.find_first_not_of("0123456789") == std::string::npos && std::strtoull(v.c_str(), nullptr, 10);
      const std::string want = v.empty() ? std::to_string(kDefaultBucketBytes) + " bytes (default)"
                               : !valid  ? "BLOBRT_DIST_BUCKET_BYTES='" + v + "' is not a positive number of bytes"
                                         : v + " bytes (BLOBRT_DIST_BUCKET_BYTES)";
      EXPECT_NE(message.find(want), std::string::npos) << where() << ": rank " << r << "'s setting: " << message;
    }
    if (!same) EXPECT_NE(message.find("must be the same on every rank"), std::string::npos) << message;
  }
}

TEST_F(DistTest, BucketSizeFromTheEnvironmentWhenNotGiven) {
  ::setenv("BLOBRT_DIST_BUCKET_BYTES", "4096", 1);
  EXPECT_EQ(Communicator().options().bucket_bytes, 4096u);
  EXPECT_EQ(Communicator(MPI_COMM_WORLD, Options{1024}).options().bucket_bytes, 1024u) << "an explicit size wins";
  ::setenv("BLOBRT_DIST_BUCKET_BYTES", "25M", 1);
  try {
    Communicator c;
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("BLOBRT_DIST_BUCKET_BYTES='25M'"), std::string::npos) << e.what();
  }
  ::unsetenv("BLOBRT_DIST_BUCKET_BYTES");
  EXPECT_EQ(Communicator().options().bucket_bytes, kDefaultBucketBytes);
}

// The NCCL part (libblobrt-dist-nccl.so) loads through Boost.DLL and answers with NCCL's
// version on any node, GPU or not; a CUDA device would then reduce with it.
TEST(NcclPart, LoadsWhereBuiltOrSaysWhyNot) {
  const NcclPartReport r = nccl_part_report();
  const char* built = std::getenv("BLOBRT_DIST_NCCL");
  if (!built || !*built) {
    EXPECT_FALSE(r.loaded);
    EXPECT_NE(r.reason.find("not installed"), std::string::npos) << r.reason;
    GTEST_SKIP() << "no NCCL part in this build: " << r.reason;
  }
  ASSERT_TRUE(r.loaded) << r.reason;
  EXPECT_EQ(r.version.rfind("NCCL 2.", 0), 0u) << r.version;
  // The engine follows what the device says it is, whatever its plugin is called.
  DeviceDescription cuda;
  cuda.backend = "any-name";
  cuda.native_type = NativeDeviceType::kCuda;
  cuda.addressable_handles = true;
  cuda.view_alignment = 256;
  cuda.kind = DeviceKind::kGpu;
  const EngineReport plan = plan_engine(cuda);
  EXPECT_EQ(plan.engine, "nccl") << plan.details;
  EXPECT_NE(plan.details.find(r.version), std::string::npos) << plan.details;
  DeviceDescription other_gpu = cuda;
  other_gpu.native_type = NativeDeviceType::kOpenCL;
  other_gpu.addressable_handles = false;
  other_gpu.has_pinned_host = true;
  EXPECT_EQ(plan_engine(other_gpu).engine, "mpi via host staging");
  DeviceDescription named_cuda = other_gpu;  // a name is not a device type
  named_cuda.backend = "cuda";
  EXPECT_EQ(plan_engine(named_cuda).engine, "mpi via host staging");
}

}  // namespace
}  // namespace blobrt::dist
