// What blobrt-caffe gives the Caffe forks' portable builds beyond BVLC's, compiled as those
// builds compile it and run on each backend's device:
// - its portable form of SSD's util/bbox_util.cu (blobrt/caffe/portable/cu/util/
//   bbox_util.hpp), against a stand-in of SSD's bbox_util.hpp (include/caffe/util/
//   bbox_util.hpp), its operands in Blob device memory as SSD's DetectionOutput and
//   MultiBoxLoss hand them over: boxes decoded by each code type, the background class left
//   alone, a permutation, the softmax, overlaps, non-maximum suppression, detections and the
//   confidence loss, each against values worked out here from the boxes' geometry;
// - blobrt-caffe's GPU methods for py-faster-rcnn's own layers (ROIPooling, SmoothL1Loss, whose
//   CPU code lacks a backward or is NOT_IMPLEMENTED), on stand-ins laid out as the fork's
//   fast_rcnn_layers.hpp, as the portable build dispatches to them: the pooled bins, each
//   gradient at its bin's maximum and the loss against values worked out here, a finite-
//   difference check of the loss's gradient, and no data crossing between host and device but
//   the loss and its weight;
// - its portable form of util/im2col.cu in the signatures of Caffe trees before 2016 (no
//   dilation: py-faster-rcnn's) and its n-d forms, which lay the columns out themselves (a 2015
//   tree has no im2col_nd_cpu): the n-d columns of a 2-axis image against blobrt's 2-D
//   im2col/col2im operations, bit for bit;
// - the CUDA runtime calls of Caffe's pre-NCCL P2PSync (SSD's, OpenPose's and
//   py-faster-rcnn's parallel.cpp) in blobrt/caffe/portable/device_runtime.hpp: cudaMalloc,
//   cudaMemcpy each way, cudaFree, peer access and the board fields.
#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"
#include "caffe/util/bbox_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <vector>

#include <blobrt/caffe/portable/cu/util/bbox_util.hpp>
#include <blobrt/caffe/portable/cu/util/im2col.hpp>
#include <blobrt/caffe/portable/device_runtime.hpp>
#include <blobrt/caffe/portable/gpu_methods.hpp>
#include <blobrt/transfer_counters.hpp>

namespace caffe {

// Caffe's Layer and LossLayer, as much of them as the methods read.
template <typename Dtype>
class Layer {
 public:
  virtual ~Layer() = default;
  std::vector<shared_ptr<Blob<Dtype>>>& blobs() { return blobs_; }
  // Caffe's Forward in GPU mode: the layer's Forward_gpu (here: blobrt's method, where a class uses one).
  virtual Dtype Forward(const std::vector<Blob<Dtype>*>&, const std::vector<Blob<Dtype>*>&) { return Dtype(0); }

 protected:
  std::vector<shared_ptr<Blob<Dtype>>> blobs_;
  std::vector<bool> param_propagate_down_;
};
template <typename Dtype>
class LossLayer : public Layer<Dtype> {};

// py-faster-rcnn's ROIPoolingLayer (fast_rcnn_layers.hpp), its members as Reshape sets them.
template <typename Dtype>
class ROIPoolingLayer : public Layer<Dtype> {
 public:
  ROIPoolingLayer(const Blob<Dtype>& map, int pooled_h, int pooled_w, Dtype scale)
      : channels_(map.channels()), height_(map.height()), width_(map.width()), pooled_height_(pooled_h),
        pooled_width_(pooled_w), spatial_scale_(scale) {}

 protected:
  int channels_, height_, width_, pooled_height_, pooled_width_;
  Dtype spatial_scale_;
  Blob<int> max_idx_;
};

// py-faster-rcnn's SmoothL1LossLayer, as LayerSetUp and Reshape leave it.
template <typename Dtype>
class SmoothL1LossLayer : public LossLayer<Dtype> {
 public:
  SmoothL1LossLayer(const Blob<Dtype>& bottom, bool weights, Dtype sigma) : has_weights_(weights), sigma2_(sigma * sigma) {
    diff_.ReshapeLike(bottom);
    errors_.ReshapeLike(bottom);
    ones_.ReshapeLike(bottom);
  }

 protected:
  Blob<Dtype> diff_, errors_, ones_;
  bool has_weights_;
  Dtype sigma2_;
};

// SSD's NormalizeLayer (normalize_layer.hpp), its members as LayerSetUp and Reshape leave
// them: the scale (one, or one per channel), the norms, the ones and the buffers.
template <typename Dtype>
class NormalizeLayer : public Layer<Dtype> {
 public:
  NormalizeLayer(const Blob<Dtype>& bottom, bool across, const std::vector<double>& scales, Dtype eps)
      : across_spatial_(across), channel_shared_(scales.size() == 1), eps_(eps) {
    const int channels = bottom.channels(), height = bottom.height(), width = bottom.width();
    this->blobs_.push_back(shared_ptr<Blob<Dtype>>(new Blob<Dtype>(std::vector<int>{static_cast<int>(scales.size())})));
    for (std::size_t i = 0; i < scales.size(); ++i) this->blobs_[0]->mutable_cpu_data()[i] = static_cast<Dtype>(scales[i]);
    this->param_propagate_down_ = {true};
    norm_.Reshape(bottom.num(), 1, across ? 1 : height, across ? 1 : width);
    sum_channel_multiplier_.Reshape(1, channels, 1, 1);
    sum_spatial_multiplier_.Reshape(1, 1, height, width);
    std::fill(sum_channel_multiplier_.mutable_cpu_data(), sum_channel_multiplier_.mutable_cpu_data() + channels, Dtype(1));
    std::fill(sum_spatial_multiplier_.mutable_cpu_data(), sum_spatial_multiplier_.mutable_cpu_data() + height * width,
              Dtype(1));
    buffer_.Reshape(1, channels, height, width);
    buffer_channel_.Reshape(1, channels, 1, 1);
    buffer_spatial_.Reshape(1, 1, height, width);
  }

 protected:
  Blob<Dtype> norm_;
  Blob<Dtype> sum_channel_multiplier_, sum_spatial_multiplier_;
  Blob<Dtype> buffer_, buffer_channel_, buffer_spatial_;
  bool across_spatial_;
  bool channel_shared_;
  Dtype eps_;
};

// SSD's PermuteLayer, with its Reshape (the steps rewritten at each call, as Caffe's Net calls it).
template <typename Dtype>
class PermuteLayer : public Layer<Dtype> {
 public:
  explicit PermuteLayer(const std::vector<int>& order) : num_axes_(static_cast<int>(order.size())) {
    permute_order_.Reshape(std::vector<int>{num_axes_});
    old_steps_.Reshape(std::vector<int>{num_axes_});
    new_steps_.Reshape(std::vector<int>{num_axes_});
    need_permute_ = false;
    for (int i = 0; i < num_axes_; ++i) {
      permute_order_.mutable_cpu_data()[i] = order[i];
      need_permute_ = need_permute_ || order[i] != i;
    }
  }
  void Reshape(const Blob<Dtype>& bottom, Blob<Dtype>& top) {
    std::vector<int> top_shape;
    for (int i = 0; i < num_axes_; ++i) {
      old_steps_.mutable_cpu_data()[i] = i == num_axes_ - 1 ? 1 : bottom.count(i + 1);
      top_shape.push_back(bottom.shape(permute_order_.cpu_data()[i]));
    }
    top.Reshape(top_shape);
    for (int i = 0; i < num_axes_; ++i) new_steps_.mutable_cpu_data()[i] = i == num_axes_ - 1 ? 1 : top.count(i + 1);
  }

 protected:
  int num_axes_;
  bool need_permute_;
  Blob<int> permute_order_, old_steps_, new_steps_;
};

// Caffe's SoftmaxLayer, as its Reshape sets it for axis 1 (SoftmaxWithLoss's inner layer).
template <typename Dtype>
class SoftmaxLayer : public Layer<Dtype> {
 public:
  explicit SoftmaxLayer(const Blob<Dtype>& bottom) : outer_num_(bottom.count(0, 1)), inner_num_(bottom.count(2)) {}
  Dtype Forward(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top) override {
    EXPECT_TRUE(blobrt_caffe_portable::forward_on_device<Dtype>("SoftmaxLayer", this, bottom, top));
    return Dtype(0);
  }

 protected:
  int outer_num_, inner_num_, softmax_axis_ = 1;
};

// The SoftmaxWithLossLayer of a 2015 Caffe (py-faster-rcnn's loss_layers.hpp): a normalize_
// flag, no normalization modes.
template <typename Dtype>
class SoftmaxWithLossLayer : public LossLayer<Dtype> {
 public:
  SoftmaxWithLossLayer(Blob<Dtype>& bottom, bool normalize, bool ignore, int ignore_label)
      : has_ignore_label_(ignore), ignore_label_(ignore_label), normalize_(normalize) {
    softmax_layer_ = std::make_shared<SoftmaxLayer<Dtype>>(bottom);
    prob_.ReshapeLike(bottom);
    softmax_bottom_vec_ = {&bottom};
    softmax_top_vec_ = {&prob_};
    outer_num_ = bottom.count(0, 1);
    inner_num_ = bottom.count(2);
  }

 protected:
  std::shared_ptr<Layer<Dtype>> softmax_layer_;
  Blob<Dtype> prob_;
  std::vector<Blob<Dtype>*> softmax_bottom_vec_, softmax_top_vec_;
  bool has_ignore_label_;
  int ignore_label_;
  bool normalize_;
  int softmax_axis_ = 1, outer_num_, inner_num_;
};

}  // namespace caffe

#include <blobrt/caffe/portable/layers/softmax_layer.hpp>
#include <blobrt/caffe/portable/layers/softmax_loss_layer.hpp>
#include <blobrt/caffe/portable/layers/normalize_layer.hpp>
#include <blobrt/caffe/portable/layers/permute_layer.hpp>
#include <blobrt/caffe/portable/layers/roi_pooling_layer.hpp>
#include <blobrt/caffe/portable/layers/smooth_L1_loss_layer.hpp>

namespace caffe {

// bbox_util.cpp's greedy suppression over an overlap table (SSD's CPU code; the portable
// ApplyNMSGPU calls it): the best box kept, the boxes it overlaps dropped, and so on.
void ApplyNMS(const bool* overlapped, const int num, std::vector<int>* indices) {
  std::vector<int> left(num);
  std::iota(left.begin(), left.end(), 0);
  indices->clear();
  while (!left.empty()) {
    const int best = left.front();
    indices->push_back(best);
    std::vector<int> rest;
    for (std::size_t k = 1; k < left.size(); ++k) {
      if (!overlapped[best * num + left[k]]) rest.push_back(left[k]);
    }
    left = rest;
  }
}

}  // namespace caffe

namespace {

using caffe::Blob;

const bool addressable = blobrt_caffe_portable::request_addressable_handles();

template <typename Dtype>
class SsdBBoxUtil : public ::testing::Test {
 protected:
  // A blob of `values`, on the device (its gpu_data() is what SSD's callers hand over).
  static void fill(Blob<Dtype>& blob, const std::vector<double>& values) {
    ASSERT_EQ(static_cast<std::size_t>(blob.count()), values.size());
    for (int i = 0; i < blob.count(); ++i) blob.mutable_cpu_data()[i] = static_cast<Dtype>(values[i]);
    blob.gpu_data();
  }
  static double tolerance() { return sizeof(Dtype) == 4 ? 1e-6 : 1e-12; }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SsdBBoxUtil, Precisions);

// Two priors and their variances (CENTER_SIZE: centre offsets scaled by the prior's size and
// the first two variances, the size by exp of the last two).
TYPED_TEST(SsdBBoxUtil, DecodesByEachCodeTypeOnTheDevice) {
  using Dtype = TypeParam;
  ASSERT_TRUE(addressable);
  Blob<Dtype> prior(1, 2, 8, 1), loc(1, 8, 1, 1), boxes(1, 8, 1, 1);
  this->fill(prior, {0.1, 0.2, 0.3, 0.6, 0.5, 0.5, 0.9, 0.7,   // two priors' corners
                     0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2});  // their variances
  this->fill(loc, {1, -2, 0, std::log(2.0) / 0.2, 0, 0, 0, 0});
  this->fill(boxes, std::vector<double>(8, -9));
  caffe::DecodeBBoxesGPU<Dtype>(8, loc.gpu_data(), prior.gpu_data(), caffe::PriorBoxParameter_CodeType_CENTER_SIZE,
                                false, 2, true, 1, 0, false, boxes.mutable_gpu_data());
  // Prior 0: centre (0.2, 0.4), size 0.2 x 0.4; moved by 0.1 * 1 * 0.2 in x and 0.1 * -2 * 0.4 in y, its
  // height doubled. Prior 1 with no offsets: itself.
  const double want[8] = {0.22 - 0.1, 0.32 - 0.4, 0.22 + 0.1, 0.32 + 0.4, 0.5, 0.5, 0.9, 0.7};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(boxes.cpu_data()[i], want[i], 1e3 * this->tolerance()) << i;
  // CORNER with clipping, two classes not sharing locations: class 0, the background, is left as it was.
  Blob<Dtype> loc2(1, 16, 1, 1), boxes2(1, 16, 1, 1);
  std::vector<double> offsets(16);
  for (int i = 0; i < 16; ++i) offsets[i] = i % 2 ? 10.0 : 1.0;  // outside [0, 1] once added: clipped
  this->fill(loc2, offsets);
  this->fill(boxes2, std::vector<double>(16, -9));
  caffe::DecodeBBoxesGPU<Dtype>(16, loc2.gpu_data(), prior.gpu_data(), caffe::PriorBoxParameter_CodeType_CORNER,
                                false, 2, false, 2, 0, true, boxes2.mutable_gpu_data());
  for (int d = 0; d < 2; ++d) {
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(boxes2.cpu_data()[(d * 2 + 0) * 4 + i], Dtype(-9)) << "background, prior " << d;
      const double corner = prior.cpu_data()[d * 4 + i], var = prior.cpu_data()[8 + d * 4 + i];
      const double v = std::min(1.0, std::max(0.0, corner + offsets[(d * 2 + 1) * 4 + i] * var));
      EXPECT_NEAR(boxes2.cpu_data()[(d * 2 + 1) * 4 + i], v, this->tolerance()) << "prior " << d << ", " << i;
    }
  }
}

TYPED_TEST(SsdBBoxUtil, PermutesClassesAheadOfPriors) {
  using Dtype = TypeParam;
  const int num = 2, priors = 3, classes = 4;
  Blob<Dtype> data(num, priors * classes, 1, 1), permuted(num, priors * classes, 1, 1);
  std::vector<double> v(num * priors * classes);
  std::iota(v.begin(), v.end(), 0.0);
  this->fill(data, v);
  // From device memory, and from host memory as SSD's tests hand it over (CUDA reads Caffe's
  // pinned host memory; blobrt reads a pointer that is no device buffer as the host's).
  for (const Dtype* from : {data.gpu_data(), data.cpu_data()}) {
    std::fill(permuted.mutable_cpu_data(), permuted.mutable_cpu_data() + permuted.count(), Dtype(-1));
    caffe::PermuteDataGPU<Dtype>(data.count(), from, classes, priors, 1, permuted.mutable_gpu_data());
    for (int n = 0; n < num; ++n) {
      for (int c = 0; c < classes; ++c) {
        for (int d = 0; d < priors; ++d) {
          EXPECT_EQ(permuted.cpu_data()[(n * classes + c) * priors + d], Dtype((n * priors + d) * classes + c));
        }
      }
    }
  }
}

// Boxes 0 and 1 overlap by 1/3 (IoU), box 2 by nothing; scores 0.9, 0.8, 0.7 (box 3 below the
// confidence threshold).
TYPED_TEST(SsdBBoxUtil, OverlapsSuppressionAndDetections) {
  using Dtype = TypeParam;
  Blob<Dtype> boxes(1, 16, 1, 1);
  this->fill(boxes, {0.0, 0.0, 0.4, 0.2, 0.2, 0.0, 0.6, 0.2, 0.7, 0.7, 1.2, 0.9, 0.0, 0.0, 0.4, 0.2});
  EXPECT_NEAR(caffe::JaccardOverlapGPU(boxes.cpu_data(), boxes.cpu_data() + 4), 1.0 / 3.0, this->tolerance());
  EXPECT_NEAR(caffe::BBoxSizeGPU(boxes.cpu_data() + 8), 0.5 * 0.2, this->tolerance());
  Blob<bool> overlapped(1, 1, 4, 4);
  std::fill(overlapped.mutable_cpu_data(), overlapped.mutable_cpu_data() + 16, false);
  caffe::ComputeOverlappedGPU<Dtype>(16, boxes.gpu_data(), 4, 1, Dtype(0.3), overlapped.mutable_gpu_data());
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      const bool same_or_first_pair = (i % 3 == 0 && j % 3 == 0) || (i < 2 && j < 2) || (i == 3 && j == 1) ||
                                      (i == 1 && j == 3);
      EXPECT_EQ(overlapped.cpu_data()[i * 4 + j], i != j && same_or_first_pair) << i << ", " << j;
    }
  }
  const Dtype scores[4] = {Dtype(0.9), Dtype(0.8), Dtype(0.7), Dtype(0.05)};
  std::vector<int> kept;
  caffe::ApplyNMSGPU<Dtype>(boxes.gpu_data(), scores, 4, 0.1f, -1, 0.3f, &kept);
  EXPECT_EQ(kept, (std::vector<int>{0, 2})) << "box 1 suppressed by box 0, box 3 below the threshold";
  kept.clear();
  caffe::ApplyNMSGPU<Dtype>(boxes.gpu_data(), scores, 4, 0.1f, -1, 0.4f, &kept);
  EXPECT_EQ(kept, (std::vector<int>{0, 1, 2})) << "an IoU of 1/3 is not above 0.4";
  kept.clear();
  caffe::ApplyNMSGPU<Dtype>(boxes.gpu_data(), scores, 4, 0.1f, 1, 0.4f, &kept);
  EXPECT_EQ(kept, (std::vector<int>{0})) << "top_k 1";
  Blob<Dtype> conf(1, 4, 1, 1), detections;
  this->fill(conf, {0.9, 0.8, 0.7, 0.05});
  caffe::GetDetectionsGPU<Dtype>(boxes.gpu_data(), conf.gpu_data(), 5, 3, {2, 0}, true, &detections);
  ASSERT_EQ(detections.count(), 14);
  const double want[14] = {5, 3, 0.7, 0.7, 0.7, 1.0, 0.9, 5, 3, 0.9, 0.0, 0.0, 0.4, 0.2};  // box 2 clipped
  for (int i = 0; i < 14; ++i) EXPECT_NEAR(detections.cpu_data()[i], want[i], this->tolerance()) << i;
}

// Two images of two predictions over three classes: image 0's prediction 1 matched ground
// truth box 0 (label 2), everything else the background (0).
TYPED_TEST(SsdBBoxUtil, ConfidenceLossOfEachPrediction) {
  using Dtype = TypeParam;
  const int num = 2, preds = 2, classes = 3;
  Blob<Dtype> conf(num, preds * classes, 1, 1);
  std::vector<double> logits(num * preds * classes);
  for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = 0.25 * static_cast<double>(i % 5) - 0.5;
  this->fill(conf, logits);
  std::vector<std::map<int, std::vector<int> > > matches(num);
  matches[0][-1] = {-1, 0};
  matches[1][-1] = {-1, -1};
  std::map<int, std::vector<caffe::NormalizedBBox> > truth;
  truth[0].resize(1);
  truth[0][0].set_label(2);
  for (const auto type : {caffe::MultiBoxLossParameter_ConfLossType_SOFTMAX,
                          caffe::MultiBoxLossParameter_ConfLossType_LOGISTIC}) {
    std::vector<std::vector<float> > losses;
    caffe::ComputeConfLossGPU<Dtype>(conf, num, preds, classes, 0, type, matches, truth, &losses);
    ASSERT_EQ(losses.size(), 2u);
    for (int i = 0; i < num; ++i) {
      for (int p = 0; p < preds; ++p) {
        const int label = i == 0 && p == 1 ? 2 : 0;
        const double* x = &logits[(i * preds + p) * classes];
        double want = 0;
        if (type == caffe::MultiBoxLossParameter_ConfLossType_SOFTMAX) {
          want = std::log(std::exp(x[0]) + std::exp(x[1]) + std::exp(x[2])) - x[label];
        } else {
          for (int c = 0; c < classes; ++c) want += std::log1p(std::exp(-std::fabs(x[c]))) + std::max(x[c], 0.0) -
                                                    (c == label ? x[c] : 0.0);
        }
        EXPECT_NEAR(losses[i][p], want, 1e-5) << "image " << i << ", prediction " << p << ", type " << type;
      }
    }
  }
  // The softmax itself, on the device: each position's probabilities sum to 1.
  Blob<Dtype> prob(num, preds * classes, 1, 1);
  caffe::SoftMaxGPU<Dtype>(conf.gpu_data(), num * preds, classes, 1, prob.mutable_gpu_data());
  for (int q = 0; q < num * preds; ++q) {
    EXPECT_NEAR(prob.cpu_data()[q * 3] + prob.cpu_data()[q * 3 + 1] + prob.cpu_data()[q * 3 + 2], 1.0, 1e-6);
  }
}

template <typename Dtype>
class FasterRcnnLayers : public ::testing::Test {
 protected:
  using Blobs = std::vector<Blob<Dtype>*>;
  template <class L>
  static bool forward(const char* name, L& layer, const Blobs& bottom, const Blobs& top) {
    return blobrt_caffe_portable::forward_on_device<Dtype>(name, static_cast<caffe::Layer<Dtype>*>(&layer), bottom,
                                                           top);
  }
  template <class L>
  static bool backward(const char* name, L& layer, const Blobs& top, const std::vector<bool>& down,
                       const Blobs& bottom) {
    return blobrt_caffe_portable::backward_on_device<Dtype>(name, static_cast<caffe::Layer<Dtype>*>(&layer), top,
                                                            down, bottom);
  }
  static void fill(Blob<Dtype>& blob, const std::vector<double>& values) {
    ASSERT_EQ(static_cast<std::size_t>(blob.count()), values.size());
    for (int i = 0; i < blob.count(); ++i) blob.mutable_cpu_data()[i] = static_cast<Dtype>(values[i]);
    blob.gpu_data();
  }
};
TYPED_TEST_SUITE(FasterRcnnLayers, Precisions);

// Two images of 2 channels, 6 x 8 cells, each cell's value its index in the blob (so a bin's
// maximum is its last cell); regions in input pixels at spatial scale 1/2: an aligned 4 x 4
// cells cut into 2 x 2 bins of 2 x 2 cells, the same on image 1, one overlapping the first,
// and one naming no image of the batch (NaN bins, no gradient).
TYPED_TEST(FasterRcnnLayers, RoiPoolingBinsAndGradientsOnTheDevice) {
  using Dtype = TypeParam;
  ASSERT_TRUE(addressable);
  Blob<Dtype> map(2, 2, 6, 8), rois(4, 5, 1, 1), top(4, 2, 2, 2);
  std::vector<double> cells(map.count());
  std::iota(cells.begin(), cells.end(), 0.0);
  this->fill(map, cells);
  // Corners scale to cells: x 2..5, y 0..3; x 2..5, y 2..5 (shares row 2..3 with the first).
  this->fill(rois, {0, 4, 0, 10, 6, 1, 4, 0, 10, 6, 0, 4, 4, 10, 10, 2, 0, 0, 2, 2});
  caffe::ROIPoolingLayer<Dtype> layer(map, 2, 2, Dtype(0.5));
  const typename TestFixture::Blobs b{&map, &rois}, t{&top};
  top.mutable_gpu_data();
  map.mutable_gpu_diff();
  blobrt::reset_transfer_counters();
  ASSERT_TRUE(this->forward("ROIPoolingLayer", layer, b, t));
  EXPECT_EQ(blobrt::transfer_counters().host_to_device, 0u);
  EXPECT_EQ(blobrt::transfer_counters().device_to_host, 0u);
  std::vector<double> diffs(top.count());
  for (int i = 0; i < top.count(); ++i) diffs[i] = 0.25 * (i + 1);
  for (int i = 0; i < top.count(); ++i) top.mutable_cpu_diff()[i] = static_cast<Dtype>(diffs[i]);
  top.gpu_diff();
  blobrt::reset_transfer_counters();
  ASSERT_TRUE(this->backward("ROIPoolingLayer", layer, t, {true, false}, b));
  EXPECT_EQ(blobrt::transfer_counters().host_to_device, 0u);
  EXPECT_EQ(blobrt::transfer_counters().device_to_host, 0u);
  // Region r's bin (ph, pw) covers rows y0 + 2 ph, + 2 and columns 2 + 2 pw, + 2: its last cell.
  const int y0[3] = {0, 0, 2}, image[3] = {0, 1, 0};
  std::vector<double> want_diff(map.count(), 0.0);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 2; ++c) {
      for (int ph = 0; ph < 2; ++ph) {
        for (int pw = 0; pw < 2; ++pw) {
          const int i = ((r * 2 + c) * 2 + ph) * 2 + pw;
          if (r == 3) {
            EXPECT_TRUE(std::isnan(static_cast<double>(top.cpu_data()[i]))) << "no image " << i;
            continue;
          }
          const int cell = ((image[r] * 2 + c) * 6 + y0[r] + 2 * ph + 1) * 8 + 2 + 2 * pw + 1;
          EXPECT_EQ(top.cpu_data()[i], Dtype(cell)) << "region " << r << " channel " << c << " bin " << ph << pw;
          want_diff[cell] += diffs[i];
        }
      }
    }
  }
  for (int e = 0; e < map.count(); ++e) EXPECT_EQ(map.cpu_diff()[e], Dtype(want_diff[e])) << "cell " << e;
}

// py-faster-rcnn's loss with sigma 3 (the RPN's) and inside and outside weights: the loss and
// both bottoms' gradients against the formula in double; the gradient against central
// differences of the loss; nothing but the loss and its weight crossing.
TYPED_TEST(FasterRcnnLayers, SmoothL1LossWithWeightsOnTheDevice) {
  using Dtype = TypeParam;
  ASSERT_TRUE(addressable);
  const int num = 2, dim = 6, count = num * dim;
  Blob<Dtype> pred(num, dim, 1, 1), target(num, dim, 1, 1), inside(num, dim, 1, 1), outside(num, dim, 1, 1), loss;
  loss.Reshape(std::vector<int>{});
  std::vector<double> x(count), y(count), w_in(count), w_out(count);
  for (int i = 0; i < count; ++i) {
    y[i] = 0.05 * (i % 5);
    // Differences on both sides of 1 / sigma^2 = 0.111: every third one 0.02 (the quadratic piece).
    x[i] = i % 3 == 2 ? y[i] + (i % 2 ? 0.02 : -0.02) : 0.37 * ((i * 7) % 11) - 1.6;
    w_in[i] = i % 4 == 0 ? 0.0 : 1.0;
    w_out[i] = 0.5 + 0.125 * (i % 3);
  }
  this->fill(pred, x);
  this->fill(target, y);
  this->fill(inside, w_in);
  this->fill(outside, w_out);
  const double sigma2 = 9;
  caffe::SmoothL1LossLayer<Dtype> layer(pred, true, Dtype(3));
  const typename TestFixture::Blobs b{&pred, &target, &inside, &outside}, t{&loss};
  auto reference_loss = [&](const std::vector<double>& p) {
    double sum = 0;
    for (int i = 0; i < count; ++i) {
      const double d = w_in[i] * (p[i] - y[i]), a = std::fabs(d);
      sum += w_out[i] * (a < 1 / sigma2 ? 0.5 * d * d * sigma2 : a - 0.5 / sigma2);
    }
    return sum / num;
  };
  const double tol = sizeof(Dtype) == 4 ? 1e-5 : 1e-12;
  pred.mutable_gpu_diff();
  target.mutable_gpu_diff();
  loss.mutable_cpu_diff()[0] = Dtype(0.75);  // Net's SetLossWeights
  blobrt::reset_transfer_counters();
  ASSERT_TRUE(this->forward("SmoothL1LossLayer", layer, b, t));
  const double got = loss.cpu_data()[0];
  ASSERT_TRUE(this->backward("SmoothL1LossLayer", layer, t, {true, true, false, false}, b));
  EXPECT_EQ(blobrt::transfer_counters().host_to_device, 0u) << "the loss's weight is read on the host";
  EXPECT_EQ(blobrt::transfer_counters().device_to_host, 0u) << "the loss is written on the host";
  EXPECT_NEAR(got, reference_loss(x), tol * (1 + std::fabs(got)));
  std::vector<double> gradient(count);
  for (int i = 0; i < count; ++i) {
    const double d = w_in[i] * (x[i] - y[i]);
    const double slope = std::fabs(d) < 1 / sigma2 ? sigma2 * d : (d > 0) - (d < 0);
    const double want = 0.75 / num * slope * w_in[i] * w_out[i];
    gradient[i] = pred.cpu_diff()[i];
    EXPECT_NEAR(gradient[i], want, tol) << i;
    EXPECT_NEAR(target.cpu_diff()[i], -want, tol) << i;
  }
  // Caffe's GradientChecker's way, in double: central differences of the device's loss.
  if (sizeof(Dtype) != 8) return;
  for (int i = 0; i < count; ++i) {
    const double d = w_in[i] * (x[i] - y[i]);
    if (std::fabs(std::fabs(d) - 1 / sigma2) < 1e-3) continue;  // the kink between the pieces
    double at[2];
    for (int side = 0; side < 2; ++side) {
      std::vector<double> moved = x;
      moved[i] += side ? -1e-6 : 1e-6;
      this->fill(pred, moved);
      ASSERT_TRUE(this->forward("SmoothL1LossLayer", layer, b, t));
      at[side] = loss.cpu_data()[0];
    }
    EXPECT_NEAR(0.75 * (at[0] - at[1]) / 2e-6, gradient[i], 1e-6) << i;
  }
}

// SSD's Normalize, each of its four forms (across the image or per position; one scale or one
// per channel): the top against the formula in double, and, in double, the gradients of
// sum(top * w): the bottom's against SSD's formula, and against central differences of the
// device's forward (Caffe's GradientChecker's way) where that formula is the true gradient;
// the scales' against central differences. Across the image the norms are read on the host,
// as the .cu reads them; per position nothing crosses but the shared scale.
TYPED_TEST(FasterRcnnLayers, SsdNormalizeOnTheDevice) {
  using Dtype = TypeParam;
  ASSERT_TRUE(addressable);
  const int num = 2, channels = 3, height = 2, width = 3, dim = channels * height * width, count = num * dim;
  std::vector<double> x(count), w(count);
  for (int i = 0; i < count; ++i) x[i] = 0.3 * ((i * 5) % 13) - 1.7, w[i] = 0.1 * ((i * 7) % 9) - 0.35;
  for (bool across : {false, true}) {
    for (const std::vector<double>& scales : {std::vector<double>{2.5}, std::vector<double>{1.5, -2, 3}}) {
      SCOPED_TRACE(std::string(across ? "across" : "per position") + (scales.size() == 1 ? ", shared" : ", per channel"));
      Blob<Dtype> bottom(num, channels, height, width), top(num, channels, height, width);
      this->fill(bottom, x);
      caffe::NormalizeLayer<Dtype> layer(bottom, across, scales, Dtype(1e-10));
      const typename TestFixture::Blobs b{&bottom}, t{&top};
      auto reference = [&](const std::vector<double>& in, const std::vector<double>& s, int i) {
        const int n = i / dim, c = i / (height * width) % channels, q = i % (height * width);
        double sum = 1e-10;
        for (int e = 0; e < dim; ++e) {
          if (across || e % (height * width) == q) sum += in[n * dim + e] * in[n * dim + e];
        }
        return in[i] / std::sqrt(sum) * (s.size() == 1 ? s[0] : s[c]);
      };
      ASSERT_TRUE(this->forward("NormalizeLayer", layer, b, t));
      // A step moves nothing once the parameters and the ones are on the device (the norms
      // across the image live on the host, where the .cu keeps them too).
      top.mutable_gpu_diff();
      bottom.mutable_gpu_diff();
      ASSERT_TRUE(this->backward("NormalizeLayer", layer, t, {true}, b));
      blobrt::reset_transfer_counters();
      ASSERT_TRUE(this->forward("NormalizeLayer", layer, b, t));
      ASSERT_TRUE(this->backward("NormalizeLayer", layer, t, {true}, b));
      EXPECT_EQ(blobrt::transfer_counters().host_to_device, 0u);
      EXPECT_EQ(blobrt::transfer_counters().device_to_host, 0u);
      for (int i = 0; i < count; ++i) {
        EXPECT_NEAR(top.cpu_data()[i], reference(x, scales, i), (sizeof(Dtype) == 4 ? 1e-5 : 1e-12) * 4) << i;
      }
      if (sizeof(Dtype) != 8) continue;
      for (int i = 0; i < count; ++i) top.mutable_cpu_diff()[i] = static_cast<Dtype>(w[i]);
      std::fill(layer.blobs()[0]->mutable_cpu_diff(), layer.blobs()[0]->mutable_cpu_diff() + scales.size(), Dtype(0));
      ASSERT_TRUE(this->backward("NormalizeLayer", layer, t, {true}, b));
      auto objective = [&](const std::vector<double>& in, const std::vector<double>& s) {
        this->fill(bottom, in);
        for (std::size_t c = 0; c < s.size(); ++c) layer.blobs()[0]->mutable_cpu_data()[c] = static_cast<Dtype>(s[c]);
        EXPECT_TRUE(this->forward("NormalizeLayer", layer, b, t));
        double sum = 0;
        for (int i = 0; i < count; ++i) sum += top.cpu_data()[i] * w[i];
        return sum;
      };
      std::vector<double> bottom_diff(bottom.cpu_diff(), bottom.cpu_diff() + count);
      std::vector<double> scale_diff(layer.blobs()[0]->cpu_diff(), layer.blobs()[0]->cpu_diff() + scales.size());
      // The bottom's gradient as SSD's code computes it (its .cu and its CPU code alike): the
      // normalization's gradient times each element's own channel's scale. That is the true
      // gradient where the scales are equal (checked by differences there) and not otherwise
      // (the other channels' scales belong in the projection term): Caffe's semantics decide.
      for (int i = 0; i < count; ++i) {
        const int n = i / dim, c = i / (height * width) % channels, q = i % (height * width);
        double sum = 1e-10, projection = 0;
        for (int e = 0; e < dim; ++e) {
          if (across || e % (height * width) == q) sum += x[n * dim + e] * x[n * dim + e], projection += x[n * dim + e] * w[n * dim + e];
        }
        const double norm = std::sqrt(sum), s_c = scales.size() == 1 ? scales[0] : scales[c];
        EXPECT_NEAR(bottom_diff[i], s_c * (w[i] - x[i] * projection / (norm * norm)) / norm, 1e-9) << "x " << i;
        if (scales.size() > 1) continue;
        std::vector<double> up = x, down = x;
        up[i] += 1e-6, down[i] -= 1e-6;
        EXPECT_NEAR((objective(up, scales) - objective(down, scales)) / 2e-6, bottom_diff[i], 1e-6) << "x " << i;
      }
      for (std::size_t c = 0; c < scales.size(); ++c) {
        std::vector<double> up = scales, down = scales;
        up[c] += 1e-6, down[c] -= 1e-6;
        EXPECT_NEAR((objective(x, up) - objective(x, down)) / 2e-6, scale_diff[c], 1e-6) << "scale " << c;
      }
    }
  }
}

// SSD's Permute (NCHW to NHWC, its heads'): the top in the permuted order, the gradient back
// in the bottom's; a second step of the same shape moves nothing between host and device (the
// source indices are kept on the device), a new shape makes them again, also one of the same
// element count.
TYPED_TEST(FasterRcnnLayers, SsdPermuteOnTheDevice) {
  using Dtype = TypeParam;
  ASSERT_TRUE(addressable);
  caffe::PermuteLayer<Dtype> layer({0, 2, 3, 1});
  // The third shape has the first's count (only the kept order tells them apart), the fourth not.
  const std::vector<int> shapes[] = {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 5, 4, 3}, {1, 6, 2, 3}};
  for (int step = 0; step < 4; ++step) {
    const std::vector<int>& shape = shapes[step];
    Blob<Dtype> bottom(shape), top;
    layer.Reshape(bottom, top);
    const int n_ = shape[0], c_ = shape[1], h_ = shape[2], w_ = shape[3];
    std::vector<double> x(bottom.count()), dy(bottom.count());
    for (int i = 0; i < bottom.count(); ++i) x[i] = i + 0.5, dy[i] = -0.25 * i;
    this->fill(bottom, x);
    this->fill(top, std::vector<double>(top.count(), -9));
    for (int i = 0; i < top.count(); ++i) top.mutable_cpu_diff()[i] = static_cast<Dtype>(dy[i]);
    top.gpu_diff();
    bottom.mutable_gpu_diff();
    const typename TestFixture::Blobs b{&bottom}, t{&top};
    blobrt::reset_transfer_counters();
    ASSERT_TRUE(this->forward("PermuteLayer", layer, b, t));
    ASSERT_TRUE(this->backward("PermuteLayer", layer, t, {true}, b));
    const std::uint64_t moved = blobrt::transfer_counters().host_to_device;
    EXPECT_EQ(blobrt::transfer_counters().device_to_host, 0u);
    ASSERT_EQ(top.shape(), (std::vector<int>{n_, h_, w_, c_}));
    for (int n = 0; n < n_; ++n) {
      for (int c = 0; c < c_; ++c) {
        for (int h = 0; h < h_; ++h) {
          for (int w = 0; w < w_; ++w) {
            const int from = ((n * c_ + c) * h_ + h) * w_ + w, to = ((n * h_ + h) * w_ + w) * c_ + c;
            EXPECT_EQ(top.cpu_data()[to], static_cast<Dtype>(x[from]));
            EXPECT_EQ(bottom.cpu_diff()[from], static_cast<Dtype>(dy[to]));
          }
        }
      }
    }
    if (step == 1) EXPECT_EQ(moved, 0u) << "the same shape again: the kept indices";
  }
}

// py-faster-rcnn's SoftmaxWithLoss (a 2015 layer: the normalize_ flag), each way: normalized by
// the positions not ignored, or by the batch; the loss and the gradient against the formula
// in double; nothing crosses to the device, and nothing back but (with an ignore label, to
// count the positions kept) the labels.
TYPED_TEST(FasterRcnnLayers, SoftmaxWithLossOfA2015Caffe) {
  using Dtype = TypeParam;
  ASSERT_TRUE(addressable);
  const int num = 3, classes = 4, inner = 2;
  for (bool normalize : {true, false}) {
    for (bool ignore : {false, true}) {
      SCOPED_TRACE(std::string(normalize ? "normalized" : "by the batch") + (ignore ? ", label 2 ignored" : ""));
      Blob<Dtype> scores(num, classes, inner, 1), label(num, 1, inner, 1), loss;
      loss.Reshape(std::vector<int>{});
      std::vector<double> x(scores.count()), y(label.count());
      for (int i = 0; i < scores.count(); ++i) x[i] = 0.4 * ((i * 5) % 7) - 1.1;
      for (int q = 0; q < label.count(); ++q) y[q] = (q * 3) % classes;
      this->fill(scores, x);
      this->fill(label, y);
      caffe::SoftmaxWithLossLayer<Dtype> layer(scores, normalize, ignore, 2);
      const typename TestFixture::Blobs b{&scores, &label}, t{&loss};
      loss.mutable_cpu_diff()[0] = Dtype(0.5);
      scores.mutable_gpu_diff();
      blobrt::reset_transfer_counters();
      ASSERT_TRUE(this->forward("SoftmaxWithLossLayer", layer, b, t));
      ASSERT_TRUE(this->backward("SoftmaxWithLossLayer", layer, t, {true, false}, b));
      EXPECT_EQ(blobrt::transfer_counters().host_to_device, 0u);
      if (!ignore) EXPECT_EQ(blobrt::transfer_counters().device_to_host, 0u);
      double sum = 0;
      int kept = 0;
      std::vector<double> grad(x.size(), 0.0);
      for (int n = 0; n < num; ++n) {
        for (int i = 0; i < inner; ++i) {
          const int l = static_cast<int>(y[n * inner + i]);
          if (ignore && l == 2) continue;
          ++kept;
          double z = 0;
          for (int c = 0; c < classes; ++c) z += std::exp(x[(n * classes + c) * inner + i]);
          sum -= x[(n * classes + l) * inner + i] - std::log(z);
          for (int c = 0; c < classes; ++c) {
            grad[(n * classes + c) * inner + i] = std::exp(x[(n * classes + c) * inner + i]) / z - (c == l);
          }
        }
      }
      const double normalizer = normalize ? kept : num, tol = sizeof(Dtype) == 4 ? 1e-5 : 1e-12;
      EXPECT_NEAR(loss.cpu_data()[0], sum / normalizer, tol);
      for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(scores.cpu_diff()[i], 0.5 * grad[i] / normalizer, tol) << i;
    }
  }
}

// A 3-channel 7 x 6 image, kernel 3 x 2, padding 1 x 0, stride 2 x 1, dilation 2 x 1: the
// n-d columns (shapes in device memory, as Caffe's BaseConvolutionLayer hands them over) are
// the 2-D operation's, and so are the n-d col2im's sums; the old signature is dilation 1.
TYPED_TEST(SsdBBoxUtil, Im2colOfEveryCaffeVintage) {
  using Dtype = TypeParam;
  ASSERT_TRUE(addressable);
  const int channels = 3, height = 7, width = 6, kh = 3, kw = 2, ph = 1, pw = 0, sh = 2, sw = 1, dh = 2, dw = 1;
  const int oh = (height + 2 * ph - (dh * (kh - 1) + 1)) / sh + 1, ow = (width + 2 * pw - (dw * (kw - 1) + 1)) / sw + 1;
  const int rows = channels * kh * kw, columns = oh * ow;
  Blob<Dtype> image(1, channels, height, width), col2d(1, 1, rows, columns), colnd(1, 1, rows, columns);
  Blob<Dtype> back2d(1, channels, height, width), backnd(1, channels, height, width);
  Blob<int> shapes(1, 1, 6, 3);  // im_shape, col_shape, kernel, pad, stride, dilation (axes 0..)
  std::vector<double> values(image.count());
  for (int i = 0; i < image.count(); ++i) values[i] = 0.25 * ((i * 37) % 23) - 2.5;
  this->fill(image, values);
  const int shape_values[18] = {channels, height, width, rows, oh, ow, kh, kw, 0, ph, pw, 0, sh, sw, 0, dh, dw, 0};
  std::copy(shape_values, shape_values + 18, shapes.mutable_cpu_data());
  const int* s = shapes.gpu_data();
  caffe::im2col_gpu<Dtype>(image.gpu_data(), channels, height, width, kh, kw, ph, pw, sh, sw, dh, dw,
                           col2d.mutable_gpu_data());
  caffe::im2col_nd_gpu<Dtype>(image.gpu_data(), 2, rows * columns, s, s + 3, s + 6, s + 9, s + 12, s + 15,
                              colnd.mutable_gpu_data());
  for (int i = 0; i < col2d.count(); ++i) ASSERT_EQ(colnd.cpu_data()[i], col2d.cpu_data()[i]) << "column element " << i;
  caffe::col2im_gpu<Dtype>(col2d.gpu_data(), channels, height, width, kh, kw, ph, pw, sh, sw, dh, dw,
                           back2d.mutable_gpu_data());
  caffe::col2im_nd_gpu<Dtype>(col2d.gpu_data(), 2, image.count(), s, s + 3, s + 6, s + 9, s + 12, s + 15,
                              backnd.mutable_gpu_data());
  for (int i = 0; i < image.count(); ++i) ASSERT_EQ(backnd.cpu_data()[i], back2d.cpu_data()[i]) << "image element " << i;
  // Before dilation: the same call with dilation 1.
  const int columns1 = ((height + 2 * ph - kh) / sh + 1) * ((width + 2 * pw - kw) / sw + 1);
  Blob<Dtype> dilated1(1, 1, rows, columns1), old(1, 1, rows, columns1);
  caffe::im2col_gpu<Dtype>(image.gpu_data(), channels, height, width, kh, kw, ph, pw, sh, sw, 1, 1,
                           dilated1.mutable_gpu_data());
  caffe::im2col_gpu<Dtype>(image.gpu_data(), channels, height, width, kh, kw, ph, pw, sh, sw, old.mutable_gpu_data());
  for (int i = 0; i < old.count(); ++i) ASSERT_EQ(old.cpu_data()[i], dilated1.cpu_data()[i]) << "old signature " << i;
  caffe::col2im_gpu<Dtype>(old.gpu_data(), channels, height, width, kh, kw, ph, pw, sh, sw, backnd.mutable_gpu_data());
  caffe::col2im_gpu<Dtype>(old.gpu_data(), channels, height, width, kh, kw, ph, pw, sh, sw, 1, 1,
                           back2d.mutable_gpu_data());
  for (int i = 0; i < image.count(); ++i) ASSERT_EQ(backnd.cpu_data()[i], back2d.cpu_data()[i]) << "old col2im " << i;
}

// A 2-channel 4 x 5 x 3 volume, kernel 3 x 2 x 2, padding 1 x 0 x 1, stride 1 x 2 x 1, dilation
// 1 x 1 x 2 (C3D's kind of call): over three axes the n-d forms are blobrt's im2col_3d and
// col2im_3d; the same volume as four axes (a leading axis of extent 1) takes the n-d layout
// written in blobrt-caffe on host copies. Both give the same columns and the same sums, bit for
// bit (both add in column order).
TYPED_TEST(SsdBBoxUtil, Im2colNdOverThreeAxesOnTheDevice) {
  using Dtype = TypeParam;
  ASSERT_TRUE(addressable);
  const int channels = 2, extent[3] = {4, 5, 3}, kernel[3] = {3, 2, 2}, pad[3] = {1, 0, 1}, stride[3] = {1, 2, 1},
            dilation[3] = {1, 1, 2};
  int out[3], positions = 1, kernel_size = 1;
  for (int a = 0; a < 3; ++a) {
    out[a] = (extent[a] + 2 * pad[a] - (dilation[a] * (kernel[a] - 1) + 1)) / stride[a] + 1;
    positions *= out[a];
    kernel_size *= kernel[a];
  }
  const int rows = channels * kernel_size;
  // In device memory, as BaseConvolutionLayer hands them over. Three axes: im_shape {channels,
  // extents}, col_shape {rows, outputs}, then kernel, pad, stride and dilation per axis; four
  // axes (a leading axis of extent 1): im_shape {channels, 1, extents}, col_shape {rows, 1,
  // outputs}, and each per-axis array with the leading axis's value first (kernel 1, pad 0,
  // stride and dilation 1), so the three-axis arrays are the four-axis ones from their second.
  const int* per_axis[4] = {kernel, pad, stride, dilation};
  const int leading[4] = {1, 0, 1, 1};
  Blob<int> shapes(1, 1, 8, 5);
  int* v = shapes.mutable_cpu_data();
  const int im3[4] = {channels, extent[0], extent[1], extent[2]}, col3[4] = {rows, out[0], out[1], out[2]};
  const int im4[5] = {channels, 1, extent[0], extent[1], extent[2]}, col4[5] = {rows, 1, out[0], out[1], out[2]};
  std::copy(im3, im3 + 4, v);
  std::copy(col3, col3 + 4, v + 5);
  std::copy(im4, im4 + 5, v + 10);
  std::copy(col4, col4 + 5, v + 15);
  for (int i = 0; i < 4; ++i) {
    v[20 + i * 5] = leading[i];
    std::copy(per_axis[i], per_axis[i] + 3, v + 20 + i * 5 + 1);
  }
  const int* s = shapes.gpu_data();
  const int* geometry3[6] = {s, s + 5, s + 21, s + 26, s + 31, s + 36};
  const int* geometry4[6] = {s + 10, s + 15, s + 20, s + 25, s + 30, s + 35};
  Blob<Dtype> image(1, channels, extent[0], extent[1] * extent[2]), col_a(1, 1, rows, positions),
      col_b(1, 1, rows, positions), back_a(image.shape()), back_b(image.shape());
  std::vector<double> values(image.count());
  for (int i = 0; i < image.count(); ++i) values[i] = 0.25 * ((i * 29) % 19) - 2;
  this->fill(image, values);
  const auto im2col = [&](int axes, const int* const* g, Blob<Dtype>& col) {
    caffe::im2col_nd_gpu<Dtype>(image.gpu_data(), axes, rows * positions, g[0], g[1], g[2], g[3], g[4], g[5],
                                col.mutable_gpu_data());
  };
  const auto col2im = [&](int axes, const int* const* g, Blob<Dtype>& back) {
    caffe::col2im_nd_gpu<Dtype>(col_a.gpu_data(), axes, image.count(), g[0], g[1], g[2], g[3], g[4], g[5],
                                back.mutable_gpu_data());
  };
  im2col(3, geometry3, col_a);
  im2col(4, geometry4, col_b);
  int inside = 0;
  for (int i = 0; i < col_a.count(); ++i) {
    ASSERT_EQ(col_a.cpu_data()[i], col_b.cpu_data()[i]) << "column element " << i;
    inside += col_a.cpu_data()[i] != Dtype(0);
  }
  EXPECT_GT(inside, col_a.count() / 2);  // the columns hold the volume, not zeros
  col2im(3, geometry3, back_a);
  col2im(4, geometry4, back_b);
  for (int i = 0; i < image.count(); ++i) ASSERT_EQ(back_a.cpu_data()[i], back_b.cpu_data()[i]) << "image element " << i;
}

// P2PSync's buffers: made on the thread's device, filled from the host, copied device to
// device at an offset (Caffe's pointer arithmetic on a handle), read back, freed once.
TEST(PortableDeviceRuntime, OldP2PSyncsMemoryCalls) {
  ASSERT_TRUE(addressable);
  float* a = nullptr;
  float* b = nullptr;
  ASSERT_EQ(cudaMalloc(&a, 16 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, 24 * sizeof(float)), cudaSuccess);
  std::vector<float> host(16), back(16, -1);
  std::iota(host.begin(), host.end(), 1.0f);
  ASSERT_EQ(cudaMemcpy(a, host.data(), 16 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(b + 8, a, 16 * sizeof(float), cudaMemcpyDeviceToDevice, nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), b + 8, 16 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host);
  // cudaMemcpyDefault: the sides told apart as unified addressing tells them.
  std::vector<float> twice(16, -1);
  ASSERT_EQ(cudaMemcpy(a, back.data(), 16 * sizeof(float), cudaMemcpyDefault), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(twice.data(), a, 16 * sizeof(float), cudaMemcpyDefault), cudaSuccess);
  EXPECT_EQ(twice, host);
  EXPECT_EQ(cudaMemcpy(back.data(), b, 4, static_cast<cudaMemcpyKind>(7)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(a), cudaSuccess);
  EXPECT_EQ(cudaFree(b), cudaSuccess);
  EXPECT_EQ(cudaFree(b), cudaErrorInvalidValue) << "freed twice";
  EXPECT_EQ(cudaFree(host.data()), cudaErrorInvalidValue) << "not cudaMalloc's";
  int access = -1;
  EXPECT_EQ(cudaDeviceCanAccessPeer(&access, 0, 0), cudaSuccess);
  EXPECT_EQ(access, 0);
  EXPECT_EQ(cudaDeviceCanAccessPeer(&access, 0, 1 << 20), cudaErrorInvalidDevice);
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_EQ(prop.isMultiGpuBoard, 0);
}

}  // namespace
