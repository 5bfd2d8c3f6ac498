// blobrt-bench-busy's worker (bench_busy.hpp): one workload on Caffe's CPU math as a Caffe
// program calls it (caffe_cpu_gemm and the Caffe-style layers of examples/caffe_style run on
// blobrt::host_math_device(), the BLIS device where it is installed), timed call by call
// at the driver's request.
//   gemm_MxNxK_XY  one caffe_cpu_gemm (X, Y: N or T for op(A), op(B))
//   lenet_step_B   one training step of LeNet (conv 20x5x5, max pool 2, conv 50x5x5, max
//                  pool 2, InnerProduct 800->500, ReLU, InnerProduct 500->10,
//                  SoftmaxWithLoss; batch B): forward, clearing the parameter diffs,
//                  backward, SGD (diff *= lr; Blob::Update), as `caffe time` times it
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "bench_busy.hpp"
#include "blobrt/caffe_compat.hpp"
#include "blobrt/runtime.hpp"
#include "caffe_style/layers.hpp"

namespace blobrt::bench::busy {

std::vector<GemmCase> gemm_cases(bool smoke) {
  std::vector<GemmCase> all = {
      {"gemm_500x64x800_NN", false, false, 500, 64, 800, "issue 48's shape"},
      {"gemm_64x500x800_NT", false, true, 64, 500, 800, "ip1 forward"},
      {"gemm_500x800x64_TN", true, false, 500, 800, 64, "ip1 weight gradient"},
      {"gemm_64x800x500_NN", false, false, 64, 800, 500, "ip1 bottom gradient"},
      {"gemm_50x64x500_NN", false, false, 50, 64, 500, "conv2 forward, per image"},
      {"gemm_50x500x64_NT", false, true, 50, 500, 64, "conv2 weight gradient, per image"},
      {"gemm_500x64x50_TN", true, false, 500, 64, 50, "conv2 column gradient, per image"},
  };
  if (smoke) all.resize(1);
  return all;
}

std::string lenet_name(int batch) { return "lenet_step_" + std::to_string(batch); }

namespace {

using caffe::Blob;
using std::vector;

// Max pooling, kernel 2, stride 2, on even sizes (LeNet's pools), as Caffe's pooling layer
// computes it: the top's gradient goes to the first maximum of each window.
class MaxPool2 : public caffe_style::Layer<float> {
 public:
  void Reshape(const vector<Blob<float>*>& bottom, const vector<Blob<float>*>& top) override {
    const vector<int>& s = bottom[0]->shape();
    top[0]->Reshape(vector<int>{s[0], s[1], s[2] / 2, s[3] / 2});
    argmax_.resize(static_cast<std::size_t>(top[0]->count()));
  }

 protected:
  void Forward_cpu(const vector<Blob<float>*>& bottom, const vector<Blob<float>*>& top) override {
    const int planes = bottom[0]->shape(0) * bottom[0]->shape(1), h = bottom[0]->shape(2), w = bottom[0]->shape(3);
    const float* x = bottom[0]->cpu_data();
    float* y = top[0]->mutable_cpu_data();
    std::size_t out = 0;
    for (int p = 0; p < planes; ++p) {
      for (int i = 0; i < h; i += 2) {
        for (int j = 0; j < w; j += 2, ++out) {
          int best = (p * h + i) * w + j;
          for (int at : {best + 1, best + w, best + w + 1}) {
            if (x[at] > x[best]) best = at;
          }
          y[out] = x[best];
          argmax_[out] = best;
        }
      }
    }
  }
  void Backward_cpu(const vector<Blob<float>*>& top, const vector<bool>& down,
                    const vector<Blob<float>*>& bottom) override {
    if (!down[0]) return;
    float* dx = bottom[0]->mutable_cpu_diff();
    caffe::caffe_set<float>(bottom[0]->count(), 0.f, dx);
    const float* dy = top[0]->cpu_diff();
    for (std::size_t o = 0; o < argmax_.size(); ++o) dx[argmax_[o]] += dy[o];
  }

 private:
  vector<int> argmax_;
};

// LeNet on the Caffe-style layers (the file's header), one step per call.
class LeNet {
 public:
  explicit LeNet(int batch)
      : conv1_(20, 1, 5, 0, 0.1f), conv2_(50, 20, 5, 0, 0.05f), ip1_(500, 800, 0.05f), ip2_(10, 500, 0.05f),
        data_(vector<int>{batch, 1, 28, 28}), label_(vector<int>{batch}) {
    caffe::caffe_rng_uniform<float>(data_.count(), 0.f, 1.f, data_.mutable_cpu_data());
    for (int i = 0; i < batch; ++i) label_.mutable_cpu_data()[i] = static_cast<float>(i % 10);
    for (caffe_style::Layer<float>* layer : {static_cast<caffe_style::Layer<float>*>(&conv1_),
                                             static_cast<caffe_style::Layer<float>*>(&conv2_),
                                             static_cast<caffe_style::Layer<float>*>(&ip1_),
                                             static_cast<caffe_style::Layer<float>*>(&ip2_)}) {
      for (auto& blob : layer->blobs()) params_.push_back(blob.get());
    }
  }
  void step() {
    conv1_.Forward({&data_}, {&c1_});
    pool1_.Forward({&c1_}, {&p1_});
    conv2_.Forward({&p1_}, {&c2_});
    pool2_.Forward({&c2_}, {&p2_});
    ip1_.Forward({&p2_}, {&h1_});
    relu_.Forward({&h1_}, {&h1r_});
    ip2_.Forward({&h1r_}, {&scores_});
    loss_layer_.Forward({&scores_, &label_}, {&loss_});
    for (Blob<float>* p : params_) p->scale_diff(0);
    loss_.mutable_cpu_diff()[0] = 1;  // the loss weight
    loss_layer_.Backward({&loss_}, {true, false}, {&scores_, &label_});
    ip2_.Backward({&scores_}, {true}, {&h1r_});
    relu_.Backward({&h1r_}, {true}, {&h1_});
    ip1_.Backward({&h1_}, {true}, {&p2_});
    pool2_.Backward({&p2_}, {true}, {&c2_});
    conv2_.Backward({&c2_}, {true}, {&p1_});
    pool1_.Backward({&p1_}, {true}, {&c1_});
    conv1_.Backward({&c1_}, {false}, {&data_});
    for (Blob<float>* p : params_) {
      p->scale_diff(0.01f);
      p->Update();
    }
  }

 private:
  caffe_style::ConvolutionLayer<float> conv1_, conv2_;
  MaxPool2 pool1_, pool2_;
  caffe_style::InnerProductLayer<float> ip1_, ip2_;
  caffe_style::ReLULayer<float> relu_;
  caffe_style::SoftmaxWithLossLayer<float> loss_layer_;
  Blob<float> data_, label_, c1_, p1_, c2_, p2_, h1_, h1r_, scores_, loss_;
  vector<Blob<float>*> params_;
};

// One gemm on buffers of its own, filled with values of both signs.
std::function<void()> gemm_workload(const GemmCase& g) {
  struct Buffers {
    vector<float> a, b, c;
  };
  auto buffers = std::make_shared<Buffers>();
  buffers->a.resize(static_cast<std::size_t>(g.m) * g.k);
  buffers->b.resize(static_cast<std::size_t>(g.k) * g.n);
  buffers->c.resize(static_cast<std::size_t>(g.m) * g.n);
  for (std::size_t i = 0; i < buffers->a.size(); ++i) buffers->a[i] = static_cast<float>(i % 17) * 0.0625f - 0.5f;
  for (std::size_t i = 0; i < buffers->b.size(); ++i) buffers->b[i] = static_cast<float>(i % 13) * 0.0625f - 0.375f;
  return [g, buffers] {
    caffe::caffe_cpu_gemm<float>(g.trans_a ? caffe::CblasTrans : caffe::CblasNoTrans,
                                 g.trans_b ? caffe::CblasTrans : caffe::CblasNoTrans, g.m,
                                 g.n, g.k, 1.f, buffers->a.data(), buffers->b.data(), 0.f, buffers->c.data());
  };
}

bool read_all(int fd, void* data, std::size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t got = ::read(fd, p, size);
    if (got <= 0) return false;
    p += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t put = ::write(fd, p, size);
    if (put <= 0) return false;
    p += put;
    size -= static_cast<std::size_t>(put);
  }
  return true;
}

}  // namespace

int serve(const std::string& workload) {
  std::function<void()> once;
  try {
    caffe::Caffe::set_mode(caffe::Caffe::CPU);
    caffe::Caffe::set_random_seed(1701);
    for (const GemmCase& g : gemm_cases(false)) {
      if (g.name == workload) once = gemm_workload(g);
    }
    for (int batch : {4, 64}) {
      if (workload == lenet_name(batch)) {
        auto net = std::make_shared<LeNet>(batch);
        once = [net] { net->step(); };
      }
    }
    if (!once) {
      std::fprintf(stderr, "blobrt-bench-busy worker: no workload '%s'\n", workload.c_str());
      return 2;
    }
    for (int i = 0; i < 3; ++i) once();  // first touches, BLIS's packing buffers, helper threads
    char name[kNameBytes] = {};
    std::snprintf(name, sizeof name, "%s", blobrt::host_math_device()->description().id().c_str());
    if (!write_all(1, name, sizeof name)) return 1;
    for (std::int64_t count; read_all(0, &count, sizeof count);) {
      const auto start = std::chrono::steady_clock::now();
      for (std::int64_t i = 0; i < count; ++i) once();
      const std::int64_t ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
      if (!write_all(1, &ns, sizeof ns)) return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "blobrt-bench-busy worker (%s): %s\n", workload.c_str(), e.what());
    const std::int64_t failed = -1;
    write_all(1, &failed, sizeof failed);
    return 1;
  }
}

}  // namespace blobrt::bench::busy
