// blobrt-caffe's own GPU methods for Caffe's layers (<blobrt/caffe/portable/layers/>: Pooling,
// ReLU, PReLU, Sigmoid, TanH, ELU, BNLL, Threshold, Clip, Swish, Dropout, Softmax, SoftmaxWithLoss, Concat,
// Slice, Eltwise, LRN, Scale, Bias, Embed, BatchReindex, Crop, Accuracy), as the
// portable build dispatches to them (forward_on_device / backward_on_device, no backend
// having registered the class), on layer classes laid out as Caffe's (layer_param(), and
// PoolingLayer's protected geometry members by Caffe's names), on the device BLOBRT_BACKEND
// picks: each result against a reference written here from Caffe's CPU code (pooling with its
// mask), ties and padding included; what the methods decline (stochastic pooling, a mask top)
// runs the CPU code; SoftmaxWithLoss moves no data between host and device but the loss (and
// the labels, once, where it must count them); and the record says which ran on the device.
#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <blobrt/caffe/portable/gpu_methods.hpp>
#include <blobrt/transfer_counters.hpp>
#include <blobrt_kernels/bernoulli_mask.hpp>

namespace caffe {

// Caffe's Layer, as much of it as the methods read.
template <typename Dtype>
class Layer {
 public:
  explicit Layer(const LayerParameter& param) : layer_param_(param) {}
  virtual ~Layer() = default;
  const LayerParameter& layer_param() const { return layer_param_; }
  // Caffe's Forward and Backward in GPU mode: the layer's Forward_gpu and Backward_gpu (here:
  // blobrt's methods, in the classes that use them).
  virtual Dtype Forward(const std::vector<Blob<Dtype>*>&, const std::vector<Blob<Dtype>*>&) { return Dtype(0); }
  virtual void Backward(const std::vector<Blob<Dtype>*>&, const std::vector<bool>&, const std::vector<Blob<Dtype>*>&) {}

 protected:
  LayerParameter layer_param_;
  Phase phase_ = TRAIN;
  std::vector<shared_ptr<Blob<Dtype>>> blobs_;
  std::vector<bool> param_propagate_down_;
};

// Caffe's PoolingLayer's members, set as its LayerSetUp and Reshape set them.
template <typename Dtype>
class PoolingLayer : public Layer<Dtype> {
 public:
  PoolingLayer(const LayerParameter& param, int height, int width) : Layer<Dtype>(param) {
    const PoolingParameter& p = param.pooling_param();
    global_pooling_ = p.global_pooling();
    kernel_h_ = global_pooling_ ? height : static_cast<int>(p.kernel_size());
    kernel_w_ = global_pooling_ ? width : static_cast<int>(p.kernel_size());
    stride_h_ = stride_w_ = static_cast<int>(p.stride());
    pad_h_ = pad_w_ = static_cast<int>(p.pad());
    height_ = height;
    width_ = width;
    pooled_height_ = pooled(height_, kernel_h_, stride_h_, pad_h_);
    pooled_width_ = pooled(width_, kernel_w_, stride_w_, pad_w_);
  }
  int pooled_height() const { return pooled_height_; }
  int pooled_width() const { return pooled_width_; }
  int kernel_h() const { return kernel_h_; }
  int stride_h() const { return stride_h_; }
  int pad_h() const { return pad_h_; }

 protected:
  static int pooled(int size, int kernel, int stride, int pad) {
    int out = static_cast<int>(std::ceil(static_cast<float>(size + 2 * pad - kernel) / stride)) + 1;
    if (pad && (out - 1) * stride >= size + pad) --out;
    return out;
  }
  int kernel_h_, kernel_w_, stride_h_, stride_w_, pad_h_, pad_w_, height_, width_, pooled_height_, pooled_width_;
  bool global_pooling_;
};

// Caffe's SoftmaxLayer's members, as its Reshape sets them for `axis`.
template <typename Dtype>
class SoftmaxLayer : public Layer<Dtype> {
 public:
  SoftmaxLayer(const LayerParameter& param, const Blob<Dtype>& bottom, int axis) : Layer<Dtype>(param) {
    softmax_axis_ = axis;
    outer_num_ = bottom.count(0, axis);
    inner_num_ = bottom.count(axis + 1);
  }
  Dtype Forward(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top) override {
    EXPECT_TRUE(blobrt_caffe_portable::forward_on_device<Dtype>("SoftmaxLayer", this, bottom, top));
    return Dtype(0);
  }

 protected:
  int outer_num_, inner_num_, softmax_axis_;
};

// The loss layers' get_normalizer (SoftmaxWithLoss's and SigmoidCrossEntropyLoss's), Caffe's
// word for word in effect.
template <typename Dtype>
Dtype loss_normalizer(LossParameter_NormalizationMode mode, int valid_count, int outer_num, int inner_num) {
  Dtype normalizer = Dtype(1);
  if (mode == LossParameter_NormalizationMode_FULL) normalizer = Dtype(outer_num * inner_num);
  if (mode == LossParameter_NormalizationMode_VALID) {
    normalizer = valid_count == -1 ? Dtype(outer_num * inner_num) : Dtype(valid_count);
  }
  if (mode == LossParameter_NormalizationMode_BATCH_SIZE) normalizer = Dtype(outer_num);
  return std::max(Dtype(1.0), normalizer);
}

// Caffe's SoftmaxWithLossLayer's members (BVLC's, with get_normalizer), as its LayerSetUp and
// Reshape set them for axis 1.
template <typename Dtype>
class SoftmaxWithLossLayer : public Layer<Dtype> {
 public:
  SoftmaxWithLossLayer(const LayerParameter& param, Blob<Dtype>& bottom) : Layer<Dtype>(param) {
    softmax_layer_ = std::make_shared<SoftmaxLayer<Dtype>>(param, bottom, 1);
    softmax_bottom_vec_ = {&bottom};
    softmax_top_vec_ = {&prob_};
    prob_.ReshapeLike(bottom);
    has_ignore_label_ = param.loss_param().has_ignore_label();
    ignore_label_ = param.loss_param().ignore_label();
    normalization_ = param.loss_param().normalization();
    softmax_axis_ = 1;
    outer_num_ = bottom.count(0, 1);
    inner_num_ = bottom.count(2);
  }

 protected:
  virtual Dtype get_normalizer(LossParameter_NormalizationMode mode, int valid_count) {
    return loss_normalizer<Dtype>(mode, valid_count, outer_num_, inner_num_);
  }
  std::shared_ptr<Layer<Dtype>> softmax_layer_;
  Blob<Dtype> prob_;
  std::vector<Blob<Dtype>*> softmax_bottom_vec_;
  std::vector<Blob<Dtype>*> softmax_top_vec_;
  bool has_ignore_label_;
  int ignore_label_;
  LossParameter_NormalizationMode normalization_;
  int softmax_axis_, outer_num_, inner_num_;
};

// Caffe's ConcatLayer's and SliceLayer's members, as their Reshape sets them: the blob along
// `axis` as rows of the leading axes' count, each part's row its extent times the trailing
// axes' count.
template <typename Dtype>
class ConcatLayer : public Layer<Dtype> {
 public:
  ConcatLayer(const Blob<Dtype>& top, int axis) : Layer<Dtype>(LayerParameter()) {
    concat_axis_ = axis;
    num_concats_ = top.count(0, axis);
    concat_input_size_ = top.count(axis + 1);
    count_ = top.count();
  }

 protected:
  int count_, num_concats_, concat_input_size_, concat_axis_;
};
template <typename Dtype>
class SliceLayer : public Layer<Dtype> {
 public:
  SliceLayer(const Blob<Dtype>& bottom, int axis) : Layer<Dtype>(LayerParameter()) {
    slice_axis_ = axis;
    num_slices_ = bottom.count(0, axis);
    slice_size_ = bottom.count(axis + 1);
    count_ = bottom.count();
  }

 protected:
  int count_, num_slices_, slice_size_, slice_axis_;
  std::vector<int> slice_point_;
};

// Caffe's EltwiseLayer's members, as its LayerSetUp sets them.
template <typename Dtype>
class EltwiseLayer : public Layer<Dtype> {
 public:
  EltwiseLayer(const LayerParameter& param, int bottoms, const Blob<Dtype>& bottom) : Layer<Dtype>(param) {
    op_ = param.eltwise_param().operation();
    coeffs_.assign(bottoms, Dtype(1));
    for (int i = 0; i < param.eltwise_param().coeff_size(); ++i) coeffs_[i] = param.eltwise_param().coeff(i);
    stable_prod_grad_ = param.eltwise_param().stable_prod_grad();
    if (op_ == EltwiseParameter_EltwiseOp_MAX) max_idx_.Reshape(bottom.shape());
  }

 protected:
  EltwiseParameter_EltwiseOp op_;
  std::vector<Dtype> coeffs_;
  Blob<int> max_idx_;
  bool stable_prod_grad_;
};

// Caffe's LRNLayer's members, as its LayerSetUp and Reshape set them.
template <typename Dtype>
class LRNLayer : public Layer<Dtype> {
 public:
  LRNLayer(const LayerParameter& param, const Blob<Dtype>& bottom) : Layer<Dtype>(param) {
    size_ = static_cast<int>(param.lrn_param().local_size());
    pre_pad_ = (size_ - 1) / 2;
    alpha_ = param.lrn_param().alpha();
    beta_ = param.lrn_param().beta();
    k_ = param.lrn_param().k();
    num_ = bottom.num();
    channels_ = bottom.channels();
    height_ = bottom.height();
    width_ = bottom.width();
    scale_.ReshapeLike(bottom);
  }

 protected:
  int size_, pre_pad_;
  Dtype alpha_, beta_, k_;
  int num_, channels_, height_, width_;
  Blob<Dtype> scale_;
};

// Caffe's BiasLayer's and ScaleLayer's members along axis 1, as their LayerSetUp and Reshape
// set them: a parameter of one value per channel (the scale layer's bias term a BiasLayer
// whose parameter it shares), or the factor as a second bottom. BiasLayer's extents are
// private, as BVLC's: its methods may not read them.
template <typename Dtype>
class BiasLayer : public Layer<Dtype> {
 public:
  explicit BiasLayer(const Blob<Dtype>& bottom) : Layer<Dtype>(LayerParameter()) {
    this->layer_param_.mutable_bias_param()->set_axis(1);
    this->blobs_.emplace_back(new Blob<Dtype>(std::vector<int>{bottom.channels()}));
    this->param_propagate_down_.assign(this->blobs_.size(), true);
    outer_dim_ = bottom.num();
    bias_dim_ = bottom.channels();
    inner_dim_ = bottom.count(2);
    dim_ = bias_dim_ * inner_dim_;
    bias_multiplier_.Reshape(std::vector<int>{inner_dim_});
    for (int i = 0; i < inner_dim_; ++i) bias_multiplier_.mutable_cpu_data()[i] = Dtype(1);
  }
  shared_ptr<Blob<Dtype>> parameter() const { return this->blobs_[0]; }
  void Backward(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& down,
                const std::vector<Blob<Dtype>*>& bottom) override {
    EXPECT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("BiasLayer", this, top, down, bottom));
  }

 private:
  Blob<Dtype> bias_multiplier_;
  int outer_dim_, bias_dim_, inner_dim_, dim_;
};
template <typename Dtype>
class ScaleLayer : public Layer<Dtype> {
 public:
  ScaleLayer(Blob<Dtype>& bottom, bool parameter, bool bias_term) : Layer<Dtype>(LayerParameter()) {
    if (parameter) this->blobs_.emplace_back(new Blob<Dtype>(std::vector<int>{bottom.channels()}));
    if (bias_term) {
      auto bias = std::make_shared<BiasLayer<Dtype>>(bottom);
      bias_bottom_vec_ = {&bottom};
      bias_propagate_down_ = {false};
      bias_param_id_ = static_cast<int>(this->blobs_.size());
      this->blobs_.push_back(bias->parameter());
      bias_layer_ = bias;
    }
    this->param_propagate_down_.assign(this->blobs_.size(), true);
    axis_ = 1;
    outer_dim_ = bottom.num();
    scale_dim_ = bottom.channels();
    inner_dim_ = bottom.count(2);
    sum_result_.Reshape(std::vector<int>{outer_dim_ * scale_dim_});
    sum_multiplier_.Reshape(std::vector<int>{std::max(outer_dim_, inner_dim_)});
    for (int i = 0; i < sum_multiplier_.count(); ++i) sum_multiplier_.mutable_cpu_data()[i] = Dtype(1);
    temp_.ReshapeLike(bottom);
  }
  Blob<Dtype>* parameter(int i) const { return this->blobs_[i].get(); }

 protected:
  std::shared_ptr<Layer<Dtype>> bias_layer_;
  std::vector<Blob<Dtype>*> bias_bottom_vec_;
  std::vector<bool> bias_propagate_down_;
  int bias_param_id_;
  Blob<Dtype> sum_multiplier_;
  Blob<Dtype> sum_result_;
  Blob<Dtype> temp_;
  int axis_;
  int outer_dim_, scale_dim_, inner_dim_;
};

template <typename Dtype>
class ReLULayer : public Layer<Dtype> {
  using Layer<Dtype>::Layer;
};
template <typename Dtype>
class SigmoidLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  Dtype Forward(const std::vector<Blob<Dtype>*>& bottom, const std::vector<Blob<Dtype>*>& top) override {
    EXPECT_TRUE(blobrt_caffe_portable::forward_on_device<Dtype>("SigmoidLayer", this, bottom, top));
    return Dtype(0);
  }
};
template <typename Dtype>
class TanHLayer : public Layer<Dtype> {
  using Layer<Dtype>::Layer;
};
template <typename Dtype>
class ELULayer : public Layer<Dtype> {
  using Layer<Dtype>::Layer;
};
template <typename Dtype>
class BNLLLayer : public Layer<Dtype> {
  using Layer<Dtype>::Layer;
};
template <typename Dtype>
class ThresholdLayer : public Layer<Dtype> {
  using Layer<Dtype>::Layer;
};
template <typename Dtype>
class ClipLayer : public Layer<Dtype> {
  using Layer<Dtype>::Layer;
};

// Caffe's PReLULayer's members, as its LayerSetUp and Reshape set them (the slopes 0.25 by
// its default filler; the tests set their own).
template <typename Dtype>
class PReLULayer : public Layer<Dtype> {
 public:
  PReLULayer(const LayerParameter& param, bool channel_shared, const Blob<Dtype>& bottom, bool in_place)
      : Layer<Dtype>(param) {
    channel_shared_ = channel_shared;
    this->blobs_.push_back(shared_ptr<Blob<Dtype>>(new Blob<Dtype>(std::vector<int>(1, channel_shared ? 1 : bottom.shape(1)))));
    this->param_propagate_down_.assign(1, true);
    multiplier_.Reshape(std::vector<int>(1, bottom.count(1)));
    backward_buff_.Reshape(std::vector<int>(1, bottom.count(1)));
    for (int i = 0; i < multiplier_.count(); ++i) multiplier_.mutable_cpu_data()[i] = Dtype(1);
    if (in_place) bottom_memory_.ReshapeLike(bottom);
  }
  Blob<Dtype>& slope() { return *this->blobs_[0]; }

 protected:
  bool channel_shared_;
  Blob<Dtype> multiplier_;
  Blob<Dtype> backward_buff_;
  Blob<Dtype> bottom_memory_;
};

// Caffe's SwishLayer's members, as its LayerSetUp and Reshape set them.
template <typename Dtype>
class SwishLayer : public Layer<Dtype> {
 public:
  SwishLayer(const LayerParameter& param, const Blob<Dtype>& bottom)
      : Layer<Dtype>(param), sigmoid_input_(new Blob<Dtype>()), sigmoid_output_(new Blob<Dtype>()) {
    sigmoid_input_->ReshapeLike(bottom);
    sigmoid_output_->ReshapeLike(bottom);
  }

 protected:
  shared_ptr<Blob<Dtype>> sigmoid_input_;
  shared_ptr<Blob<Dtype>> sigmoid_output_;
};

// Caffe's DropoutLayer's members, as its LayerSetUp and Reshape set them.
template <typename Dtype>
class DropoutLayer : public Layer<Dtype> {
 public:
  DropoutLayer(const LayerParameter& param, Phase phase, const Blob<Dtype>& bottom) : Layer<Dtype>(param) {
    this->phase_ = phase;
    threshold_ = param.dropout_param().dropout_ratio();
    scale_ = 1. / (1. - threshold_);
    uint_thres_ = static_cast<unsigned int>(UINT_MAX * threshold_);
    rand_vec_.Reshape(bottom.shape());
  }
  const Blob<unsigned int>& mask() const { return rand_vec_; }
  unsigned int uint_threshold() const { return uint_thres_; }
  Dtype scale() const { return scale_; }

 protected:
  Blob<unsigned int> rand_vec_;
  Dtype threshold_;
  Dtype scale_;
  unsigned int uint_thres_;
};

// Caffe's EmbedLayer's members, as its LayerSetUp and Reshape set them (the bottom: M_
// indices; the weight K_ x N_, the bias N_).
template <typename Dtype>
class EmbedLayer : public Layer<Dtype> {
 public:
  EmbedLayer(int m, int k, int n, bool bias) : Layer<Dtype>(LayerParameter()) {
    M_ = m;
    K_ = k;
    N_ = n;
    bias_term_ = bias;
    this->blobs_.push_back(shared_ptr<Blob<Dtype>>(new Blob<Dtype>(std::vector<int>{k, n})));
    if (bias) this->blobs_.push_back(shared_ptr<Blob<Dtype>>(new Blob<Dtype>(std::vector<int>{n})));
    this->param_propagate_down_.assign(this->blobs_.size(), true);
    bias_multiplier_.Reshape(std::vector<int>{m});
    for (int i = 0; i < m; ++i) bias_multiplier_.mutable_cpu_data()[i] = Dtype(1);
  }
  Blob<Dtype>& weight() { return *this->blobs_[0]; }
  Blob<Dtype>& bias() { return *this->blobs_[1]; }

 protected:
  int M_, K_, N_;
  bool bias_term_;
  Blob<Dtype> bias_multiplier_;
};

// Caffe's CropLayer's members: the offset along every axis (0 before the crop's axis).
template <typename Dtype>
class CropLayer : public Layer<Dtype> {
 public:
  explicit CropLayer(const std::vector<int>& along_every_axis) : Layer<Dtype>(LayerParameter()) {
    offsets.Reshape(std::vector<int>{static_cast<int>(along_every_axis.size())});
    std::copy(along_every_axis.begin(), along_every_axis.end(), offsets.mutable_cpu_data());
  }

 protected:
  Blob<int> offsets;
  Blob<int> src_strides_;
  Blob<int> dest_strides_;
};

// Caffe's AccuracyLayer's members, as its LayerSetUp and Reshape set them for `axis`
// (ignore_label_ only where there is one, as Caffe).
template <typename Dtype>
class AccuracyLayer : public Layer<Dtype> {
 public:
  AccuracyLayer(const Blob<Dtype>& bottom, int axis, int top_k, bool has_ignore, int ignore)
      : Layer<Dtype>(LayerParameter()) {
    label_axis_ = axis;
    outer_num_ = bottom.count(0, axis);
    inner_num_ = bottom.count(axis + 1);
    top_k_ = top_k;
    has_ignore_label_ = has_ignore;
    if (has_ignore) ignore_label_ = ignore;
  }

 protected:
  int label_axis_, outer_num_, inner_num_;
  int top_k_;
  bool has_ignore_label_;
  int ignore_label_;
  Blob<Dtype> nums_buffer_;
};

// Caffe's TileLayer's members, as its Reshape sets them: the top repeats the bottom's block
// from `axis` on (inner_dim_ elements) `tiles` times for each index before it.
template <typename Dtype>
class TileLayer : public Layer<Dtype> {
 public:
  TileLayer(const Blob<Dtype>& bottom, int axis, int tiles) : Layer<Dtype>(LayerParameter()) {
    axis_ = axis;
    tiles_ = tiles;
    outer_dim_ = bottom.count(0, axis);
    inner_dim_ = bottom.count(axis);
  }

 protected:
  unsigned int axis_, tiles_, outer_dim_, inner_dim_;
};

// Caffe's SigmoidCrossEntropyLossLayer's members (BVLC's since 2017: ignore label,
// normalization modes), as its LayerSetUp and Reshape set them.
template <typename Dtype>
class SigmoidCrossEntropyLossLayer : public Layer<Dtype> {
 public:
  SigmoidCrossEntropyLossLayer(const LayerParameter& param, const Blob<Dtype>& bottom) : Layer<Dtype>(param) {
    sigmoid_layer_ = std::make_shared<SigmoidLayer<Dtype>>(param);
    sigmoid_output_ = std::make_shared<Blob<Dtype>>();
    sigmoid_output_->ReshapeLike(bottom);
    sigmoid_bottom_vec_ = {nullptr};
    sigmoid_top_vec_ = {sigmoid_output_.get()};
    has_ignore_label_ = param.loss_param().has_ignore_label();
    ignore_label_ = param.loss_param().ignore_label();
    normalization_ = param.loss_param().normalization();
    outer_num_ = bottom.shape(0);
    inner_num_ = bottom.count(1);
  }
  const Blob<Dtype>& sigmoid_output() const { return *sigmoid_output_; }

 protected:
  virtual Dtype get_normalizer(LossParameter_NormalizationMode mode, int valid_count) {
    return loss_normalizer<Dtype>(mode, valid_count, outer_num_, inner_num_);
  }
  std::shared_ptr<SigmoidLayer<Dtype>> sigmoid_layer_;
  std::shared_ptr<Blob<Dtype>> sigmoid_output_;
  std::vector<Blob<Dtype>*> sigmoid_bottom_vec_;
  std::vector<Blob<Dtype>*> sigmoid_top_vec_;
  bool has_ignore_label_;
  int ignore_label_;
  LossParameter_NormalizationMode normalization_;
  Dtype normalizer_ = Dtype(-1);
  int outer_num_, inner_num_;
};

// Caffe's LSTMUnitLayer's members, as its Reshape sets them for bottoms of 1 x N x H.
template <typename Dtype>
class LSTMUnitLayer : public Layer<Dtype> {
 public:
  LSTMUnitLayer(const Blob<Dtype>& c_prev) : Layer<Dtype>(LayerParameter()) {
    hidden_dim_ = c_prev.shape(2);
    X_acts_.Reshape(std::vector<int>{1, c_prev.shape(1), 4 * hidden_dim_});
  }
  const Blob<Dtype>& acts() const { return X_acts_; }

 protected:
  int hidden_dim_;
  Blob<Dtype> X_acts_;
};

// Caffe's ContrastiveLossLayer's members, as its LayerSetUp sets them.
template <typename Dtype>
class ContrastiveLossLayer : public Layer<Dtype> {
 public:
  ContrastiveLossLayer(const LayerParameter& param, const Blob<Dtype>& bottom) : Layer<Dtype>(param) {
    diff_.Reshape(bottom.num(), bottom.channels(), 1, 1);
    diff_sq_.Reshape(bottom.num(), bottom.channels(), 1, 1);
    dist_sq_.Reshape(bottom.num(), 1, 1, 1);
    summer_vec_.Reshape(bottom.channels(), 1, 1, 1);
    for (int i = 0; i < bottom.channels(); ++i) summer_vec_.mutable_cpu_data()[i] = Dtype(1);
  }

 protected:
  Blob<Dtype> diff_, diff_sq_, dist_sq_, summer_vec_;
};

}  // namespace caffe

// What the portable build's generated source of each layer's .cu includes.
#include <blobrt/caffe/portable/layers/accuracy_layer.hpp>
#include <blobrt/caffe/portable/layers/batch_reindex_layer.hpp>
#include <blobrt/caffe/portable/layers/bias_layer.hpp>
#include <blobrt/caffe/portable/layers/bnll_layer.hpp>
#include <blobrt/caffe/portable/layers/clip_layer.hpp>
#include <blobrt/caffe/portable/layers/concat_layer.hpp>
#include <blobrt/caffe/portable/layers/contrastive_loss_layer.hpp>
#include <blobrt/caffe/portable/layers/crop_layer.hpp>
#include <blobrt/caffe/portable/layers/dropout_layer.hpp>
#include <blobrt/caffe/portable/layers/elu_layer.hpp>
#include <blobrt/caffe/portable/layers/embed_layer.hpp>
#include <blobrt/caffe/portable/layers/eltwise_layer.hpp>
#include <blobrt/caffe/portable/layers/lrn_layer.hpp>
#include <blobrt/caffe/portable/layers/lstm_unit_layer.hpp>
#include <blobrt/caffe/portable/layers/pooling_layer.hpp>
#include <blobrt/caffe/portable/layers/prelu_layer.hpp>
#include <blobrt/caffe/portable/layers/relu_layer.hpp>
#include <blobrt/caffe/portable/layers/scale_layer.hpp>
#include <blobrt/caffe/portable/layers/sigmoid_cross_entropy_loss_layer.hpp>
#include <blobrt/caffe/portable/layers/sigmoid_layer.hpp>
#include <blobrt/caffe/portable/layers/softmax_layer.hpp>
#include <blobrt/caffe/portable/layers/slice_layer.hpp>
#include <blobrt/caffe/portable/layers/softmax_loss_layer.hpp>
#include <blobrt/caffe/portable/layers/swish_layer.hpp>
#include <blobrt/caffe/portable/layers/tanh_layer.hpp>
#include <blobrt/caffe/portable/layers/threshold_layer.hpp>
#include <blobrt/caffe/portable/layers/tile_layer.hpp>

namespace {

// As Caffe's portable build asks before any device opens (an OpenCL cl_mem is then an address).
const bool addressable = blobrt_caffe_portable::request_addressable_handles();

using caffe::Blob;

template <typename Dtype>
void fill(Blob<Dtype>& blob, unsigned seed, bool halves) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-2, 2);
  Dtype* data = blob.mutable_cpu_data();
  for (int i = 0; i < blob.count(); ++i) {
    const double v = uniform(rng);
    data[i] = static_cast<Dtype>(halves ? std::round(v * 2) / 2 : v);  // halves: many ties
  }
}

template <typename Dtype>
void fill_diff(Blob<Dtype>& blob, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  Dtype* diff = blob.mutable_cpu_diff();
  for (int i = 0; i < blob.count(); ++i) diff[i] = static_cast<Dtype>(uniform(rng));
}

template <typename Dtype>
bool forward(const char* layer_class, caffe::Layer<Dtype>& layer, const std::vector<Blob<Dtype>*>& bottom,
             const std::vector<Blob<Dtype>*>& top) {
  return blobrt_caffe_portable::forward_on_device<Dtype>(layer_class, &layer, bottom, top);
}
template <typename Dtype>
bool backward(const char* layer_class, caffe::Layer<Dtype>& layer, const std::vector<Blob<Dtype>*>& top,
              const std::vector<Blob<Dtype>*>& bottom) {
  return blobrt_caffe_portable::backward_on_device<Dtype>(layer_class, &layer, top, std::vector<bool>{true}, bottom);
}

template <typename Dtype>
class LayerGlue : public ::testing::Test {
 protected:
  static constexpr double kEps = sizeof(Dtype) == 4 ? 1e-6 : 1e-14;

  caffe::LayerParameter pooling(caffe::PoolingParameter::PoolMethod method, int kernel, int stride, int pad,
                                bool global = false) {
    caffe::LayerParameter param;
    caffe::PoolingParameter* p = param.mutable_pooling_param();
    p->set_pool(method);
    p->set_kernel_size(kernel);
    p->set_stride(stride);
    p->set_pad(pad);
    p->set_global_pooling(global);
    return param;
  }

  // Caffe's pooling_layer.cpp Forward_cpu and Backward_cpu (MAX with its mask, AVE), on the
  // host copies: the reference top and bottom diff.
  void reference_pooling(const caffe::PoolingLayer<Dtype>& l, bool max, const Blob<Dtype>& bottom,
                         const Blob<Dtype>& top_diff_blob, std::vector<Dtype>* top, std::vector<Dtype>* bottom_diff) {
    const int planes = bottom.num() * bottom.channels(), height = bottom.height(), width = bottom.width();
    const int ph_n = l.pooled_height(), pw_n = l.pooled_width(), k = l.kernel_h(), s = l.stride_h(), pad = l.pad_h();
    const int kw = l.layer_param().pooling_param().global_pooling() ? width : k;
    const int sw = s, padw = pad;
    top->assign(static_cast<std::size_t>(planes) * ph_n * pw_n, Dtype(0));
    bottom_diff->assign(static_cast<std::size_t>(bottom.count()), Dtype(0));
    const Dtype* in = bottom.cpu_data();
    const Dtype* diff = top_diff_blob.cpu_diff();
    for (int p = 0; p < planes; ++p) {
      for (int ph = 0; ph < ph_n; ++ph) {
        for (int pw = 0; pw < pw_n; ++pw) {
          int hstart = ph * s - pad, wstart = pw * sw - padw;
          int hend = std::min(hstart + k, height + pad), wend = std::min(wstart + kw, width + padw);
          const int pool_size = (hend - hstart) * (wend - wstart);
          hstart = std::max(hstart, 0);
          wstart = std::max(wstart, 0);
          hend = std::min(hend, height);
          wend = std::min(wend, width);
          const int out = (p * ph_n + ph) * pw_n + pw;
          Dtype value = max ? Dtype(-FLT_MAX) : Dtype(0);
          int mask = -1;
          for (int h = hstart; h < hend; ++h) {
            for (int w = wstart; w < wend; ++w) {
              const int index = h * width + w;
              if (max && in[p * height * width + index] > value) {
                value = in[p * height * width + index];
                mask = index;
              }
              if (!max) value += in[p * height * width + index];
            }
          }
          (*top)[out] = max ? value : value / pool_size;
          if (max) {
            if (mask >= 0) (*bottom_diff)[p * height * width + mask] += diff[out];
          } else {
            for (int h = hstart; h < hend; ++h) {
              for (int w = wstart; w < wend; ++w) (*bottom_diff)[p * height * width + h * width + w] += diff[out] / pool_size;
            }
          }
        }
      }
    }
  }

  void expect_near(const Dtype* got, const std::vector<Dtype>& want, const char* what) {
    for (std::size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 8 * kEps * (1 + std::fabs(want[i]))) << what << "[" << i << "]";
    }
  }

  void check_pooling(caffe::PoolingParameter::PoolMethod method, int kernel, int stride, int pad, bool global = false) {
    Blob<Dtype> bottom(2, 3, 7, 9), top;
    fill(bottom, 1, true);
    caffe::PoolingLayer<Dtype> layer(pooling(method, kernel, stride, pad, global), 7, 9);
    top.Reshape(2, 3, layer.pooled_height(), layer.pooled_width());
    const std::vector<Blob<Dtype>*> b{&bottom}, t{&top};
    ASSERT_TRUE(forward<Dtype>("PoolingLayer", layer, b, t)) << "ran the CPU code";
    fill_diff(top, 2);
    bottom.mutable_cpu_diff()[0] = Dtype(NAN);  // written over, not added to
    ASSERT_TRUE(backward<Dtype>("PoolingLayer", layer, t, b));
    std::vector<Dtype> want_top, want_diff;
    reference_pooling(layer, method == caffe::PoolingParameter::MAX, bottom, top, &want_top, &want_diff);
    expect_near(top.cpu_data(), want_top, "top");
    expect_near(bottom.cpu_diff(), want_diff, "bottom diff");
  }

  // A neuron layer: forward f(bottom) and backward g(data, top diff) against the formulas of
  // the layer's .cu, out of place and in place.
  template <class Forward, class Backward>
  void check_neuron(const char* layer_class, caffe::Layer<Dtype>& layer, bool backward_reads_top, Forward f,
                    Backward g) {
    SCOPED_TRACE(layer_class);
    for (bool in_place : {false, true}) {
      Blob<Dtype> bottom(2, 3, 4, 5), separate_top(2, 3, 4, 5);
      Blob<Dtype>& top = in_place ? bottom : separate_top;
      fill(bottom, 3, false);
      std::vector<Dtype> x(bottom.cpu_data(), bottom.cpu_data() + bottom.count());
      const std::vector<Blob<Dtype>*> b{&bottom}, t{&top};
      ASSERT_TRUE(forward<Dtype>(layer_class, layer, b, t));
      std::vector<Dtype> want(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = f(x[i]);
      expect_near(top.cpu_data(), want, "top");
      fill_diff(top, 4);
      std::vector<Dtype> dy(top.cpu_diff(), top.cpu_diff() + top.count());
      // What the .cu's backward reads: the bottom's data (in place: the top's), or the top's.
      std::vector<Dtype> data(top.cpu_data(), top.cpu_data() + top.count());
      if (!backward_reads_top && !in_place) data = x;
      ASSERT_TRUE(backward<Dtype>(layer_class, layer, t, b));
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = g(data[i], dy[i]);
      expect_near(bottom.cpu_diff(), want, in_place ? "bottom diff (in place)" : "bottom diff");
    }
  }
};

using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LayerGlue, Dtypes);

TYPED_TEST(LayerGlue, MaxPoolingOverlappingAndPaddedWithTies) {
  this->check_pooling(caffe::PoolingParameter::MAX, 3, 2, 1);
  this->check_pooling(caffe::PoolingParameter::MAX, 2, 2, 0);  // LeNet's
}

TYPED_TEST(LayerGlue, AveragePoolingCountsThePadding) {
  this->check_pooling(caffe::PoolingParameter::AVE, 3, 2, 1);
  this->check_pooling(caffe::PoolingParameter::AVE, 3, 1, 0);
}

TYPED_TEST(LayerGlue, GlobalPooling) {
  this->check_pooling(caffe::PoolingParameter::MAX, 1, 1, 0, true);
  this->check_pooling(caffe::PoolingParameter::AVE, 1, 1, 0, true);
}

TYPED_TEST(LayerGlue, PoolingDeclinesWhatOnlyCaffesKernelsDo) {
  using Dtype = TypeParam;
  Blob<Dtype> bottom(1, 1, 4, 4), top(1, 1, 2, 2), mask(1, 1, 2, 2);
  caffe::PoolingLayer<Dtype> stochastic(this->pooling(caffe::PoolingParameter::STOCHASTIC, 2, 2, 0), 4, 4);
  EXPECT_FALSE(forward<Dtype>("PoolingLayer", stochastic, {&bottom}, {&top})) << "stochastic pooling";
  EXPECT_FALSE(backward<Dtype>("PoolingLayer", stochastic, {&top}, {&bottom}));
  caffe::PoolingLayer<Dtype> max(this->pooling(caffe::PoolingParameter::MAX, 2, 2, 0), 4, 4);
  EXPECT_FALSE(forward<Dtype>("PoolingLayer", max, {&bottom}, {&top, &mask})) << "the mask as a second top";
  EXPECT_FALSE(backward<Dtype>("PoolingLayer", max, {&top, &mask}, {&bottom}));
}

// Without padding Caffe's rounding up keeps windows that start past the image (kernel 1,
// stride 2 over 4 x 6: 3 x 4 windows, the last row and column of them empty: -FLT_MAX).
TYPED_TEST(LayerGlue, PoolingKeepsCaffesEmptyLastWindows) {
  using Dtype = TypeParam;
  Blob<Dtype> bottom(1, 2, 4, 6), top;
  fill(bottom, 7, true);
  caffe::PoolingLayer<Dtype> layer(this->pooling(caffe::PoolingParameter::MAX, 1, 2, 0), 4, 6);
  ASSERT_EQ(layer.pooled_height(), 3);
  ASSERT_EQ(layer.pooled_width(), 4);
  top.Reshape(1, 2, layer.pooled_height(), layer.pooled_width());
  ASSERT_TRUE(forward<Dtype>("PoolingLayer", layer, {&bottom}, {&top}));
  EXPECT_EQ(top.data_at(0, 1, 1, 2), bottom.data_at(0, 1, 2, 4));
  EXPECT_EQ(top.data_at(0, 1, 2, 0), Dtype(-FLT_MAX));
  EXPECT_EQ(top.data_at(0, 0, 0, 3), Dtype(-FLT_MAX));
}

TYPED_TEST(LayerGlue, LeakyReLU) {
  using Dtype = TypeParam;
  caffe::LayerParameter param;
  param.mutable_relu_param()->set_negative_slope(0.125f);
  caffe::ReLULayer<Dtype> layer(param);
  const Dtype slope = Dtype(0.125);
  this->check_neuron(
      "ReLULayer", layer, false, [&](Dtype x) { return x > 0 ? x : x * slope; },
      [&](Dtype x, Dtype dy) { return dy * (Dtype(x > 0) + Dtype(x <= 0) * slope); });
}

TYPED_TEST(LayerGlue, SigmoidAndTanH) {
  using Dtype = TypeParam;
  caffe::LayerParameter param;
  caffe::SigmoidLayer<Dtype> sigmoid(param);
  this->check_neuron(
      "SigmoidLayer", sigmoid, true, [](Dtype x) { return Dtype(0.5 * std::tanh(0.5 * double(x)) + 0.5); },
      [](Dtype y, Dtype dy) { return dy * y * (1 - y); });
  caffe::TanHLayer<Dtype> tanh_layer(param);
  this->check_neuron(
      "TanHLayer", tanh_layer, true, [](Dtype x) { return std::tanh(x); },
      [](Dtype y, Dtype dy) { return dy * (1 - y * y); });
}

// ELU (its backward reads the top, so in place is Caffe's too), BNLL, Clip: the .cu's formulas.
TYPED_TEST(LayerGlue, ELUBNLLAndClip) {
  using Dtype = TypeParam;
  caffe::LayerParameter param;
  param.mutable_elu_param()->set_alpha(0.5f);
  caffe::ELULayer<Dtype> elu(param);
  const Dtype alpha = Dtype(0.5f);
  this->check_neuron(
      "ELULayer", elu, true, [&](Dtype x) { return x > 0 ? x : alpha * (std::exp(x) - Dtype(1)); },
      [&](Dtype y, Dtype dy) { return y > 0 ? dy : dy * (y + alpha); });
  caffe::BNLLLayer<Dtype> bnll(param);
  this->check_neuron(
      "BNLLLayer", bnll, false,
      [](Dtype x) { return Dtype(x > 0 ? x + std::log(1. + std::exp(-x)) : std::log(1. + std::exp(x))); },
      [](Dtype x, Dtype dy) {
        const Dtype e = std::exp(std::min(x, Dtype(50)));
        return Dtype(dy * e / (e + 1.));
      });
  // Bounds that the bottom's values (check_neuron's, and halves below) reach exactly.
  param.mutable_clip_param()->set_min(-0.5f);
  param.mutable_clip_param()->set_max(1.5f);
  caffe::ClipLayer<Dtype> clip(param);
  this->check_neuron(
      "ClipLayer", clip, false, [](Dtype x) { return std::max(Dtype(-0.5), std::min(x, Dtype(1.5))); },
      [](Dtype x, Dtype dy) { return dy * Dtype(x >= Dtype(-0.5) && x <= Dtype(1.5)); });
  {
    Blob<Dtype> bottom(2, 3, 4, 5), top(2, 3, 4, 5);
    fill(bottom, 5, true);  // halves: -0.5 and 1.5 among them
    ASSERT_TRUE(forward<Dtype>("ClipLayer", clip, {&bottom}, {&top}));
    fill_diff(top, 6);
    ASSERT_TRUE(backward<Dtype>("ClipLayer", clip, {&top}, {&bottom}));
    int on_bounds = 0;
    for (int i = 0; i < bottom.count(); ++i) {
      const Dtype x = bottom.cpu_data()[i];
      on_bounds += x == Dtype(-0.5) || x == Dtype(1.5);
      ASSERT_EQ(top.cpu_data()[i], std::max(Dtype(-0.5), std::min(x, Dtype(1.5)))) << i;
      ASSERT_EQ(bottom.cpu_diff()[i], top.cpu_diff()[i] * Dtype(x >= Dtype(-0.5) && x <= Dtype(1.5))) << i;
    }
    EXPECT_GT(on_bounds, 0);
  }
  // ELU's backward against the .cu's own test of the bottom (out of place: x and y both there).
  {
    Blob<Dtype> bottom(2, 3, 4, 5), top(2, 3, 4, 5);
    fill(bottom, 7, true);
    ASSERT_TRUE(forward<Dtype>("ELULayer", elu, {&bottom}, {&top}));
    fill_diff(top, 8);
    ASSERT_TRUE(backward<Dtype>("ELULayer", elu, {&top}, {&bottom}));
    for (int i = 0; i < bottom.count(); ++i) {
      const Dtype x = bottom.cpu_data()[i], y = top.cpu_data()[i], dy = top.cpu_diff()[i];
      ASSERT_EQ(bottom.cpu_diff()[i], x > 0 ? dy : dy * (y + alpha)) << i;
    }
  }
  // A negative alpha: the top's sign is not the bottom's, so the backward is the CPU code's.
  param.mutable_elu_param()->set_alpha(-0.5f);
  caffe::ELULayer<Dtype> negative(param);
  Blob<Dtype> bottom(1, 1, 2, 3), top(1, 1, 2, 3);
  ASSERT_TRUE(forward<Dtype>("ELULayer", negative, {&bottom}, {&top}));
  EXPECT_FALSE(backward<Dtype>("ELULayer", negative, {&top}, {&bottom}));
}

// PReLU, per channel and shared, out of place and in place: Caffe's prelu_layer.cpp
// Forward_cpu and Backward_cpu (the slopes' gradient added to their diff).
TYPED_TEST(LayerGlue, PReLUPerChannelAndShared) {
  using Dtype = TypeParam;
  for (const bool shared : {false, true}) {
    for (const bool in_place : {false, true}) {
      SCOPED_TRACE(std::string(shared ? "shared" : "per channel") + (in_place ? ", in place" : ""));
      caffe::LayerParameter param;
      Blob<Dtype> bottom(3, 4, 2, 5), separate(3, 4, 2, 5);
      Blob<Dtype>& top = in_place ? bottom : separate;
      fill(bottom, 31, true);  // halves: zeros too
      const std::vector<Dtype> x(bottom.cpu_data(), bottom.cpu_data() + bottom.count());
      caffe::PReLULayer<Dtype> layer(param, shared, bottom, in_place);
      fill(layer.slope(), 32, false);
      for (int c = 0; c < layer.slope().count(); ++c) layer.slope().mutable_cpu_diff()[c] = Dtype(0.5);
      ASSERT_TRUE(forward<Dtype>("PReLULayer", layer, {&bottom}, {&top}));
      const Dtype* slope = layer.slope().cpu_data();
      const auto slope_of = [&](int e) { return shared ? slope[0] : slope[e / 10 % 4]; };
      std::vector<Dtype> want(x.size());
      for (std::size_t e = 0; e < x.size(); ++e) {
        want[e] = std::max(x[e], Dtype(0)) + slope_of(static_cast<int>(e)) * std::min(x[e], Dtype(0));
      }
      this->expect_near(top.cpu_data(), want, "top");
      fill_diff(top, 33);
      const std::vector<Dtype> dy(top.cpu_diff(), top.cpu_diff() + top.count());
      ASSERT_TRUE(backward<Dtype>("PReLULayer", layer, {&top}, {&bottom}));
      std::vector<Dtype> want_slope(static_cast<std::size_t>(layer.slope().count()), Dtype(0.5));
      for (std::size_t e = 0; e < x.size(); ++e) {
        want[e] = dy[e] * ((x[e] > 0) + slope_of(static_cast<int>(e)) * (x[e] <= 0));
        want_slope[shared ? 0 : e / 10 % 4] += dy[e] * x[e] * (x[e] <= 0);
      }
      this->expect_near(bottom.cpu_diff(), want, "bottom diff");
      this->expect_near(layer.slope().cpu_diff(), want_slope, "slope diff");
    }
  }
  // The kernel's x > 0 ? x : x * slope, bit for bit where a sum of the two sides would not
  // be: -inf (its side times 0 is NaN), +0 with a negative slope (-0), a huge x whose
  // product overflows.
  caffe::LayerParameter param;
  Blob<Dtype> bottom(1, 2, 1, 3), top(1, 2, 1, 3);
  caffe::PReLULayer<Dtype> layer(param, false, bottom, false);
  layer.slope().mutable_cpu_data()[0] = Dtype(-0.25);
  layer.slope().mutable_cpu_data()[1] = Dtype(1e30);
  const Dtype inf = std::numeric_limits<Dtype>::infinity(), huge = std::numeric_limits<Dtype>::max();
  const Dtype x[] = {-inf, Dtype(0), Dtype(-2), huge, Dtype(-0.0), Dtype(3)};
  std::copy(x, x + 6, bottom.mutable_cpu_data());
  ASSERT_TRUE(forward<Dtype>("PReLULayer", layer, {&bottom}, {&top}));
  for (int i = 0; i < 6; ++i) {
    const Dtype slope = layer.slope().cpu_data()[i / 3];
    const Dtype want = x[i] > 0 ? x[i] : x[i] * slope;
    EXPECT_EQ(std::signbit(top.cpu_data()[i]), std::signbit(want)) << i;
    if (!std::isnan(want)) EXPECT_EQ(top.cpu_data()[i], want) << i;
    EXPECT_FALSE(std::isnan(top.cpu_data()[i])) << i;
  }
}

// Swish (beta 1.5), out of place and in place: x s with s = sigmoid(beta x), and
// swish_layer.cu's dy (beta y + s (1 - beta y)) from the top's data and the kept s.
TYPED_TEST(LayerGlue, Swish) {
  using Dtype = TypeParam;
  caffe::LayerParameter param;
  param.mutable_swish_param()->set_beta(1.5f);
  const Dtype beta = Dtype(1.5f);
  for (const bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "in place" : "out of place");
    Blob<Dtype> bottom(2, 3, 4, 5), separate(2, 3, 4, 5);
    Blob<Dtype>& top = in_place ? bottom : separate;
    caffe::SwishLayer<Dtype> layer(param, bottom);
    fill(bottom, 41, false);
    const std::vector<Dtype> x(bottom.cpu_data(), bottom.cpu_data() + bottom.count());
    ASSERT_TRUE(forward<Dtype>("SwishLayer", layer, {&bottom}, {&top}));
    std::vector<Dtype> s(x.size()), want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      s[i] = Dtype(0.5 * std::tanh(0.5 * double(Dtype(beta * x[i]))) + 0.5);
      want[i] = x[i] * s[i];
    }
    this->expect_near(top.cpu_data(), want, "top");
    fill_diff(top, 42);
    const std::vector<Dtype> dy(top.cpu_diff(), top.cpu_diff() + top.count());
    const std::vector<Dtype> y(top.cpu_data(), top.cpu_data() + top.count());
    ASSERT_TRUE(backward<Dtype>("SwishLayer", layer, {&top}, {&bottom}));
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = dy[i] * (beta * y[i] + s[i] * (1 - beta * y[i]));
    this->expect_near(bottom.cpu_diff(), want, "bottom diff");
  }
}

// Threshold: forward only (Caffe's layer has no backward); the threshold itself maps to 0.
TYPED_TEST(LayerGlue, Threshold) {
  using Dtype = TypeParam;
  caffe::LayerParameter param;
  param.mutable_threshold_param()->set_threshold(0.25f);
  caffe::ThresholdLayer<Dtype> layer(param);
  Blob<Dtype> bottom(2, 3, 4, 5), top(2, 3, 4, 5);
  fill(bottom, 11, true);
  bottom.mutable_cpu_data()[0] = Dtype(0.25f);
  ASSERT_TRUE(forward<Dtype>("ThresholdLayer", layer, {&bottom}, {&top}));
  for (int i = 0; i < bottom.count(); ++i) {
    ASSERT_EQ(top.cpu_data()[i], bottom.cpu_data()[i] > Dtype(0.25f) ? Dtype(1) : Dtype(0)) << i;
  }
  EXPECT_FALSE(backward<Dtype>("ThresholdLayer", layer, {&top}, {&bottom})) << "nothing registered backward";
}

// Dropout in training: the mask drawn on the device (bernoulli_mask over the Philox4x32-10
// stream keyed by Caffe's seed, from the thread's next words), the output and the gradient
// Caffe's in * (mask > t) * scale, bit for bit, out of place and in place; nothing crosses
// between host and device. Testing: a copy both ways.
TYPED_TEST(LayerGlue, DropoutAsCaffeWithItsMask) {
  using Dtype = TypeParam;
  using blobrt_kernels::Philox4x32;
  for (const float ratio : {0.5f, 0.3f}) {
    for (const bool in_place : {false, true}) {
      SCOPED_TRACE(std::string("ratio ") + std::to_string(ratio) + (in_place ? ", in place" : ""));
      caffe::LayerParameter param;
      param.mutable_dropout_param()->set_dropout_ratio(ratio);
      Blob<Dtype> bottom(4, 3, 5, 6), separate(4, 3, 5, 6);
      Blob<Dtype>& top = in_place ? bottom : separate;
      fill(bottom, 21, false);
      const std::vector<Dtype> x(bottom.cpu_data(), bottom.cpu_data() + bottom.count());
      caffe::DropoutLayer<Dtype> layer(param, caffe::TRAIN, bottom);
      bottom.mutable_gpu_data();
      top.mutable_gpu_data();
      const unsigned seed = in_place ? 1703 : 37;
      caffe::Caffe::set_random_seed(seed);
      caffe::Caffe::take_device_words(5);  // a draw before: the layer's starts at word 8, the next block
      blobrt::reset_transfer_counters();
      ASSERT_TRUE(forward<Dtype>("DropoutLayer", layer, {&bottom}, {&top}));
      EXPECT_EQ(blobrt::transfer_counters().host_to_device, 0u);
      EXPECT_EQ(blobrt::transfer_counters().device_to_host, 0u);
      EXPECT_EQ(caffe::Caffe::take_device_words(1).counter, 8 + (bottom.count() + 3) / 4 * 4)
          << "the stream moved past the layer's words";
      std::vector<bool> keep(bottom.count());
      const Dtype scale = static_cast<float>(layer.scale());
      int kept = 0;
      for (int i = 0; i < bottom.count(); ++i) {
        const std::uint64_t w = 8 + static_cast<std::uint64_t>(i);
        keep[i] = Philox4x32::words(seed, w / 4)[w % 4] > layer.uint_threshold();
        kept += keep[i];
        ASSERT_EQ(top.cpu_data()[i], x[i] * Dtype(keep[i]) * scale) << i;
      }
      EXPECT_GT(kept, bottom.count() * (1 - ratio) * 0.75);
      EXPECT_LT(kept, bottom.count() * (1 - ratio) * 1.25 + 1);
      fill_diff(top, 22);
      const std::vector<Dtype> dy(top.cpu_diff(), top.cpu_diff() + top.count());
      top.mutable_gpu_diff();
      blobrt::reset_transfer_counters();
      ASSERT_TRUE(backward<Dtype>("DropoutLayer", layer, {&top}, {&bottom}));
      EXPECT_EQ(blobrt::transfer_counters().host_to_device, 0u);
      EXPECT_EQ(blobrt::transfer_counters().device_to_host, 0u);
      for (int i = 0; i < bottom.count(); ++i) {
        ASSERT_EQ(bottom.cpu_diff()[i], dy[i] * scale * Dtype(keep[i])) << i;
      }
    }
  }
  caffe::LayerParameter param;
  Blob<Dtype> bottom(2, 3, 4, 5), top(2, 3, 4, 5);
  fill(bottom, 23, false);
  fill_diff(top, 24);
  caffe::DropoutLayer<Dtype> testing(param, caffe::TEST, bottom);
  ASSERT_TRUE(forward<Dtype>("DropoutLayer", testing, {&bottom}, {&top}));
  ASSERT_TRUE(backward<Dtype>("DropoutLayer", testing, {&top}, {&bottom}));
  for (int i = 0; i < bottom.count(); ++i) {
    ASSERT_EQ(top.cpu_data()[i], bottom.cpu_data()[i]);
    ASSERT_EQ(bottom.cpu_diff()[i], top.cpu_diff()[i]);
  }
  // A backward with no forward of its mask on the device runs the CPU code.
  caffe::DropoutLayer<Dtype> fresh(param, caffe::TRAIN, bottom);
  EXPECT_FALSE(backward<Dtype>("DropoutLayer", fresh, {&top}, {&bottom}));
}

// Softmax over axis 1 of 2 x 5 x 3 x 4 (outer 2, channels 5, inner 12), out of place and in
// place: each position's probabilities and the gradient (dy - dot(dy, y)) y.
TYPED_TEST(LayerGlue, SoftmaxAlongAnAxis) {
  using Dtype = TypeParam;
  for (bool in_place : {false, true}) {
    Blob<Dtype> bottom(2, 5, 3, 4), separate_top(2, 5, 3, 4);
    Blob<Dtype>& top = in_place ? bottom : separate_top;
    fill(bottom, 5, false);
    const std::vector<Dtype> x(bottom.cpu_data(), bottom.cpu_data() + bottom.count());
    caffe::SoftmaxLayer<Dtype> layer(caffe::LayerParameter(), bottom, 1);
    const std::vector<Blob<Dtype>*> b{&bottom}, t{&top};
    ASSERT_TRUE(forward<Dtype>("SoftmaxLayer", layer, b, t));
    std::vector<Dtype> want(x.size());
    for (int o = 0; o < 2; ++o) {
      for (int i = 0; i < 12; ++i) {
        double sum = 0;
        for (int c = 0; c < 5; ++c) sum += std::exp(double(x[(o * 5 + c) * 12 + i]));
        for (int c = 0; c < 5; ++c) want[(o * 5 + c) * 12 + i] = Dtype(std::exp(double(x[(o * 5 + c) * 12 + i])) / sum);
      }
    }
    this->expect_near(top.cpu_data(), want, "probabilities");
    fill_diff(top, 6);
    const std::vector<Dtype> y(top.cpu_data(), top.cpu_data() + top.count());
    const std::vector<Dtype> dy(top.cpu_diff(), top.cpu_diff() + top.count());
    ASSERT_TRUE(backward<Dtype>("SoftmaxLayer", layer, t, b));
    for (int o = 0; o < 2; ++o) {
      for (int i = 0; i < 12; ++i) {
        double dot = 0;
        for (int c = 0; c < 5; ++c) dot += double(dy[(o * 5 + c) * 12 + i]) * y[(o * 5 + c) * 12 + i];
        for (int c = 0; c < 5; ++c) {
          const int e = (o * 5 + c) * 12 + i;
          want[e] = Dtype((dy[e] - dot) * y[e]);
        }
      }
    }
    this->expect_near(bottom.cpu_diff(), want, in_place ? "bottom diff (in place)" : "bottom diff");
  }
}

// The loss layers' tests' settings: each normalization, with and without an ignore label.
struct LossSetting {
  bool ignore;
  caffe::LossParameter::NormalizationMode mode;
};
const LossSetting kLossSettings[] = {
    {false, caffe::LossParameter::VALID}, {true, caffe::LossParameter::VALID}, {true, caffe::LossParameter::BATCH_SIZE},
    {false, caffe::LossParameter::FULL}, {true, caffe::LossParameter::NONE}};

// The normalizer Caffe's CPU code divides by: `valid` positions not ignored of `positions`,
// `outer` items in the batch.
double want_normalizer(caffe::LossParameter::NormalizationMode mode, int valid, int outer, int positions) {
  if (mode == caffe::LossParameter::FULL) return positions;
  if (mode == caffe::LossParameter::VALID) return valid;
  if (mode == caffe::LossParameter::BATCH_SIZE) return outer;
  return 1;
}

// SoftmaxWithLoss over 4 x 5 x 2 x 3 (outer 4, channels 5, inner 6) in each normalization,
// with and without an ignore label, against Caffe's CPU code in double: the loss and the
// gradient, the scratch cleared; with the data on the device, nothing crosses but the loss,
// and the labels once where VALID must count them.
TYPED_TEST(LayerGlue, SoftmaxWithLossAsCaffeWithoutTraffic) {
  using Dtype = TypeParam;
  using caffe::LossParameter;
  for (const LossSetting& setting : kLossSettings) {
    SCOPED_TRACE(std::string(setting.ignore ? "ignore_label 2, " : "") + LossParameter::NormalizationMode_Name(setting.mode));
    caffe::LayerParameter param;
    if (setting.ignore) param.mutable_loss_param()->set_ignore_label(2);
    param.mutable_loss_param()->set_normalization(setting.mode);
    Blob<Dtype> bottom(4, 5, 2, 3), label(4, 1, 2, 3), loss;
    loss.Reshape(std::vector<int>{});
    fill(bottom, 7, false);
    for (int q = 0; q < label.count(); ++q) label.mutable_cpu_data()[q] = Dtype((q * 3) % 5);
    const Dtype loss_weight = Dtype(0.75);
    loss.mutable_cpu_diff()[0] = loss_weight;  // Net's SetLossWeights
    caffe::SoftmaxWithLossLayer<Dtype> layer(param, bottom);
    const std::vector<Blob<Dtype>*> b{&bottom, &label}, t{&loss};
    // The batch on the device, as the data layer leaves it; what one read of the labels costs.
    bottom.mutable_gpu_data();
    label.mutable_gpu_data();
    Blob<Dtype> probe(4, 1, 2, 3);
    probe.mutable_gpu_data();
    blobrt::reset_transfer_counters();
    probe.cpu_data();
    const std::uint64_t label_read = blobrt::transfer_counters().device_to_host;
    blobrt::reset_transfer_counters();
    ASSERT_TRUE(forward<Dtype>("SoftmaxWithLossLayer", layer, b, t));
    ASSERT_TRUE(backward<Dtype>("SoftmaxWithLossLayer", layer, t, b));
    const blobrt::TransferCounters moved = blobrt::transfer_counters();
    EXPECT_EQ(moved.host_to_device, 0u);
    EXPECT_EQ(moved.device_to_host, setting.ignore && setting.mode == LossParameter::VALID ? label_read : 0u);
    // Caffe's Forward_cpu and Backward_cpu in double.
    const Dtype* x = bottom.cpu_data();
    const Dtype* labels = label.cpu_data();
    double sum = 0;
    int valid = 0;
    std::vector<Dtype> want(static_cast<std::size_t>(bottom.count()), Dtype(0));
    std::vector<double> p(5);
    for (int o = 0; o < 4; ++o) {
      for (int i = 0; i < 6; ++i) {
        const int l = static_cast<int>(labels[o * 6 + i]);
        if (setting.ignore && l == 2) continue;
        ++valid;
        double z = 0;
        for (int c = 0; c < 5; ++c) z += std::exp(double(x[(o * 5 + c) * 6 + i]));
        for (int c = 0; c < 5; ++c) p[c] = std::exp(double(x[(o * 5 + c) * 6 + i])) / z;
        sum -= std::log(std::max(p[l], double(FLT_MIN)));
        for (int c = 0; c < 5; ++c) want[(o * 5 + c) * 6 + i] = Dtype(p[c] - (c == l ? 1 : 0));
      }
    }
    const double normalizer = want_normalizer(setting.mode, valid, 4, 24);
    EXPECT_NEAR(loss.cpu_data()[0], sum / normalizer, 8 * this->kEps * (1 + sum / normalizer));
    for (Dtype& w : want) w = Dtype(w * (loss_weight / normalizer));
    this->expect_near(bottom.cpu_diff(), want, "bottom diff");
    // Gradients to the labels: declined, so the layer's own code fails as Caffe's does.
    EXPECT_FALSE(blobrt_caffe_portable::backward_on_device<Dtype>("SoftmaxWithLossLayer", &layer, t,
                                                                  std::vector<bool>{true, true}, b));
    // Forward leaves its scratch, the bottom's diff, cleared (Caffe's #6202): with no gradient
    // wanted, backward leaves it so. A second top shares the probabilities.
    Blob<Dtype> prob_top;
    prob_top.ReshapeLike(bottom);
    ASSERT_TRUE(forward<Dtype>("SoftmaxWithLossLayer", layer, b, {&loss, &prob_top}));
    ASSERT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("SoftmaxWithLossLayer", &layer, t,
                                                                 std::vector<bool>{false, false}, b));
    for (int i = 0; i < bottom.count(); ++i) ASSERT_EQ(bottom.cpu_diff()[i], Dtype(0)) << "scratch left at " << i;
    for (int o = 0; o < 4; ++o) {
      double total = 0;
      for (int c = 0; c < 5; ++c) total += prob_top.cpu_data()[(o * 5 + c) * 6];
      EXPECT_NEAR(total, 1.0, 8 * this->kEps) << "the second top's probabilities";
    }
  }
}

// Concat along axis 1 (three bottoms of 3, 1 and 2 channels) and along axis 0, then Slice
// of the result back into the same parts: each element where Caffe's kernels put it, the
// diffs back, a part not propagated to untouched.
TYPED_TEST(LayerGlue, ConcatAndSliceAlongAnAxis) {
  using Dtype = TypeParam;
  for (int axis : {1, 0}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    const std::vector<int> extents{3, 1, 2};
    std::vector<std::unique_ptr<Blob<Dtype>>> parts;
    std::vector<Blob<Dtype>*> part_ptrs;
    std::vector<int> whole_shape{2, 3, 4, 5};
    whole_shape[axis] = 6;
    for (std::size_t i = 0; i < extents.size(); ++i) {
      std::vector<int> shape{2, 3, 4, 5};
      shape[axis] = extents[i];
      parts.push_back(std::make_unique<Blob<Dtype>>(shape));
      fill(*parts.back(), 10 + static_cast<unsigned>(i), false);
      part_ptrs.push_back(parts.back().get());
    }
    Blob<Dtype> whole(whole_shape);
    // The whole's element at (leading, along the axis, trailing) and its part's.
    const int rows = whole.count(0, axis), inner = whole.count(axis + 1);
    auto check_whole = [&](const Dtype* got, bool diff, std::size_t skip = 99) {
      int first = 0;
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i == skip) {
          first += extents[i];
          continue;
        }
        const Dtype* want = diff ? parts[i]->cpu_diff() : parts[i]->cpu_data();
        const int columns = extents[i] * inner;
        for (int r = 0; r < rows; ++r) {
          for (int c = 0; c < columns; ++c) {
            ASSERT_EQ(got[r * 6 * inner + first * inner + c], want[r * columns + c]) << "part " << i << " row " << r;
          }
        }
        first += extents[i];
      }
    };
    caffe::ConcatLayer<Dtype> concat(whole, axis);
    ASSERT_TRUE(forward<Dtype>("ConcatLayer", concat, part_ptrs, {&whole}));
    check_whole(whole.cpu_data(), false);
    fill_diff(whole, 13);
    for (auto& part : parts) part->mutable_cpu_diff()[0] = Dtype(7);
    ASSERT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("ConcatLayer", &concat, {&whole},
                                                                 std::vector<bool>{true, false, true}, part_ptrs));
    EXPECT_EQ(parts[1]->cpu_diff()[0], Dtype(7)) << "a bottom not propagated to was written";
    check_whole(whole.cpu_diff(), true, 1);
    // Slice: the parts out of the whole again, and their diffs back into it.
    for (auto& part : parts) {
      for (int i = 0; i < part->count(); ++i) part->mutable_cpu_data()[i] = Dtype(NAN);
    }
    caffe::SliceLayer<Dtype> slice(whole, axis);
    ASSERT_TRUE(forward<Dtype>("SliceLayer", slice, {&whole}, part_ptrs));
    check_whole(whole.cpu_data(), false);
    for (std::size_t i = 0; i < parts.size(); ++i) fill_diff(*parts[i], 20 + static_cast<unsigned>(i));
    ASSERT_TRUE(backward<Dtype>("SliceLayer", slice, part_ptrs, {&whole}));
    check_whole(whole.cpu_diff(), true);
  }
}

// Eltwise PROD (stable gradient and by division) and SUM (coefficients) over three bottoms
// against eltwise_layer.cu's formulas; MAX is declined (its int mask), and runs the CPU code.
TYPED_TEST(LayerGlue, EltwiseProductAndSum) {
  using Dtype = TypeParam;
  using caffe::EltwiseParameter;
  for (const auto op : {EltwiseParameter::PROD, EltwiseParameter::SUM}) {
    for (bool stable : {true, false}) {
      SCOPED_TRACE(EltwiseParameter::EltwiseOp_Name(op) + (stable ? " stable" : ""));
      caffe::LayerParameter param;
      param.mutable_eltwise_param()->set_operation(op);
      param.mutable_eltwise_param()->set_stable_prod_grad(stable);
      if (op == EltwiseParameter::SUM) {
        for (float c : {1.0f, -0.5f, 2.0f}) param.mutable_eltwise_param()->add_coeff(c);
      }
      Blob<Dtype> a(2, 3, 4, 5), b(2, 3, 4, 5), c(2, 3, 4, 5), top(2, 3, 4, 5);
      caffe::EltwiseLayer<Dtype> layer(param, 3, a);
      fill(a, 31, false);
      fill(b, 32, false);
      fill(c, 33, false);
      const std::vector<Blob<Dtype>*> bottom{&a, &b, &c}, t{&top};
      ASSERT_TRUE(forward<Dtype>("EltwiseLayer", layer, bottom, t));
      fill_diff(top, 34);
      b.mutable_cpu_diff()[0] = Dtype(7);  // not propagated to: untouched
      ASSERT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("EltwiseLayer", &layer, t,
                                                                   std::vector<bool>{true, false, true}, bottom));
      EXPECT_EQ(b.cpu_diff()[0], Dtype(7)) << "a bottom not propagated to was written";
      const int n = top.count();
      std::vector<Dtype> want(n);
      const Dtype coeff[] = {Dtype(1), Dtype(-0.5), Dtype(2)};
      for (int i = 0; i < n; ++i) {
        const Dtype x[] = {a.cpu_data()[i], b.cpu_data()[i], c.cpu_data()[i]};
        want[i] = op == EltwiseParameter::PROD ? x[0] * x[1] * x[2] : coeff[0] * x[0] + coeff[1] * x[1] + coeff[2] * x[2];
      }
      this->expect_near(top.cpu_data(), want, "top");
      for (int k : {0, 2}) {
        for (int i = 0; i < n; ++i) {
          const Dtype x[] = {a.cpu_data()[i], b.cpu_data()[i], c.cpu_data()[i]};
          const Dtype others = x[(k + 1) % 3] * x[(k + 2) % 3];
          want[i] = top.cpu_diff()[i] * (op == EltwiseParameter::PROD ? others : coeff[k]);
        }
        this->expect_near(bottom[k]->cpu_diff(), want, "bottom diff");
      }
      if (op == EltwiseParameter::SUM) break;  // stable_prod_grad is PROD's
    }
  }
}

// Eltwise MAX over two and three bottoms with many ties: eltwise_layer.cu's running maximum
// (a tie goes to the later bottom there, where the CPU code keeps the earlier one after the
// first two) and each bottom's gradient where the mask names it, 0 elsewhere; a backward with
// no forward on the device runs the CPU code.
TYPED_TEST(LayerGlue, EltwiseMaxAsTheKernels) {
  using Dtype = TypeParam;
  using caffe::EltwiseParameter;
  for (const int bottoms : {2, 3}) {
    SCOPED_TRACE(std::to_string(bottoms) + " bottoms");
    caffe::LayerParameter param;
    param.mutable_eltwise_param()->set_operation(EltwiseParameter::MAX);
    Blob<Dtype> b0(2, 3, 2, 3), b1(2, 3, 2, 3), b2(2, 3, 2, 3), top(2, 3, 2, 3);
    fill(b0, 61, true);
    fill(b1, 62, true);
    fill(b2, 63, true);
    std::vector<Blob<Dtype>*> bottom{&b0, &b1, &b2};
    bottom.resize(static_cast<std::size_t>(bottoms));
    caffe::EltwiseLayer<Dtype> layer(param, bottoms, b0);
    ASSERT_TRUE(forward<Dtype>("EltwiseLayer", layer, bottom, {&top}));
    std::vector<Dtype> want(static_cast<std::size_t>(top.count()));
    std::vector<int> mask(want.size());
    for (std::size_t e = 0; e < want.size(); ++e) {
      Dtype best = bottom[0]->cpu_data()[e];
      int index = 0;
      for (int i = 1; i < bottoms; ++i) {
        if (!(best > bottom[i]->cpu_data()[e])) {
          best = bottom[i]->cpu_data()[e];
          index = i;
        }
      }
      want[e] = best;
      mask[e] = index;
    }
    this->expect_near(top.cpu_data(), want, "top");
    fill_diff(top, 64);
    ASSERT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("EltwiseLayer", &layer, {&top},
                                                                 std::vector<bool>(bottoms, true), bottom));
    for (int i = 0; i < bottoms; ++i) {
      for (std::size_t e = 0; e < want.size(); ++e) want[e] = mask[e] == i ? top.cpu_diff()[e] : Dtype(0);
      this->expect_near(bottom[i]->cpu_diff(), want, ("bottom " + std::to_string(i) + " diff").c_str());
    }
  }
  caffe::LayerParameter param;
  param.mutable_eltwise_param()->set_operation(EltwiseParameter::MAX);
  Blob<Dtype> a(1, 1, 2, 2), b(1, 1, 2, 2), top(1, 1, 2, 2);
  caffe::EltwiseLayer<Dtype> fresh(param, 2, a);
  EXPECT_FALSE(backward<Dtype>("EltwiseLayer", fresh, {&top}, {&a, &b})) << "a backward with no mask kept";
}

// LRN across channels (2 x 7 x 3 x 4, windows of 5 channels) against the formulas of Caffe's
// lrn_layer.cpp in double: top = x (k + α/n Σ x²)^-β and its gradient; within a channel
// declined (the CPU code composes other layers).
TYPED_TEST(LayerGlue, LRNAcrossChannels) {
  using Dtype = TypeParam;
  caffe::LayerParameter param;
  caffe::LRNParameter* p = param.mutable_lrn_param();
  p->set_local_size(5);
  p->set_alpha(0.75f);
  p->set_beta(0.6f);
  p->set_k(1.5f);
  Blob<Dtype> bottom(2, 7, 3, 4), top(2, 7, 3, 4);
  fill(bottom, 41, false);
  caffe::LRNLayer<Dtype> layer(param, bottom);
  const std::vector<Blob<Dtype>*> b{&bottom}, t{&top};
  ASSERT_TRUE(forward<Dtype>("LRNLayer", layer, b, t));
  fill_diff(top, 42);
  ASSERT_TRUE(backward<Dtype>("LRNLayer", layer, t, b));
  const double alpha = p->alpha(), beta = p->beta(), k = p->k();
  const int n = 5, channels = 7, inner = 12;
  const Dtype* x = bottom.cpu_data();
  const Dtype* dy = top.cpu_diff();
  std::vector<double> scale(bottom.count()), y(bottom.count());
  auto at = [&](int o, int c, int i) { return (o * channels + c) * inner + i; };
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < inner; ++i) {
      for (int c = 0; c < channels; ++c) {
        double sum = 0;
        for (int w = std::max(0, c - 2); w <= std::min(channels - 1, c + 2); ++w) sum += double(x[at(o, w, i)]) * x[at(o, w, i)];
        scale[at(o, c, i)] = k + alpha / n * sum;
        y[at(o, c, i)] = x[at(o, c, i)] * std::pow(scale[at(o, c, i)], -beta);
      }
    }
  }
  std::vector<Dtype> want(y.begin(), y.end());
  this->expect_near(top.cpu_data(), want, "top");
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < inner; ++i) {
      for (int c = 0; c < channels; ++c) {
        double sum = 0;
        for (int w = std::max(0, c - 2); w <= std::min(channels - 1, c + 2); ++w) {
          sum += dy[at(o, w, i)] * y[at(o, w, i)] / scale[at(o, w, i)];
        }
        want[at(o, c, i)] = Dtype(dy[at(o, c, i)] * std::pow(scale[at(o, c, i)], -beta) -
                                  2 * alpha * beta / n * x[at(o, c, i)] * sum);
      }
    }
  }
  this->expect_near(bottom.cpu_diff(), want, "bottom diff");
  // In place (Caffe's Net allows it): the same top.
  Blob<Dtype> in_place(2, 7, 3, 4);
  in_place.CopyFrom(bottom);
  ASSERT_TRUE(forward<Dtype>("LRNLayer", layer, {&in_place}, {&in_place}));
  this->expect_near(in_place.cpu_data(), std::vector<Dtype>(y.begin(), y.end()), "top in place");
  caffe::LayerParameter within;
  within.mutable_lrn_param()->set_norm_region(caffe::LRNParameter::WITHIN_CHANNEL);
  caffe::LRNLayer<Dtype> within_layer(within, bottom);
  EXPECT_FALSE(forward<Dtype>("LRNLayer", within_layer, b, t)) << "within a channel ran on the device";
}

// Scale along axis 1 of 2 x 3 x 4 x 5 against scale_layer.cpp's formulas in double: a
// parameter scale with a bias term (its BiasLayer's gradient too), out of place; the same in
// place (the bottom kept for backward); the scale as a second bottom (its gradient written,
// a parameter's accumulated). Then Bias alone, with its gradient accumulated.
TYPED_TEST(LayerGlue, ScaleAndBiasPerChannel) {
  using Dtype = TypeParam;
  struct Setting {
    bool parameter, bias_term, in_place;
  };
  for (const Setting setting : {Setting{true, true, false}, Setting{true, true, true}, Setting{false, false, false}}) {
    SCOPED_TRACE(std::string(setting.parameter ? "parameter" : "second bottom") + (setting.bias_term ? ", bias" : "") +
                 (setting.in_place ? ", in place" : ""));
    Blob<Dtype> bottom(2, 3, 4, 5), separate_top(2, 3, 4, 5), factor(std::vector<int>{3});
    Blob<Dtype>& top = setting.in_place ? bottom : separate_top;
    fill(bottom, 51, false);
    const std::vector<Dtype> x(bottom.cpu_data(), bottom.cpu_data() + bottom.count());
    caffe::ScaleLayer<Dtype> layer(bottom, setting.parameter, setting.bias_term);
    Blob<Dtype>* scale = setting.parameter ? layer.parameter(0) : &factor;
    fill(*scale, 52, false);
    Blob<Dtype>* bias = setting.bias_term ? layer.parameter(1) : nullptr;
    if (bias) fill(*bias, 53, false);
    const Dtype accumulated = setting.parameter ? Dtype(0.25) : Dtype(0);  // a parameter's diff adds up
    for (int c = 0; c < 3; ++c) scale->mutable_cpu_diff()[c] = setting.parameter ? accumulated : Dtype(NAN);
    if (bias) {
      for (int c = 0; c < 3; ++c) bias->mutable_cpu_diff()[c] = accumulated;
    }
    std::vector<Blob<Dtype>*> b{&bottom};
    if (!setting.parameter) b.push_back(&factor);
    const std::vector<Blob<Dtype>*> t{&top};
    ASSERT_TRUE(forward<Dtype>("ScaleLayer", layer, b, t));
    std::vector<Dtype> want(x.size());
    for (std::size_t e = 0; e < x.size(); ++e) {
      const int c = static_cast<int>(e / 20 % 3);
      want[e] = Dtype(double(x[e]) * scale->cpu_data()[c] + (bias ? double(bias->cpu_data()[c]) : 0));
    }
    this->expect_near(top.cpu_data(), want, "top");
    fill_diff(top, 54);
    const std::vector<Dtype> dy(top.cpu_diff(), top.cpu_diff() + top.count());
    ASSERT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("ScaleLayer", &layer, t,
                                                                 std::vector<bool>(b.size(), true), b));
    std::vector<double> scale_sum(3, 0), bias_sum(3, 0);
    for (std::size_t e = 0; e < x.size(); ++e) {
      const int c = static_cast<int>(e / 20 % 3);
      scale_sum[c] += double(dy[e]) * x[e];
      bias_sum[c] += dy[e];
      want[e] = Dtype(double(dy[e]) * scale->cpu_data()[c]);
    }
    this->expect_near(bottom.cpu_diff(), want, "bottom diff");
    std::vector<Dtype> want_scale(3), want_bias(3);
    for (int c = 0; c < 3; ++c) {
      want_scale[c] = Dtype(accumulated + scale_sum[c]);
      want_bias[c] = Dtype(accumulated + bias_sum[c]);
    }
    this->expect_near(scale->cpu_diff(), want_scale, "scale diff");
    if (bias) this->expect_near(bias->cpu_diff(), want_bias, "bias diff");
  }
  // Bias alone: forward, the top's diff copied down, the parameter's gradient accumulated.
  Blob<Dtype> bottom(2, 3, 4, 5), top(2, 3, 4, 5);
  fill(bottom, 55, false);
  caffe::BiasLayer<Dtype> layer(bottom);
  Blob<Dtype>& bias = *layer.parameter();
  fill(bias, 56, false);
  for (int c = 0; c < 3; ++c) bias.mutable_cpu_diff()[c] = Dtype(0.5);
  ASSERT_TRUE(forward<Dtype>("BiasLayer", layer, {&bottom}, {&top}));
  std::vector<Dtype> want(static_cast<std::size_t>(top.count()));
  for (std::size_t e = 0; e < want.size(); ++e) want[e] = bottom.cpu_data()[e] + bias.cpu_data()[e / 20 % 3];
  this->expect_near(top.cpu_data(), want, "bias top");
  fill_diff(top, 57);
  ASSERT_TRUE(backward<Dtype>("BiasLayer", layer, {&top}, {&bottom}));
  this->expect_near(bottom.cpu_diff(), std::vector<Dtype>(top.cpu_diff(), top.cpu_diff() + top.count()), "bias bottom diff");
  std::vector<Dtype> want_bias(3, Dtype(0.5));
  for (std::size_t e = 0; e < want.size(); ++e) want_bias[e / 20 % 3] += top.cpu_diff()[e];
  this->expect_near(bias.cpu_diff(), want_bias, "bias diff");
}

// The record says which ran on the device.
TEST(LayerGlueReport, SaysWhatRanOnTheDevice) {
  Blob<float> bottom(1, 1, 4, 4), top(1, 1, 2, 2);
  caffe::LayerParameter param;
  caffe::ReLULayer<float> relu(param);
  ASSERT_TRUE(forward<float>("ReLULayer", relu, {&bottom}, {&bottom}));
  const std::string device = blobrt::current_device()->description().id();
  const std::vector<std::string> report = blobrt_caffe_portable::gpu_method_report();
  EXPECT_NE(std::find(report.begin(), report.end(), "ReLULayer Forward_gpu on " + device + ": device"), report.end());
  EXPECT_TRUE(addressable);
}

}  // namespace

namespace {

// The row an index names, as Caffe's static_cast<int>.
int row_of(double index) { return static_cast<int>(index); }

// Embed: the weight's rows the indices name (repeats, a fraction) plus the bias; backward the
// rows' gradients added into the weight's diff in the bottom's order (Caffe's CPU order: the
// same sums, so equal), the bias's summed over the rows; backward to the indices runs the CPU
// code (Caffe's CHECK), as does a layer without a bias term on its first parameter only.
TYPED_TEST(LayerGlue, EmbedGathersAndAddsBack) {
  using Dtype = TypeParam;
  for (bool bias : {true, false}) {
    SCOPED_TRACE(bias ? "bias term" : "no bias term");
    const int m = 12, k = 7, n = 5;
    caffe::EmbedLayer<Dtype> layer(m, k, n, bias);
    fill(layer.weight(), 30, false);
    if (bias) fill(layer.bias(), 31, false);
    Blob<Dtype> bottom(std::vector<int>{2, 6}), top(std::vector<int>{2, 6, n});
    const double indices[m] = {3, 0, 6, 3, 2.75, 1, 3, 0, 5, 6, 4, 3};
    for (int i = 0; i < m; ++i) bottom.mutable_cpu_data()[i] = Dtype(indices[i]);
    const std::vector<Blob<Dtype>*> bottoms{&bottom}, tops{&top};
    ASSERT_TRUE(forward<Dtype>("EmbedLayer", layer, bottoms, tops));
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < n; ++c) {
        Dtype want = layer.weight().cpu_data()[row_of(indices[r]) * n + c];
        if (bias) want += layer.bias().cpu_data()[c];
        ASSERT_EQ(top.cpu_data()[r * n + c], want) << "top row " << r << " column " << c;
      }
    }
    fill_diff(top, 32);
    fill_diff(layer.weight(), 33);  // added to, as Caffe accumulates parameter gradients
    if (bias) fill_diff(layer.bias(), 34);
    std::vector<Dtype> weight_diff(layer.weight().cpu_diff(), layer.weight().cpu_diff() + k * n), bias_diff(n);
    if (bias) bias_diff.assign(layer.bias().cpu_diff(), layer.bias().cpu_diff() + n);
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < n; ++c) {
        weight_diff[row_of(indices[r]) * n + c] += top.cpu_diff()[r * n + c];
        bias_diff[c] += top.cpu_diff()[r * n + c];
      }
    }
    ASSERT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("EmbedLayer", &layer, tops, std::vector<bool>{false},
                                                                 bottoms));
    for (int i = 0; i < k * n; ++i) ASSERT_EQ(layer.weight().cpu_diff()[i], weight_diff[i]) << "weight diff " << i;
    if (bias) this->expect_near(layer.bias().cpu_diff(), bias_diff, "bias diff");
    EXPECT_FALSE(blobrt_caffe_portable::backward_on_device<Dtype>("EmbedLayer", &layer, tops, std::vector<bool>{true},
                                                                  bottoms))
        << "backward to the indices ran on the device, where Caffe's CPU code refuses it";
  }
}

// BatchReindex: the items the index blob names (repeated, one not named), their gradients
// summed back in the index blob's order; an index outside the batch runs the CPU code, whose
// CHECK names it.
TYPED_TEST(LayerGlue, BatchReindexPicksAndSumsBack) {
  using Dtype = TypeParam;
  Blob<Dtype> bottom(4, 3, 2, 1), index(std::vector<int>{6}), top(6, 3, 2, 1);
  fill(bottom, 40, false);
  const int picks[6] = {2, 0, 2, 3, 2, 0};  // item 1 is not picked
  for (int i = 0; i < 6; ++i) index.mutable_cpu_data()[i] = Dtype(picks[i]);
  caffe::Layer<Dtype> layer{caffe::LayerParameter()};
  const std::vector<Blob<Dtype>*> bottoms{&bottom, &index}, tops{&top};
  ASSERT_TRUE(forward<Dtype>("BatchReindexLayer", layer, bottoms, tops));
  for (int i = 0; i < 6; ++i) {
    for (int e = 0; e < 6; ++e) ASSERT_EQ(top.cpu_data()[i * 6 + e], bottom.cpu_data()[picks[i] * 6 + e]) << i;
  }
  fill_diff(top, 41);
  bottom.mutable_cpu_diff()[6] = Dtype(NAN);  // item 1's: written over with 0
  std::vector<Dtype> want(24, Dtype(0));
  for (int i = 0; i < 6; ++i) {
    for (int e = 0; e < 6; ++e) want[picks[i] * 6 + e] += top.cpu_diff()[i * 6 + e];
  }
  ASSERT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("BatchReindexLayer", &layer, tops,
                                                               std::vector<bool>{true, false}, bottoms));
  for (int i = 0; i < 24; ++i) ASSERT_EQ(bottom.cpu_diff()[i], want[i]) << "bottom diff " << i;
  index.mutable_cpu_data()[3] = Dtype(4);
  EXPECT_FALSE(forward<Dtype>("BatchReindexLayer", layer, bottoms, {&top})) << "an index past the batch ran";
}

// Crop of a 4-axis blob along axes 1 to 3 (offsets 1, 2, 3), and of a 2-axis one: the top the
// bottom's block, element for element; backward the bottom's diff 0 but the block, the top's.
TYPED_TEST(LayerGlue, CropTheBlockAndBack) {
  using Dtype = TypeParam;
  struct Shape {
    std::vector<int> bottom, top, offsets;
  };
  for (const Shape& s : {Shape{{2, 3, 7, 9}, {2, 2, 4, 5}, {0, 1, 2, 3}}, Shape{{6, 8}, {3, 8}, {2, 0}}}) {
    SCOPED_TRACE(std::to_string(s.bottom.size()) + " axes");
    Blob<Dtype> bottom(s.bottom), top(s.top);
    fill(bottom, 50, false);
    caffe::CropLayer<Dtype> layer(s.offsets);
    ASSERT_TRUE(forward<Dtype>("CropLayer", layer, {&bottom}, {&top}));
    // The bottom's index of the top's element i.
    auto whole_index = [&](int i) {
      int at = 0;
      for (std::size_t a = 0; a < s.top.size(); ++a) {
        const int coordinate = i / top.count(static_cast<int>(a) + 1) % s.top[a];
        at = at * s.bottom[a] + coordinate + s.offsets[a];
      }
      return at;
    };
    for (int i = 0; i < top.count(); ++i) ASSERT_EQ(top.cpu_data()[i], bottom.cpu_data()[whole_index(i)]) << i;
    fill_diff(top, 51);
    fill_diff(bottom, 52);  // written over
    std::vector<Dtype> want(bottom.count(), Dtype(0));
    for (int i = 0; i < top.count(); ++i) want[whole_index(i)] = top.cpu_diff()[i];
    ASSERT_TRUE(backward<Dtype>("CropLayer", layer, {&top}, {&bottom}));
    for (int i = 0; i < bottom.count(); ++i) ASSERT_EQ(bottom.cpu_diff()[i], want[i]) << "bottom diff " << i;
  }
}

// Tile of a 2 x 3 x 4 blob along axis 1 (3 tiles: 2 x 9 x 4) and along axis 0 (2 tiles: 4 x 3
// x 4): the top the bottom's blocks repeated; backward each bottom element the sum of its
// tiles' gradients in tile order (TileBackward's), the bottom's old diff written over.
TYPED_TEST(LayerGlue, TileRepeatsAndSumsBack) {
  using Dtype = TypeParam;
  for (int axis : {1, 0}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    const int tiles = axis == 1 ? 3 : 2;
    Blob<Dtype> bottom(std::vector<int>{2, 3, 4});
    std::vector<int> top_shape{2, 3, 4};
    top_shape[axis] *= tiles;
    Blob<Dtype> top(top_shape);
    fill(bottom, 70, false);
    caffe::TileLayer<Dtype> layer(bottom, axis, tiles);
    const int outer = bottom.count(0, axis), inner = bottom.count(axis);
    ASSERT_TRUE(forward<Dtype>("TileLayer", layer, {&bottom}, {&top}));
    for (int o = 0; o < outer; ++o)
      for (int t = 0; t < tiles; ++t)
        for (int d = 0; d < inner; ++d)
          ASSERT_EQ(top.cpu_data()[(o * tiles + t) * inner + d], bottom.cpu_data()[o * inner + d]) << o << " " << t;
    fill_diff(top, 71);
    fill_diff(bottom, 72);  // written over
    std::vector<Dtype> want(bottom.count());
    for (int o = 0; o < outer; ++o)
      for (int d = 0; d < inner; ++d) {
        Dtype sum = 0;
        for (int t = 0; t < tiles; ++t) sum += top.cpu_diff()[(o * tiles + t) * inner + d];
        want[o * inner + d] = sum;
      }
    ASSERT_TRUE(backward<Dtype>("TileLayer", layer, {&top}, {&bottom}));
    for (int i = 0; i < bottom.count(); ++i) ASSERT_EQ(bottom.cpu_diff()[i], want[i]) << "bottom diff " << i;
  }
}

// Accuracy, top 1 and top 2, with and without an ignore label, over scores in halves (ties
// with the label's score count against it, as in Caffe's count), the classes along axis 1
// (2 x 5 x 3) and along the last axis (2 x 3 x 5): the value of Caffe's CPU code, bottom[0]'s
// diff (the scratch) cleared; a second top (per class) runs the CPU code.
TYPED_TEST(LayerGlue, AccuracyTopKAsCaffeCounts) {
  using Dtype = TypeParam;
  for (int axis : {1, 2}) {
    const int outer = axis == 1 ? 2 : 6, classes = 5, inner = axis == 1 ? 3 : 1;
    Blob<Dtype> scores(axis == 1 ? std::vector<int>{2, 5, 3} : std::vector<int>{2, 3, 5});
    Blob<Dtype> label(std::vector<int>{2, 3}), top(std::vector<int>{});
    fill(scores, 60, true);
    const Dtype labels[6] = {0, 4, 2, 3, 2, 1};
    std::copy(labels, labels + 6, label.mutable_cpu_data());
    const std::vector<Blob<Dtype>*> bottoms{&scores, &label}, tops{&top};
    for (int top_k : {1, 2}) {
      for (bool ignore : {false, true}) {
        SCOPED_TRACE("axis " + std::to_string(axis) + ", top " + std::to_string(top_k) +
                     (ignore ? ", label 2 ignored" : ""));
        caffe::AccuracyLayer<Dtype> layer(scores, axis, top_k, ignore, 2);
        // Caffe's accuracy_layer.cpp Forward_cpu.
        int hits = 0, valid = 0;
        for (int n = 0; n < outer; ++n) {
          for (int s = 0; s < inner; ++s) {
            const int l = static_cast<int>(labels[n * inner + s]);
            if (ignore && l == 2) continue;
            ++valid;
            const Dtype* at = scores.cpu_data() + n * classes * inner + s;
            int better = -1;
            for (int k = 0; k < classes && better < top_k; ++k) better += at[k * inner] >= at[l * inner];
            hits += better < top_k;
          }
        }
        ASSERT_TRUE(forward<Dtype>("AccuracyLayer", layer, bottoms, tops));
        EXPECT_EQ(top.cpu_data()[0], Dtype(hits) / Dtype(valid));
        for (int i = 0; i < scores.count(); ++i) ASSERT_EQ(scores.cpu_diff()[i], Dtype(0)) << "scratch left at " << i;
      }
    }
    caffe::AccuracyLayer<Dtype> layer(scores, axis, 1, false, 0);
    Blob<Dtype> per_class(std::vector<int>{5});
    EXPECT_FALSE(forward<Dtype>("AccuracyLayer", layer, bottoms, {&top, &per_class}));
  }
}

// SigmoidCrossEntropyLoss in each normalization, with and without an ignore label (-1, on
// every fifth target, and on a target of -1.5, which Caffe's int cast reads as -1): the loss
// and gradient of Caffe's CPU code, nothing moved between host and device but the loss, the
// scratch diffs of both bottoms cleared, backward to the targets declined.
TYPED_TEST(LayerGlue, SigmoidCrossEntropyLossAsCaffeWithoutTraffic) {
  using Dtype = TypeParam;
  using caffe::LossParameter;
  for (const LossSetting& setting : kLossSettings) {
    SCOPED_TRACE(std::string(setting.ignore ? "ignore_label -1, " : "") +
                 LossParameter::NormalizationMode_Name(setting.mode));
    caffe::LayerParameter param;
    if (setting.ignore) param.mutable_loss_param()->set_ignore_label(-1);
    param.mutable_loss_param()->set_normalization(setting.mode);
    Blob<Dtype> bottom(4, 3, 2, 1), target(4, 3, 2, 1), loss;
    loss.Reshape(std::vector<int>{});
    fill(bottom, 80, false);
    bottom.mutable_cpu_data()[1] = Dtype(0);  // the .cu's x >= 0 branch at 0
    std::mt19937 rng(81);
    std::uniform_real_distribution<double> unit(0, 1);
    // Targets in [0, 1]; with the ignore label, some of them -1 (and one -1.5). Without it no
    // target is outside [0, 1]: Caffe's .cu sums the elements' absolute values (asum), its CPU
    // code their negated sum, equal only while each element's log-likelihood is at most 0.
    for (int q = 0; q < target.count(); ++q) {
      target.mutable_cpu_data()[q] = Dtype(setting.ignore && q % 5 == 0 ? -1 : unit(rng));
    }
    if (setting.ignore) target.mutable_cpu_data()[7] = Dtype(-1.5);
    const Dtype loss_weight = Dtype(0.75);
    loss.mutable_cpu_diff()[0] = loss_weight;
    caffe::SigmoidCrossEntropyLossLayer<Dtype> layer(param, bottom);
    const std::vector<Blob<Dtype>*> b{&bottom, &target}, t{&loss};
    bottom.mutable_gpu_data();  // the batch on the device, as the data layer leaves it
    target.mutable_gpu_data();
    blobrt::reset_transfer_counters();
    ASSERT_TRUE(forward<Dtype>("SigmoidCrossEntropyLossLayer", layer, b, t));
    ASSERT_TRUE(backward<Dtype>("SigmoidCrossEntropyLossLayer", layer, t, b));
    const blobrt::TransferCounters moved = blobrt::transfer_counters();
    EXPECT_EQ(moved.host_to_device, 0u);
    EXPECT_EQ(moved.device_to_host, 0u);
    // Caffe's Forward_cpu and Backward_cpu in double.
    const Dtype* x = bottom.cpu_data();
    const Dtype* labels = target.cpu_data();
    double sum = 0;
    int valid = 0;
    std::vector<Dtype> want(static_cast<std::size_t>(bottom.count()), Dtype(0));
    for (int i = 0; i < bottom.count(); ++i) {
      if (setting.ignore && static_cast<int>(labels[i]) == -1) continue;
      ++valid;
      const double v = x[i], l = labels[i], positive = v >= 0;
      sum -= v * (l - positive) - std::log(1 + std::exp(v - 2 * v * positive));
      want[i] = Dtype(1 / (1 + std::exp(-v)) - l);
    }
    const double normalizer = want_normalizer(setting.mode, valid, 4, 24);
    EXPECT_NEAR(loss.cpu_data()[0], sum / normalizer, 16 * this->kEps * (1 + sum / normalizer));
    for (Dtype& w : want) w = Dtype(w * (loss_weight / normalizer));
    this->expect_near(bottom.cpu_diff(), want, "bottom diff");
    for (int i = 0; i < bottom.count(); ++i) {
      EXPECT_NEAR(layer.sigmoid_output().cpu_data()[i], 1 / (1 + std::exp(-double(x[i]))), 4 * this->kEps)
          << "the layer's sigmoid_output_";
    }
    EXPECT_FALSE(blobrt_caffe_portable::backward_on_device<Dtype>("SigmoidCrossEntropyLossLayer", &layer, t,
                                                                  std::vector<bool>{true, true}, b));
    // Forward leaves both scratch diffs cleared (Caffe's #6202).
    ASSERT_TRUE(forward<Dtype>("SigmoidCrossEntropyLossLayer", layer, b, t));
    for (int i = 0; i < bottom.count(); ++i) {
      ASSERT_EQ(bottom.cpu_diff()[i], Dtype(0)) << "bottom scratch left at " << i;
      ASSERT_EQ(target.cpu_diff()[i], Dtype(0)) << "target scratch left at " << i;
    }
  }
}

// ContrastiveLoss, Hadsell's form and legacy_version, pairs inside and outside the margin: the
// loss and both bottoms' gradients of Caffe's CPU code (legacy's too: the .cu's legacy backward
// drops diff_'s factor; docs/differences-from-caffe.md); a bottom not propagated untouched.
TYPED_TEST(LayerGlue, ContrastiveLossAsCaffesCpuCode) {
  using Dtype = TypeParam;
  for (bool legacy : {false, true}) {
    SCOPED_TRACE(legacy ? "legacy_version" : "Hadsell et al.");
    const int num = 6, channels = 3;
    caffe::LayerParameter param;
    param.mutable_contrastive_loss_param()->set_margin(legacy ? 1.5f : 1.0f);
    param.mutable_contrastive_loss_param()->set_legacy_version(legacy);
    Blob<Dtype> a(num, channels, 1, 1), b(num, channels, 1, 1), y(num, 1, 1, 1), loss;
    loss.Reshape(std::vector<int>{});
    fill(a, 90, false);
    fill(b, 91, false);
    for (Blob<Dtype>* blob : {&a, &b}) {
      for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] *= Dtype(0.3);  // distances near the margin
    }
    for (int c = 0; c < channels; ++c) b.mutable_cpu_data()[4 * channels + c] = a.cpu_data()[4 * channels + c] + 1;
    const Dtype labels[num] = {1, 0, 0, 1, 0, 0.5};  // 0.5: Caffe's int cast, dissimilar; pair 4 far apart
    std::copy(labels, labels + num, y.mutable_cpu_data());
    const Dtype loss_weight = Dtype(0.5);
    loss.mutable_cpu_diff()[0] = loss_weight;
    caffe::ContrastiveLossLayer<Dtype> layer(param, a);
    const std::vector<Blob<Dtype>*> bottoms{&a, &b, &y}, tops{&loss};
    ASSERT_TRUE(forward<Dtype>("ContrastiveLossLayer", layer, bottoms, tops));
    // Caffe's Forward_cpu and Backward_cpu in double.
    const double margin = legacy ? 1.5 : 1.0;
    double sum = 0;
    std::vector<Dtype> want_a(num * channels), want_b(num * channels);
    int inside = 0, outside = 0;
    for (int n = 0; n < num; ++n) {
      double d2 = 0;
      for (int c = 0; c < channels; ++c) {
        const double d = double(a.cpu_data()[n * channels + c]) - double(b.cpu_data()[n * channels + c]);
        d2 += d * d;
      }
      const double alpha = loss_weight / double(num);
      double factor = alpha;
      if (static_cast<int>(labels[n])) {
        sum += d2;
      } else {
        const double dist = std::sqrt(d2);
        const double mdist = legacy ? margin - d2 : margin - dist;
        sum += legacy ? std::max(mdist, 0.0) : std::max(mdist, 0.0) * std::max(mdist, 0.0);
        factor = mdist > 0 ? (legacy ? -alpha : -alpha * mdist / (dist + 1e-4)) : 0;
        (mdist > 0 ? inside : outside) += 1;
      }
      for (int c = 0; c < channels; ++c) {
        const double d = double(a.cpu_data()[n * channels + c]) - double(b.cpu_data()[n * channels + c]);
        want_a[n * channels + c] = Dtype(factor * d);
        want_b[n * channels + c] = Dtype(-factor * d);
      }
    }
    ASSERT_GT(inside, 0) << "a dissimilar pair inside the margin";
    ASSERT_GT(outside, 0) << "a dissimilar pair outside the margin";
    EXPECT_NEAR(loss.cpu_data()[0], sum / num / 2, 16 * this->kEps * (1 + sum));
    fill_diff(b, 92);
    const std::vector<Dtype> b_diff_before(b.cpu_diff(), b.cpu_diff() + b.count());
    ASSERT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("ContrastiveLossLayer", &layer, tops,
                                                                 std::vector<bool>{true, false, false}, bottoms));
    this->expect_near(a.cpu_diff(), want_a, "bottom 0 diff");
    for (int i = 0; i < b.count(); ++i) ASSERT_EQ(b.cpu_diff()[i], b_diff_before[i]) << "bottom 1 not propagated";
    ASSERT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("ContrastiveLossLayer", &layer, tops,
                                                                 std::vector<bool>{true, true, false}, bottoms));
    this->expect_near(a.cpu_diff(), want_a, "bottom 0 diff");
    this->expect_near(b.cpu_diff(), want_b, "bottom 1 diff");
  }
}

// LSTMUnit over 3 instances of 5 hidden units, one sequence start (cont 0) among them: C, H
// and X_acts_ as Caffe's CPU code computes them (1 / (1 + e^-x), 2 sigmoid(2x) - 1), and the
// gradients to c_prev and X of its Backward_cpu; backward to the indicators declined.
TYPED_TEST(LayerGlue, LSTMUnitAsCaffesCpuCode) {
  using Dtype = TypeParam;
  const int n = 3, h = 5;
  Blob<Dtype> c_prev(std::vector<int>{1, n, h}), x(std::vector<int>{1, n, 4 * h}), cont(std::vector<int>{1, n});
  Blob<Dtype> c(std::vector<int>{1, n, h}), hidden(std::vector<int>{1, n, h});
  fill(c_prev, 100, false);
  fill(x, 101, false);
  const Dtype indicators[n] = {1, 0, 1};
  std::copy(indicators, indicators + n, cont.mutable_cpu_data());
  caffe::LSTMUnitLayer<Dtype> layer(c_prev);
  const std::vector<Blob<Dtype>*> bottoms{&c_prev, &x, &cont}, tops{&c, &hidden};
  ASSERT_TRUE(forward<Dtype>("LSTMUnitLayer", layer, bottoms, tops));
  const auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  const auto tanh = [&](double v) { return 2 * sigmoid(2 * v) - 1; };
  std::vector<double> acts(4 * n * h);
  std::vector<Dtype> want_c(n * h), want_h(n * h), want_acts(4 * n * h);
  for (int j = 0; j < 4 * n * h; ++j) {
    acts[j] = j % (4 * h) < 3 * h ? sigmoid(x.cpu_data()[j]) : tanh(x.cpu_data()[j]);
    want_acts[j] = Dtype(acts[j]);
  }
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < h; ++d) {
      const double* gate = acts.data() + 4 * h * i;
      const double cell = indicators[i] * gate[h + d] * c_prev.cpu_data()[i * h + d] + gate[d] * gate[3 * h + d];
      want_c[i * h + d] = Dtype(cell);
      want_h[i * h + d] = Dtype(gate[2 * h + d] * tanh(cell));
    }
  }
  this->expect_near(layer.acts().cpu_data(), want_acts, "X_acts_");
  this->expect_near(c.cpu_data(), want_c, "C");
  this->expect_near(hidden.cpu_data(), want_h, "H");
  fill_diff(c, 102);
  fill_diff(hidden, 103);
  std::vector<Dtype> want_c_prev(n * h), want_x(4 * n * h);
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < h; ++d) {
      const double* gate = acts.data() + 4 * h * i;
      const int at = i * h + d;
      const double tanh_c = tanh(c.cpu_data()[at]);
      const double h_diff = hidden.cpu_diff()[at];
      const double c_term = c.cpu_diff()[at] + h_diff * gate[2 * h + d] * (1 - tanh_c * tanh_c);
      const double gate_diff[4] = {c_term * gate[3 * h + d], indicators[i] * c_term * c_prev.cpu_data()[at],
                                   h_diff * tanh_c, c_term * gate[d]};
      want_c_prev[at] = Dtype(indicators[i] * c_term * gate[h + d]);
      for (int g = 0; g < 4; ++g) {
        const double act = gate[g * h + d];
        want_x[4 * h * i + g * h + d] = Dtype(gate_diff[g] * (g < 3 ? act * (1 - act) : 1 - act * act));
      }
    }
  }
  ASSERT_TRUE(blobrt_caffe_portable::backward_on_device<Dtype>("LSTMUnitLayer", &layer, tops,
                                                               std::vector<bool>{true, true, false}, bottoms));
  this->expect_near(c_prev.cpu_diff(), want_c_prev, "c_prev diff");
  this->expect_near(x.cpu_diff(), want_x, "X diff");
  EXPECT_FALSE(blobrt_caffe_portable::backward_on_device<Dtype>("LSTMUnitLayer", &layer, tops,
                                                                std::vector<bool>{true, true, true}, bottoms));
}

}  // namespace
