// Filling caffe::Blob from the generated caffe::FillerParameter with Caffe's distributions,
// drawn through caffe_rng_* as Caffe's fillers draw them: constant, uniform, gaussian
// (dense and sparse), positive_unitball, xavier and msra with each VarianceNorm, on 1-D,
// 2-D, 4-D and 5-D blobs. The checks are on range, mean and variance, and on the blob's
// own asum/sumsq (computed where the backend keeps the data) agreeing with the host.
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "peer_test.hpp"

namespace caffe_peer {
namespace {

using caffe::Blob;
using caffe::FillerParameter;
using std::vector;

// The fans Caffe's xavier and msra use: fan_in = count / shape(0); fan_out =
// count / shape(1), or count for a 1-D blob; `n` by the VarianceNorm.
template <typename Dtype>
Dtype fan(const FillerParameter& param, const Blob<Dtype>& blob) {
  const int fan_in = blob.count() / blob.shape(0);
  const int fan_out = blob.num_axes() > 1 ? blob.count() / blob.shape(1) : blob.count();
  switch (param.variance_norm()) {
    case FillerParameter::AVERAGE:
      return (fan_in + fan_out) / Dtype(2);
    case FillerParameter::FAN_OUT:
      return fan_out;
    default:
      return fan_in;
  }
}

// A filler written for these tests from the FillerParameter's documented meaning.
template <typename Dtype>
void fill(const FillerParameter& param, Blob<Dtype>* blob) {
  CHECK(blob->count());
  Dtype* data = blob->mutable_cpu_data();
  const int n = blob->count();
  const std::string& type = param.type();
  if (type == "constant") {
    caffe::caffe_set(n, Dtype(param.value()), data);
  } else if (type == "uniform") {
    caffe::caffe_rng_uniform<Dtype>(n, Dtype(param.min()), Dtype(param.max()), data);
  } else if (type == "gaussian") {
    caffe::caffe_rng_gaussian<Dtype>(n, Dtype(param.mean()), Dtype(param.std()), data);
    if (param.sparse() >= 0) {
      // Keep each weight with probability sparse / num_outputs.
      caffe::SyncedMemory mask_memory(n * sizeof(int));
      int* mask = static_cast<int*>(mask_memory.mutable_cpu_data());
      caffe::caffe_rng_bernoulli(n, Dtype(param.sparse()) / Dtype(blob->shape(0)), mask);
      for (int i = 0; i < n; ++i) data[i] *= mask[i];
    }
  } else if (type == "positive_unitball") {
    caffe::caffe_rng_uniform<Dtype>(n, Dtype(0), Dtype(1), data);
    const int dim = n / blob->shape(0);
    for (int row = 0; row < blob->shape(0); ++row) {
      const Dtype sum = caffe::caffe_cpu_asum(dim, data + row * dim);
      caffe::caffe_scal(dim, Dtype(1) / sum, data + row * dim);
    }
  } else if (type == "xavier") {
    const Dtype scale = std::sqrt(Dtype(3) / fan(param, *blob));
    caffe::caffe_rng_uniform<Dtype>(n, -scale, scale, data);
  } else if (type == "msra") {
    caffe::caffe_rng_gaussian<Dtype>(n, Dtype(0), std::sqrt(Dtype(2) / fan(param, *blob)), data);
  } else {
    FAIL() << "no filler " << type;
  }
}

struct Moments {
  double mean, var, min, max, asum, sumsq;
};
template <typename Dtype>
Moments moments(const Blob<Dtype>& blob) {
  Moments m{0, 0, INFINITY, -INFINITY, 0, 0};
  const Dtype* d = blob.cpu_data();
  for (int i = 0; i < blob.count(); ++i) {
    m.mean += d[i];
    m.asum += std::abs(d[i]);
    m.sumsq += double(d[i]) * d[i];
    m.min = std::min<double>(m.min, d[i]);
    m.max = std::max<double>(m.max, d[i]);
  }
  m.mean /= blob.count();
  for (int i = 0; i < blob.count(); ++i) m.var += (d[i] - m.mean) * (d[i] - m.mean);
  m.var /= blob.count();
  return m;
}

const vector<vector<int>> kShapes = {{2, 3, 4, 5}, {15}, {8, 3}, {2, 3, 4, 5, 2}};

template <typename Dtype>
class PeerFillerTest : public ::testing::Test {
 public:  // check_scaled below uses it too
  void SetUp() override { caffe::Caffe::set_random_seed(1701); }
  // Fills `shape`, checks the blob's own reductions against the host's, returns moments.
  Moments fill_and_measure(const FillerParameter& param, const vector<int>& shape) {
    blob_.Reshape(shape);
    fill(param, &blob_);
    Moments m = moments(blob_);
    // The device side's reductions see the same values (asum/sumsq go where the head is).
    blob_.gpu_data();
    const double eps = sizeof(Dtype) == 4 ? 1e-5 : 1e-12;
    EXPECT_NEAR(blob_.asum_data(), m.asum, m.asum * eps + 1e-6);
    EXPECT_NEAR(blob_.sumsq_data(), m.sumsq, m.sumsq * eps + 1e-6);
    return m;
  }
  Blob<Dtype> blob_;
};
TYPED_TEST_SUITE(PeerFillerTest, Dtypes);

TYPED_TEST(PeerFillerTest, DefaultsAreCaffes) {
  FillerParameter param;  // the generated message's defaults are Caffe's
  EXPECT_EQ(param.type(), "constant");
  EXPECT_EQ(param.value(), 0);
  EXPECT_EQ(param.min(), 0);
  EXPECT_EQ(param.max(), 1);
  EXPECT_EQ(param.std(), 1);
  EXPECT_EQ(param.sparse(), -1);
  EXPECT_EQ(param.variance_norm(), FillerParameter::FAN_IN);
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString("type: 'xavier' variance_norm: AVERAGE", &param));
  EXPECT_EQ(param.variance_norm(), FillerParameter::AVERAGE);
  EXPECT_EQ(caffe::FillerParameter_VarianceNorm_FAN_OUT, 1);  // the name Caffe's filler.hpp uses
}

TYPED_TEST(PeerFillerTest, Constant) {
  FillerParameter param;
  param.set_value(10);
  for (const auto& shape : kShapes) {
    Moments m = this->fill_and_measure(param, shape);
    EXPECT_EQ(m.min, 10);
    EXPECT_EQ(m.max, 10);
  }
}

TYPED_TEST(PeerFillerTest, UniformStaysInRange) {
  FillerParameter param;
  param.set_type("uniform");
  param.set_min(1);
  param.set_max(2);
  for (const auto& shape : kShapes) {
    Moments m = this->fill_and_measure(param, shape);
    EXPECT_GE(m.min, 1);
    EXPECT_LE(m.max, 2);
    EXPECT_LT(m.min, m.max);  // not one value repeated
  }
}

TYPED_TEST(PeerFillerTest, GaussianMeanAndVariance) {
  FillerParameter param;
  param.set_type("gaussian");
  param.set_mean(10);
  param.set_std(0.1f);
  const double tolerance = 5;  // on these small blobs: mean within 5 sigma, variance within 5x
  for (const auto& shape : kShapes) {
    Moments m = this->fill_and_measure(param, shape);
    EXPECT_NEAR(m.mean, 10, 0.1 * tolerance);
    EXPECT_GE(m.var, 0.01 / tolerance);
    EXPECT_LE(m.var, 0.01 * tolerance);
  }
  // A large blob pins them down.
  Moments big = this->fill_and_measure(param, {1000, 2, 4, 5});
  EXPECT_NEAR(big.mean, 10, 0.01);
  EXPECT_NEAR(std::sqrt(big.var), 0.1, 0.005);
}

TYPED_TEST(PeerFillerTest, SparseGaussianKeepsAboutSparseOfEachOutput) {
  FillerParameter param;
  param.set_type("gaussian");
  param.set_std(1);
  param.set_sparse(3);
  // 100 outputs of 200 weights: about 3/100 of the weights survive.
  Moments m = this->fill_and_measure(param, {100, 200});
  int nonzero = 0;
  for (int i = 0; i < this->blob_.count(); ++i) nonzero += this->blob_.cpu_data()[i] != 0;
  EXPECT_NEAR(nonzero / 20000.0, 0.03, 0.006);
  EXPECT_NEAR(m.var, 0.03, 0.01);  // the variance scales with what is kept
}

TYPED_TEST(PeerFillerTest, PositiveUnitballRowsSumToOne) {
  FillerParameter param;
  param.set_type("positive_unitball");
  for (const auto& shape : kShapes) {
    Moments m = this->fill_and_measure(param, shape);
    EXPECT_GE(m.min, 0);
    EXPECT_LE(m.max, 1);
    const int rows = shape[0], dim = this->blob_.count() / rows;
    for (int r = 0; r < rows; ++r) {
      double sum = 0;
      for (int j = 0; j < dim; ++j) sum += this->blob_.cpu_data()[r * dim + j];
      EXPECT_NEAR(sum, 1, 1e-3) << "row " << r;
    }
  }
}

// xavier: U(-sqrt(3/n), sqrt(3/n)), variance 1/n; msra: N(0, 2/n).
template <typename Dtype>
void check_scaled(PeerFillerTest<Dtype>* test, const char* type, double variance_times_n) {
  const vector<int> shape{1000, 2, 4, 5};  // fan_in 40, fan_out 40000 / 2 = 20000, average 10020
  for (auto norm : {FillerParameter::FAN_IN, FillerParameter::FAN_OUT, FillerParameter::AVERAGE}) {
    FillerParameter param;
    param.set_type(type);
    param.set_variance_norm(norm);
    Moments m = test->fill_and_measure(param, shape);
    const double n = norm == FillerParameter::FAN_IN ? 40 : norm == FillerParameter::FAN_OUT ? 20000 : 10020;
    const double target = variance_times_n / n;
    SCOPED_TRACE(std::string(type) + " " + FillerParameter::VarianceNorm_Name(norm));
    EXPECT_NEAR(m.mean, 0, 0.1 * std::sqrt(target));
    EXPECT_NEAR(m.var, target, 0.05 * target);
    if (std::string(type) == "xavier") {
      EXPECT_GE(m.min, -std::sqrt(3 / n) * (1 + 1e-6));
      EXPECT_LE(m.max, std::sqrt(3 / n) * (1 + 1e-6));
    }
  }
  // A 1-D blob: fan_in 1 and fan_out count.
  FillerParameter param;
  param.set_type(type);
  param.set_variance_norm(FillerParameter::FAN_OUT);
  Moments m = test->fill_and_measure(param, {4000});
  EXPECT_NEAR(m.var, variance_times_n / 4000, 0.05 * variance_times_n / 4000);
}

TYPED_TEST(PeerFillerTest, XavierScalesByTheChosenFan) { check_scaled(this, "xavier", 1); }

TYPED_TEST(PeerFillerTest, MsraScalesByTheChosenFan) { check_scaled(this, "msra", 2); }

TYPED_TEST(PeerFillerTest, SameSeedSameFill) {
  FillerParameter param;
  param.set_type("msra");
  caffe::Caffe::set_random_seed(42);
  this->fill_and_measure(param, {3, 4, 5});
  const vector<TypeParam> first(this->blob_.cpu_data(), this->blob_.cpu_data() + 60);
  caffe::Caffe::set_random_seed(42);
  this->fill_and_measure(param, {3, 4, 5});
  EXPECT_EQ(vector<TypeParam>(this->blob_.cpu_data(), this->blob_.cpu_data() + 60), first);
}

}  // namespace
}  // namespace caffe_peer
