#include "layerwise_plan.hpp"

#include "list_check.hpp"

namespace blobrt::dist {

namespace {

std::size_t bytes_of(const std::vector<ParamRef>& params) {
  std::size_t bytes = 0;
  for (const ParamRef& p : params) bytes += static_cast<std::size_t>(p.count()) * p.element_size();
  return bytes;
}

}  // namespace

BucketPlan plan_buckets(const std::vector<std::vector<ParamRef>>& layers, std::size_t limit) {
  BucketPlan plan;
  plan.bucket_of_layer.assign(layers.size(), -1);
  for (const auto& layer : layers) {
    plan.counts.emplace_back();
    for (const ParamRef& p : layer) plan.counts.back().push_back(p.count());
  }
  for (std::size_t i = layers.size(); i-- > 0;) {
    if (layers[i].empty()) continue;
    const std::size_t bytes = bytes_of(layers[i]);
    // A new bucket where this layer would overfill the open one (never after an empty one).
    if (plan.buckets.empty() || (plan.buckets.back().bytes > 0 && plan.buckets.back().bytes + bytes > limit)) {
      plan.buckets.emplace_back();
    }
    BucketPlan::Bucket& bucket = plan.buckets.back();
    bucket.params.insert(bucket.params.end(), layers[i].begin(), layers[i].end());
    bucket.layers.push_back(static_cast<int>(i));
    bucket.bytes += bytes;
    plan.bucket_of_layer[i] = static_cast<int>(plan.buckets.size() - 1);
  }
  return plan;
}

bool counts_changed(const std::vector<std::vector<ParamRef>>& layers, const BucketPlan& plan) {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (std::size_t j = 0; j < layers[i].size(); ++j) {
      if (layers[i][j].count() != plan.counts[i][j]) return true;
    }
  }
  return false;
}

std::vector<std::string> describe_layers(const std::vector<std::vector<ParamRef>>& layers) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::string line = "layer " + std::to_string(i) + ":";
    for (const std::string& p : describe(layers[i])) line += " " + p + ",";
    if (line.back() == ',') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string bucket_contents(const BucketPlan::Bucket& bucket, const std::vector<std::vector<ParamRef>>& layers) {
  std::string text;
  std::size_t first = 0;
  for (std::size_t k = 0; k < bucket.layers.size(); ++k) {
    const std::size_t n = layers[bucket.layers[k]].size();
    if (k) text += k + 1 == bucket.layers.size() ? " and " : ", ";
    text += "layer " + std::to_string(bucket.layers[k]) + " (" + (n == 1 ? "parameter " : "parameters ") +
            std::to_string(first) + (n == 1 ? "" : "-" + std::to_string(first + n - 1)) + ")";
    first += n;
  }
  return text;
}

}  // namespace blobrt::dist
