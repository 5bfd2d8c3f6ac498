// How a LayerwiseReducer groups layers into buckets (docs/dist.md, "Overlap with
// backward"), from the parameters' sizes at the time of planning, and whether those sizes
// have changed since.
#ifndef BLOBRT_DIST_LAYERWISE_PLAN_HPP
#define BLOBRT_DIST_LAYERWISE_PLAN_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "blobrt/dist/communicator.hpp"

namespace blobrt::dist {

struct BucketPlan {
  struct Bucket {
    std::vector<ParamRef> params;
    std::vector<int> layers;  // in backward order
    std::size_t bytes = 0;    // at planning time
  };
  std::vector<Bucket> buckets;                   // in backward order
  std::vector<int> bucket_of_layer;              // -1 for a layer without parameters
  std::vector<std::vector<std::int64_t>> counts;  // per layer, per parameter, when planned
};

// Buckets in backward order: from the last layer, consecutive layers while the bucket's
// bytes stay within `limit` (a layer larger than it is a bucket alone). Every layer with
// parameters is in a bucket, also one whose parameters are all empty now: they may be sized
// later, and the bucket's Communicator then lays them out anew.
BucketPlan plan_buckets(const std::vector<std::vector<ParamRef>>& layers, std::size_t limit);

// Whether some parameter's element count differs from the plan's.
bool counts_changed(const std::vector<std::vector<ParamRef>>& layers, const BucketPlan& plan);

// "layer 3: float [20 1 5 5], float [20]" per layer, for the ranks' comparison.
std::vector<std::string> describe_layers(const std::vector<std::vector<ParamRef>>& layers);

// "layer 6 (its parameters 0-1 here) and layer 5 (parameter 2)": which layers' blobs a
// bucket's parameter list holds, for its errors.
std::string bucket_contents(const BucketPlan::Bucket& bucket, const std::vector<std::vector<ParamRef>>& layers);

}  // namespace blobrt::dist

#endif
