// What the caffe_peer suites share: Caffe-style typed fixtures running each test as float
// and double, in Caffe::CPU and Caffe::GPU mode, on the backend BLOBRT_BACKEND selects
// (meson runs the program once per backend). The includes are Caffe's own include lines:
// the one-line headers under include/caffe/ bring in the generated caffe.pb.h (this
// directory's caffe.proto, Caffe's wire format), glog and <blobrt/caffe_compat.hpp>.
#ifndef BLOBRT_TESTS_CAFFE_PEER_PEER_TEST_HPP
#define BLOBRT_TESTS_CAFFE_PEER_PEER_TEST_HPP

#include <gtest/gtest.h>

#include <type_traits>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/syncedmem.hpp"
#include "caffe/util/math_functions.hpp"

// The compat header saw the generated messages: caffe::BlobProto is the generated class,
// not blobrt's message of the same shape.
static_assert(!std::is_same<caffe::BlobProto, blobrt::BlobProto>::value,
              "caffe::BlobProto must be the generated caffe.pb.h message");
static_assert(std::is_base_of<google::protobuf::Message, caffe::FillerParameter>::value,
              "caffe::FillerParameter comes from the generated caffe.pb.h");

namespace caffe_peer {

using caffe::Caffe;

template <typename T, Caffe::Brew kMode>
struct InMode {
  using Dtype = T;
  static constexpr Caffe::Brew mode = kMode;
};

using TypesAndModes = ::testing::Types<InMode<float, Caffe::CPU>, InMode<double, Caffe::CPU>,
                                       InMode<float, Caffe::GPU>, InMode<double, Caffe::GPU>>;
using Dtypes = ::testing::Types<float, double>;

// Each test starts from the same seed (as Caffe's test main does) in the fixture's mode.
template <typename Param>
class PeerTest : public ::testing::Test {
 protected:
  using Dtype = typename Param::Dtype;
  static constexpr bool kGpu = Param::mode == Caffe::GPU;
  void SetUp() override {
    Caffe::set_mode(Param::mode);
    Caffe::set_random_seed(1701);
  }
  void TearDown() override { Caffe::set_mode(Caffe::CPU); }
};

}  // namespace caffe_peer

#endif
