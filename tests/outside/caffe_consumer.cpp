// A Caffe-style program on an installed blobrt-caffe (tests/outside/outside_in_test.py): Caffe's
// header names from the prefix, GlobalInit parsing a gflags flag, a caffe::Blob and Caffe's
// math on the active backend. No caffe.pb.h: blobrt's own BlobProto stands in.
// A CPU_ONLY build, as Caffe's Makefile.config would say (without it caffe/util/
// device_alternate.hpp brings in the CUDA headers).
#define CPU_ONLY 1

#include <cstdio>

#include "caffe/common.hpp"
#include "caffe/syncedmem.hpp"
#include "caffe/util/math_functions.hpp"

DEFINE_int32(scale, 1, "multiplies every element");

int main(int argc, char** argv) {
  caffe::GlobalInit(&argc, &argv);
  caffe::Blob<float> blob(1, 2, 3, 4);
  float* data = blob.mutable_cpu_data();
  for (int i = 0; i < blob.count(); ++i) data[i] = static_cast<float>(i * FLAGS_scale);
  caffe::caffe_scal(blob.count(), 0.5f, blob.mutable_cpu_data());
  std::printf("device=%s asum=%g argc=%d\n", blobrt::current_device_id().c_str(), blob.asum_data(), argc);
  return 0;
}
