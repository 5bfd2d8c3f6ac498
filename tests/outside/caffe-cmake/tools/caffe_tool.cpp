// A Caffe tool: GlobalInit parses its flag, a layer of the `caffe` library runs, and the
// tree's own io.hpp (a fork's API) is the one its files see.
#include <cstdio>

#include "caffe/common.hpp"
#include "caffe/inner_product.hpp"
#include "caffe/util/io.hpp"

DEFINE_int32(rows, 2, "rows of the input");

int main(int argc, char** argv) {
  caffe::GlobalInit(&argc, &argv);
  caffe::Blob<float> bottom(FLAGS_rows, 3, 1, 1), weight(4, 3, 1, 1), top;
  for (int i = 0; i < bottom.count(); ++i) bottom.mutable_cpu_data()[i] = static_cast<float>(i + 1);
  for (int i = 0; i < weight.count(); ++i) weight.mutable_cpu_data()[i] = 1.f;
  caffe::InnerProductForward(bottom, weight, &top);
  std::printf("device=%s top=(%d, %d) asum=%g %s\n", blobrt::current_device_id().c_str(), top.shape(0), top.shape(1),
              top.asum_data(), caffe::ForkOnlyLabelName(7).c_str());
  return 0;
}
