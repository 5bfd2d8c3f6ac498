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
#include "layerwise_net.hpp"

namespace blobrt::dist {
namespace {

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
