// LSTMUnitLayer's GPU methods in blobrt's operations, as lstm_unit_layer.cu computes them.
// X (1 x N x 4H) holds each instance's gates i, f, o, g side by side; copy_rows moves a gate
// between that layout and a contiguous N x H array, where the element-wise codes work.
// Forward: X_acts_ the sigmoid of X, its g gates the tanh (LSTMActsForward); then
// c = cont[n] f c_prev + i g (cont by channel_affine, one factor per instance) and
// h = o tanh(c) (LSTMUnitForward). Backward: LSTMUnitBackward's gate gradients into X_acts_'s
// diff and c_prev's, then LSTMActsBackward's sigmoid and tanh derivatives into X's diff.
// The products round in the .cu's order; the activations are blobrt's sigmoid and tanh codes
// (Caffe's Sigmoid and TanH layers' forms), where the .cu writes 1 / (1 + e^-x) and
// 2 sigmoid(2x) - 1: the same functions, within a few epsilon absolute.
//
// The gates, contiguous, and two temporaries live in one workspace of 6 N H elements, the
// calling thread's scratch (shared by every layer: nothing in it outlives a call; backward
// gathers the gates again from X_acts_). More than INT_MAX elements run the CPU code.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_LSTM_UNIT_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_LSTM_UNIT_LAYER_HPP

#include <cstdint>
#include <limits>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>
#include <blobrt/caffe/portable/scratch.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct LSTMUnitMethods : caffe::LSTMUnitLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::LSTMUnitLayer<Dtype>;
  using Self = LSTMUnitMethods;
  using Op = blobrt::ElementwiseOp;

  // The workspace's parts, in elements of N x H: the gates i, f, o, g, then t1 and t2.
  enum Part { kI = 0, kF = 1, kO = 2, kG = 3, kT1 = 4, kT2 = 5, kParts = 6 };

  struct Work {
    std::int64_t n, h;           // instances, hidden units
    void* w;                     // the workspace (handle)
    std::int64_t at(Part part) const { return part * n * h; }
  };

  // The workspace (scratch slot 0), or null where its size is past what scratch takes.
  static void* workspace(std::int64_t nh) {
    if (kParts * nh > std::numeric_limits<int>::max()) return nullptr;
    return scratch<Dtype>(0, static_cast<int>(kParts * nh));
  }

  static void ew(Op op, const Work& k, const void* a, std::int64_t a_offset, const void* b, std::int64_t b_offset,
                 void* y, std::int64_t y_offset) {
    device().elementwise(precision_of<Dtype>(), op, k.n * k.h, 0.0, 0.0, a, a_offset, b, b_offset, y, y_offset);
  }
  // Gate `gate` (0 to 3) of the 4H-wide rows of x into part `to` of the workspace, or back.
  static void gather(const Work& k, const void* x, int gate, Part to) {
    device().copy_rows(precision_of<Dtype>(), k.n, k.h, x, gate * k.h, 4 * k.h, k.w, k.at(to), k.h);
  }
  static void scatter(const Work& k, Part from, void* x, int gate) {
    device().copy_rows(precision_of<Dtype>(), k.n, k.h, k.w, k.at(from), k.h, x, gate * k.h, 4 * k.h);
  }
  // y = cont[n] * a along each instance's row of H.
  static void by_cont(const Work& k, const void* cont, const void* a, std::int64_t a_offset, void* y,
                      std::int64_t y_offset) {
    device().channel_affine(precision_of<Dtype>(), 1, k.n, k.h, a, a_offset, cont, 0, nullptr, 0, y, y_offset);
  }

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const auto& top = blobs<Dtype>(top_erased);
    const std::int64_t h = l.*(&Self::hidden_dim_), n = h == 0 ? 0 : top[1]->count() / h;
    void* memory = workspace(n * h);
    if (!memory) return false;  // too large for the scratch: the CPU code
    caffe::Blob<Dtype>& acts_blob = l.*(&Self::X_acts_);
    Dtype* acts = acts_blob.mutable_gpu_data();
    Dtype* c = top[0]->mutable_gpu_data();
    Dtype* hidden = top[1]->mutable_gpu_data();
    if (n * h == 0) return true;
    const Work k{n, h, memory};
    void* w = k.w;
    const Dtype* x = bottom[1]->gpu_data();
    // LSTMActsForward: sigmoid everywhere, then the g gates' tanh in their place.
    device().elementwise(precision_of<Dtype>(), Op::kSigmoid, bottom[1]->count(), 0.0, 0.0, x, 0, nullptr, 0, acts, 0);
    gather(k, x, 3, kG);
    ew(Op::kTanh, k, w, k.at(kG), nullptr, 0, w, k.at(kG));
    scatter(k, kG, acts, 3);
    gather(k, acts, 0, kI);
    gather(k, acts, 1, kF);
    gather(k, acts, 2, kO);
    // LSTMUnitForward: c = cont f c_prev + i g, h = o tanh(c).
    by_cont(k, bottom[2]->gpu_data(), w, k.at(kF), w, k.at(kT1));
    ew(Op::kMul, k, w, k.at(kT1), bottom[0]->gpu_data(), 0, w, k.at(kT1));
    ew(Op::kMul, k, w, k.at(kI), w, k.at(kG), w, k.at(kT2));
    ew(Op::kAdd, k, w, k.at(kT1), w, k.at(kT2), c, 0);
    ew(Op::kTanh, k, c, 0, nullptr, 0, w, k.at(kT1));
    ew(Op::kMul, k, w, k.at(kO), w, k.at(kT1), hidden, 0);
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    // To the sequence indicators: the layer's own code fails as Caffe's CHECK does.
    if (propagate_down.size() > 2 && propagate_down[2]) return false;
    const bool wanted = (!propagate_down.empty() && propagate_down[0]) || (propagate_down.size() > 1 && propagate_down[1]);
    if (!wanted) return true;
    Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    const auto& top = blobs<Dtype>(top_erased);
    const std::int64_t h = l.*(&Self::hidden_dim_), n = h == 0 ? 0 : top[1]->count() / h;
    void* memory = workspace(n * h);
    if (!memory) return false;
    caffe::Blob<Dtype>& acts_blob = l.*(&Self::X_acts_);
    if (n * h == 0) return true;
    const Work k{n, h, memory};
    void* w = k.w;
    const Dtype* acts = acts_blob.gpu_data();
    Dtype* acts_diff = acts_blob.mutable_gpu_diff();
    const Dtype* c_prev = bottom[0]->gpu_data();
    const Dtype* cont = bottom[2]->gpu_data();
    const Dtype* c_diff = top[0]->gpu_diff();
    const Dtype* h_diff = top[1]->gpu_diff();
    for (int gate = 0; gate < 4; ++gate) gather(k, acts, gate, static_cast<Part>(gate));
    // LSTMUnitBackward: c_term_diff = C_diff + H_diff o (1 - tanh(c)^2) in t2, tanh(c) in t1.
    ew(Op::kTanh, k, top[0]->gpu_data(), 0, nullptr, 0, w, k.at(kT1));
    ew(Op::kMul, k, h_diff, 0, w, k.at(kO), w, k.at(kT2));
    ew(Op::kTanhBackward, k, w, k.at(kT1), w, k.at(kT2), w, k.at(kT2));
    ew(Op::kAdd, k, c_diff, 0, w, k.at(kT2), w, k.at(kT2));
    ew(Op::kMul, k, h_diff, 0, w, k.at(kT1), w, k.at(kT1));  // o_diff = H_diff tanh(c)
    scatter(k, kT1, acts_diff, 2);
    ew(Op::kMul, k, w, k.at(kT2), w, k.at(kG), w, k.at(kT1));  // i_diff = c_term_diff g
    scatter(k, kT1, acts_diff, 0);
    ew(Op::kMul, k, w, k.at(kT2), w, k.at(kI), w, k.at(kT1));  // g_diff = c_term_diff i
    scatter(k, kT1, acts_diff, 3);
    by_cont(k, cont, w, k.at(kT2), w, k.at(kT2));  // cont c_term_diff
    ew(Op::kMul, k, w, k.at(kT2), c_prev, 0, w, k.at(kT1));  // f_diff = cont c_term_diff c_prev
    scatter(k, kT1, acts_diff, 1);
    ew(Op::kMul, k, w, k.at(kT2), w, k.at(kF), bottom[0]->mutable_gpu_diff(), 0);  // c_prev_diff
    // LSTMActsBackward: the sigmoid's derivative everywhere, then the g gates' tanh's.
    Dtype* x_diff = bottom[1]->mutable_gpu_diff();
    device().elementwise(precision_of<Dtype>(), Op::kSigmoidBackward, bottom[1]->count(), 0.0, 0.0, acts, 0,
                         acts_diff, 0, x_diff, 0);
    gather(k, acts_diff, 3, kT1);
    ew(Op::kTanhBackward, k, w, k.at(kG), w, k.at(kT1), w, k.at(kT1));
    scatter(k, kT1, x_diff, 3);
    return true;
  }
};

namespace {
const bool lstm_unit_layer_registered = register_both<LSTMUnitMethods>("LSTMUnitLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_LSTM_UNIT_LAYER_HPP
