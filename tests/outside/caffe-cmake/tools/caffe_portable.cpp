// Caffe's GPU mode in the portable build: a layer whose .cu has no kernel runs Caffe's own
// code on the device (DoubleLayer), a layer whose .cu launches kernels runs the
// implementation the device's backend registered or else its CPU code (SquareLayer), a
// solver's update runs blobrt-caffe's portable form (sgd_update_gpu), a handle offset as
// Caffe's GPU code offsets them reaches that element (an OpenCL device included), and the
// CUDA runtime calls of Caffe's .cpp files answer for the active backend's devices.
#include <cstdio>
#include <vector>

#include <blobrt/caffe/portable/gpu_methods.hpp>
#include <blobrt/caffe/portable/layer_plugin.hpp>

#include "caffe/common.hpp"
#include "caffe/layers/double_layer.hpp"
#include "caffe/layers/square_layer.hpp"
#include "caffe/util/math_functions.hpp"

namespace caffe {
template <typename Dtype>
void sgd_update_gpu(int N, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate);
}  // namespace caffe

DEFINE_bool(register_square, false, "register a device implementation of SquareLayer's forward pass");
DEFINE_string(load_layer_plugins, "", "load the Caffe-layers plugins for this kind of device memory first (\"cuda\"), "
              "as a GPU method on such a device would");

using caffe::Blob;

// A backend's forward pass of SquareLayer<float>, on the device: top = bottom * bottom.
void square_forward_on_device(void* /*layer*/, const void* bottom, const void* top) {
  const auto& b = *static_cast<const std::vector<Blob<float>*>*>(bottom);
  const auto& t = *static_cast<const std::vector<Blob<float>*>*>(top);
  t[0]->ReshapeLike(*b[0]);
  caffe::caffe_gpu_mul(b[0]->count(), b[0]->gpu_data(), b[0]->gpu_data(), t[0]->mutable_gpu_data());
}

int main(int argc, char** argv) {
  caffe::GlobalInit(&argc, &argv);
#ifndef BLOBRT_CAFFE_PORTABLE
  std::printf("not a portable build\n");
  return 1;
#else
  if (FLAGS_load_layer_plugins == "cuda") {
    std::printf("plugins loaded: %zu\n", blobrt_caffe_portable::load_layer_plugins(blobrt::NativeDeviceType::kCuda));
  }
  caffe::Caffe::set_mode(caffe::Caffe::GPU);
  if (FLAGS_register_square) {
    blobrt_caffe_portable::GpuLayerMethods methods;
    methods.forward = square_forward_on_device;
    blobrt_caffe_portable::register_gpu_layer("SquareLayer", blobrt::Precision::kFloat32,
                                              blobrt::current_device()->description().native_type, methods);
  }
  Blob<float> x(1, 1, 2, 3), y, z, history(1, 1, 2, 3);
  for (int i = 0; i < x.count(); ++i) x.mutable_cpu_data()[i] = static_cast<float>(i + 1);
  caffe::caffe_set(history.count(), 0.f, history.mutable_cpu_data());
  caffe::DoubleLayer<float> twice;
  caffe::SquareLayer<float> square;
  twice.Forward({&x}, {&y});   // y = 2x
  square.Forward({&y}, {&z});  // z = 4x^2
  caffe::caffe_gpu_set(z.count(), 1.f, z.mutable_gpu_diff());
  square.Backward({&z}, {true}, {&y});  // dy = 2y = 4x
  const float dy = y.asum_diff();
  caffe::sgd_update_gpu(y.count(), y.mutable_gpu_diff(), history.mutable_gpu_data(), 0.9f, 0.1f);  // 0.4x
  // Caffe's GPU code offsets handles (bottom_data + n * dim_), on every device.
  float tail = 0;
  caffe::caffe_gpu_asum(3, x.gpu_data() + 3, &tail);  // 4 + 5 + 6
  int count = 0, device = -1;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  CUDA_CHECK(cudaGetDevice(&device));
  std::printf("device=%s z=%g dy=%g sgd=%g offset_asum=%g cuda_devices=%d cuda_device=%d set_device(%d)='%s'\n",
              blobrt::current_device_id().c_str(), z.asum_data(), dy, y.asum_diff(), tail, count, device, count,
              cudaGetErrorString(cudaSetDevice(count)));
  for (const std::string& line : blobrt_caffe_portable::gpu_method_report()) std::printf("ran: %s\n", line.c_str());
  for (const std::string& line : blobrt_caffe_portable::layer_plugin_report()) std::printf("plugin: %s\n", line.c_str());
  return 0;
#endif
}
