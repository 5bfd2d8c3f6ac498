// blobrt::dist::LayerwiseReducer with parameters whose size changes after the reducer was
// made (issue 48): a Blob empty at first and sized later, one resized in the middle of an
// iteration (as Caffe's forward reshapes a layer), and ranks that disagree on a size.
// Under `mpirun -np N` with the rest of test_layerwise (tests/dist/meson.build).
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "blobrt/dist/layerwise.hpp"
#include "blobrt/error.hpp"
#include "layerwise_net.hpp"

namespace blobrt::dist {
namespace {

class LayerwiseResize : public ::testing::TestWithParam<bool> {};  // overlap on or off

LayerwiseOptions small_buckets(bool overlap) {
  LayerwiseOptions options;
  options.bucket_bytes = 4096;
  options.overlap = overlap;
  return options;
}

void reshape(const ParamRef& p, std::vector<int> shape) { p.as_float()->Reshape(shape); }

// Guards against issue 48's first finding: a parameter empty when the reducer was made
// (its layer's only one, and one beside another) was in no bucket, so once sized every rank
// kept its own gradient and nothing said so. Each is the ranks' mean, iteration after
// iteration.
TEST_P(LayerwiseResize, AParameterEmptyWhenTheReducerIsMadeIsReducedOnceSized) {
  Net net;
  net.add({{0}});          // layer 7: its only parameter empty
  net.add({{0}, {4}});     // layer 8: an empty one beside another
  LayerwiseReducer reducer(net.layers, small_buckets(GetParam()));
  reshape(net.layers[7][0], {3, 4});
  reshape(net.layers[8][0], {6});
  for (int iteration = 0; iteration < 3; ++iteration) {
    backward(net, reducer);
    reducer.finish();
    std::string first;
    EXPECT_EQ(net.wrong_means(reducer.size(), &first), 0) << where() << ", iteration " << iteration << ": " << first;
  }
}

// Guards against a stale plan: a parameter sized between begin_backward() and its
// layer_done() is reduced in that same iteration, and the buckets are planned anew for its
// new size afterwards (40,000 bytes no longer share a 4 KiB bucket with the next layer).
TEST_P(LayerwiseResize, AParameterSizedDuringAnIterationIsReducedAndTheBucketsPlannedAnew) {
  Net net;
  net.add({{0}});  // layer 7
  LayerwiseReducer reducer(net.layers, small_buckets(GetParam()));
  const int planned = reducer.bucket_count();
  reducer.begin_backward();
  reshape(net.layers[7][0], {10000});  // as a forward that reshapes the layer
  for (std::size_t layer = net.layers.size(); layer-- > 0;) {
    net.write_layer(layer, reducer.rank());
    reducer.layer_done(static_cast<int>(layer));
  }
  reducer.finish();
  std::string first;
  EXPECT_EQ(net.wrong_means(reducer.size(), &first), 0) << where() << ": " << first;
  EXPECT_EQ(reducer.bucket_count(), planned + 1) << where() << ": the buckets were not planned anew";
  backward(net, reducer);
  reducer.finish();
  EXPECT_EQ(net.wrong_means(reducer.size(), &first), 0) << where() << ", after re-planning: " << first;
  EXPECT_EQ(reducer.last_stats().buckets, planned + 1);
}

// Guards against ranks that size a parameter differently: the same blobrt::Error on every
// rank, naming the layer and each rank's shape, rather than a hang or a wrong sum; once the
// sizes agree again, the reducer reduces correctly.
TEST_P(LayerwiseResize, SizesThatDifferAcrossRanksAreOneErrorOnEveryRank) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  Net net;
  net.add({{0}});  // layer 7
  LayerwiseReducer reducer(net.layers, small_buckets(GetParam()));
  reshape(net.layers[7][0], {rank_in_world() + 1});
  backward(net, reducer);
  try {
    reducer.finish();
    ADD_FAILURE() << where() << ": no error";
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("layer 7 (parameter 0)"), std::string::npos) << text;
    EXPECT_NE(text.find("float [1] on rank 0"), std::string::npos) << text;
    EXPECT_NE(text.find("float [2] on rank 1"), std::string::npos) << text;
  }
  EXPECT_FALSE(reducer.in_iteration());
  reshape(net.layers[7][0], {5});
  backward(net, reducer);
  reducer.finish();
  std::string first;
  EXPECT_EQ(net.wrong_means(reducer.size(), &first), 0) << where() << ", sizes agreeing again: " << first;
}

INSTANTIATE_TEST_SUITE_P(Overlap, LayerwiseResize, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "OnTheCommunicationThread" : "InFinish");
                         });

}  // namespace
}  // namespace blobrt::dist
