// blobrt::dist::LayerwiseReducer when a rank leaves an iteration before finish() (issue 48):
// abandon() and the destructor complete every bucket's collective, so no rank is left
// waiting, and a rank that finishes an iteration another abandoned is told so. Under
// `mpirun -np N` with the rest of test_layerwise (tests/dist/meson.build); a hang here ends
// at mpirun's --timeout and fails the suite.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "blobrt/dist/layerwise.hpp"
#include "blobrt/error.hpp"
#include "layerwise_net.hpp"

namespace blobrt::dist {
namespace {

class LayerwiseAbandon : public ::testing::TestWithParam<bool> {};  // overlap on or off

LayerwiseOptions small_buckets(bool overlap) {
  LayerwiseOptions options;
  options.bucket_bytes = 4096;  // 5 buckets of Net's layers
  options.overlap = overlap;
  return options;
}

// Begins an iteration and reports the last `layers` layers (fewer or more per rank), then
// gives the communication thread time to enter the buckets it queued.
void partial_backward(Net& net, LayerwiseReducer& reducer, std::size_t layers) {
  reducer.begin_backward();
  for (std::size_t done = 0, layer = net.layers.size(); done < layers && layer-- > 0; ++done) {
    net.write_layer(layer, reducer.rank());
    reducer.layer_done(static_cast<int>(layer));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// Guards against issue 48's second finding: ranks that leave an iteration having queued
// different numbers of buckets (rank r reports r + 1 layers) left one rank's communication
// thread inside a bucket's collective the others never joined. abandon() completes them;
// the next iteration is the ranks' mean again.
TEST_P(LayerwiseAbandon, RanksAbandoningAtDifferentLayersLeaveNoneWaiting) {
  Net net;
  LayerwiseReducer reducer(net.layers, small_buckets(GetParam()));
  partial_backward(net, reducer, static_cast<std::size_t>(rank_in_world()) * 2 + 1);
  reducer.abandon();
  EXPECT_FALSE(reducer.in_iteration());
  reducer.abandon();  // outside an iteration: nothing
  backward(net, reducer);
  reducer.finish();
  std::string first;
  EXPECT_EQ(net.wrong_means(reducer.size(), &first), 0) << where() << ", the iteration after: " << first;
}

// Guards against the job hanging when every rank's backward throws: each rank's reducer is
// destroyed mid-iteration with a different number of buckets queued (rank 0 all of them,
// the others one layer's), and every destructor returns. (tests/dist/layerwise_abandon_test.py
// checks the same with the ranks then leaving the job.)
TEST_P(LayerwiseAbandon, EveryRankDestroyingItsReducerMidBackwardEnds) {
  Net net;
  {
    LayerwiseReducer reducer(net.layers, small_buckets(GetParam()));
    partial_backward(net, reducer, rank_in_world() == 0 ? net.layers.size() : 1);
  }
  LayerwiseReducer next(net.layers, small_buckets(GetParam()));
  backward(net, next);
  next.finish();
  std::string first;
  EXPECT_EQ(net.wrong_means(next.size(), &first), 0) << where() << ", a new reducer: " << first;
}

// Guards against diffs silently applied that are not the ranks' mean: where rank 0 leaves
// the iteration (its reducer destroyed mid-backward) and the others finish it, their
// finish() raises a blobrt::Error naming rank 0, and nobody waits.
TEST_P(LayerwiseAbandon, FinishRaisesWhereAnotherRankLeftTheIteration) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  Net net;
  auto reducer = std::make_unique<LayerwiseReducer>(net.layers, small_buckets(GetParam()));
  partial_backward(net, *reducer, 2);
  if (rank_in_world() == 0) {
    reducer.reset();
    return;
  }
  for (std::size_t layer = net.layers.size() - 2; layer-- > 0;) {
    net.write_layer(layer, reducer->rank());
    reducer->layer_done(static_cast<int>(layer));
  }
  try {
    reducer->finish();
    ADD_FAILURE() << where() << ": finish() returned although rank 0 abandoned the iteration";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 abandoned this iteration"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(reducer->in_iteration());
}

INSTANTIATE_TEST_SUITE_P(Overlap, LayerwiseAbandon, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "OnTheCommunicationThread" : "InFinish");
                         });

}  // namespace
}  // namespace blobrt::dist
