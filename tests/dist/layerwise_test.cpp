// blobrt::dist::LayerwiseReducer under `mpirun -np N` (tests/dist/meson.build): buckets of
// layers reduced as backward reports them, on every backend, with and without the
// communication thread. Every rank runs every test.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/dist/layerwise.hpp"
#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt::dist {
namespace {

int rank_in_world() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// A net's parameters by layer: layers without any, a double layer, one large layer.
struct Net {
  std::vector<std::unique_ptr<Blob<float>>> floats;
  std::vector<std::unique_ptr<Blob<double>>> doubles;
  std::vector<std::vector<ParamRef>> layers;
  explicit Net(bool extra_layer = false) {
    add({{20, 1, 5, 5}, {20}});
    add({});  // a pooling layer
    add({{50, 20, 5, 5}, {50}});
    add({});
    layers.push_back({});
    doubles.push_back(std::make_unique<Blob<double>>(std::vector<int>{7, 3}));
    layers.back().emplace_back(doubles.back().get());
    add({{500, 80}, {500}});
    add({{10, 500}, {10}});
    if (extra_layer) add({{3}});
  }
  void add(const std::vector<std::vector<int>>& shapes) {
    layers.emplace_back();
    for (const auto& shape : shapes) {
      floats.push_back(std::make_unique<Blob<float>>(shape));
      layers.back().emplace_back(floats.back().get());
    }
  }
  // Integer values, exact in any order of summation: (rank + 1) * 64 + layer + i % 5.
  static double value(int rank, std::size_t layer, std::int64_t i) { return (rank + 1) * 64.0 + layer + i % 5; }
  void write_layer(std::size_t layer, int rank) {
    for (const ParamRef& p : layers[layer]) {
      for (std::int64_t i = 0; i < p.count(); ++i) {
        if (p.is_double()) {
          p.as_double()->mutable_cpu_diff()[i] = value(rank, layer, i);
        } else {
          p.as_float()->mutable_cpu_diff()[i] = static_cast<float>(value(rank, layer, i));
        }
      }
    }
  }
  // Elements whose diff is not the ranks' mean, the first described in `first`.
  int wrong_means(int ranks, std::string* first) const {
    int bad = 0;
    for (std::size_t layer = 0; layer < layers.size(); ++layer) {
      for (const ParamRef& p : layers[layer]) {
        for (std::int64_t i = 0; i < p.count(); ++i) {
          double want = 0;
          for (int r = 0; r < ranks; ++r) want += value(r, layer, i) / ranks;
          const double got = p.is_double() ? p.as_double()->cpu_diff()[i] : p.as_float()->cpu_diff()[i];
          if (std::fabs(got - want) > 1e-5 * want && !bad++) {
            *first = "layer " + std::to_string(layer) + "[" + std::to_string(i) + "] = " + std::to_string(got) +
                     ", the mean is " + std::to_string(want);
          }
        }
      }
    }
    return bad;
  }
};

// One iteration's backward: each layer's diffs written, then reported, last layer first.
void backward(Net& net, LayerwiseReducer& reducer) {
  reducer.begin_backward();
  for (std::size_t layer = net.layers.size(); layer-- > 0;) {
    net.write_layer(layer, reducer.rank());
    reducer.layer_done(static_cast<int>(layer));
  }
}

std::string where() { return "rank " + std::to_string(rank_in_world()) + " on " + current_device_id(); }

bool mpi_allows_a_communication_thread() {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return level >= MPI_THREAD_SERIALIZED;
}

class Layerwise : public ::testing::TestWithParam<bool> {};  // overlap on or off

TEST_P(Layerwise, EveryDiffIsTheRanksMeanIterationAfterIteration) {
  Net net;
  LayerwiseOptions options;
  // Three buckets: the last layer; the 500x80 layer, larger than a bucket, alone; the rest.
  options.bucket_bytes = 128 * 1024;
  options.overlap = GetParam();
  LayerwiseReducer reducer(net.layers, options);
  EXPECT_EQ(reducer.overlaps(), GetParam() && mpi_allows_a_communication_thread()) << reducer.overlap_reason();
  EXPECT_EQ(reducer.bucket_count(), 3) << where();
  for (int iteration = 0; iteration < 3; ++iteration) {
    backward(net, reducer);
    reducer.finish();
    std::string first;
    EXPECT_EQ(net.wrong_means(reducer.size(), &first), 0) << where() << ", iteration " << iteration << ": " << first;
    EXPECT_EQ(reducer.last_stats().buckets, 3);
    EXPECT_EQ(reducer.last_stats().bytes_reduced,
              (20 * 25 + 20 + 50 * 500 + 50 + 500 * 80 + 500 + 10 * 500 + 10) * sizeof(float) + 21 * sizeof(double));
    EXPECT_GE(reducer.last_stats().hidden_fraction(), 0.0);
    EXPECT_LE(reducer.last_stats().hidden_fraction(), 1.0);
  }
}

TEST_P(Layerwise, LayersNotReportedAreReducedByFinish) {
  Net net;
  LayerwiseOptions options;
  options.bucket_bytes = 4096;
  options.overlap = GetParam();
  LayerwiseReducer reducer(net.layers, options);
  reducer.begin_backward();
  for (std::size_t layer = 0; layer < net.layers.size(); ++layer) net.write_layer(layer, reducer.rank());
  reducer.layer_done(6);  // only the last layer reported, twice (a second pass of iter_size)
  reducer.layer_done(6);
  reducer.finish();
  std::string first;
  EXPECT_EQ(net.wrong_means(reducer.size(), &first), 0) << where() << ": " << first;
}

TEST_P(Layerwise, ANextIterationBeforeFinishIsAClearError) {
  Net net;
  LayerwiseOptions options;
  options.overlap = GetParam();
  LayerwiseReducer reducer(net.layers, options);
  EXPECT_THROW(reducer.finish(), Error);  // nothing begun
  backward(net, reducer);
  try {
    reducer.begin_backward();
    ADD_FAILURE() << "a second begin_backward() without finish() was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("call finish() first"), std::string::npos) << e.what();
  }
  reducer.finish();
  backward(net, reducer);  // and the next iteration goes on
  reducer.finish();
  std::string first;
  EXPECT_EQ(net.wrong_means(reducer.size(), &first), 0) << where() << ": " << first;
}

INSTANTIATE_TEST_SUITE_P(Overlap, Layerwise, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "OnTheCommunicationThread" : "InFinish");
                         });

TEST(LayerwiseOverlap, BucketsAreReducedWhileBackwardGoesOnBeforeFinish) {
  Net net;
  LayerwiseOptions options;
  options.bucket_bytes = 64 * 1024;
  LayerwiseReducer reducer(net.layers, options);
  if (!mpi_allows_a_communication_thread()) {
    EXPECT_FALSE(reducer.overlaps());
    EXPECT_NE(reducer.overlap_reason().find("below MPI_THREAD_SERIALIZED"), std::string::npos)
        << reducer.overlap_reason();
    GTEST_SKIP() << "MPI initialised below MPI_THREAD_SERIALIZED: " << reducer.overlap_reason();
  }
  ASSERT_TRUE(reducer.overlaps()) << reducer.overlap_reason();
  backward(net, reducer);
  // Every layer is reported and finish() not called: the communication thread reduces
  // them all by itself (a deadline only so that a broken thread fails instead of hanging).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (reducer.buckets_reduced() < reducer.bucket_count() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(reducer.buckets_reduced(), reducer.bucket_count()) << where();
  reducer.finish();
  std::string first;
  EXPECT_EQ(net.wrong_means(reducer.size(), &first), 0) << where() << ": " << first;
}

TEST(LayerwiseLists, ALayerListThatDiffersOnOneRankIsAClearErrorOnEveryRank) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  Net net(/*extra_layer=*/rank_in_world() == size - 1);
  try {
    LayerwiseReducer reducer(net.layers);
    ADD_FAILURE() << where() << ": no error";
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("LayerwiseReducer"), std::string::npos) << text;
    EXPECT_NE(text.find("differ across the " + std::to_string(size) + " ranks"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace blobrt::dist
