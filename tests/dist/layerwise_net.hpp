// The parameters of a small net by layer, for the LayerwiseReducer suites under mpirun
// (layerwise_test.cpp, layerwise_resize_test.cpp, layerwise_abandon_test.cpp): diffs whose
// ranks' mean is exact, and a check of it.
#ifndef BLOBRT_TESTS_DIST_LAYERWISE_NET_HPP
#define BLOBRT_TESTS_DIST_LAYERWISE_NET_HPP

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/dist/layerwise.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt::dist {

inline int rank_in_world() {
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
inline void backward(Net& net, LayerwiseReducer& reducer) {
  reducer.begin_backward();
  for (std::size_t layer = net.layers.size(); layer-- > 0;) {
    net.write_layer(layer, reducer.rank());
    reducer.layer_done(static_cast<int>(layer));
  }
}

inline std::string where() { return "rank " + std::to_string(rank_in_world()) + " on " + current_device_id(); }

inline bool mpi_allows_a_communication_thread() {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return level >= MPI_THREAD_SERIALIZED;
}

}  // namespace blobrt::dist

#endif
