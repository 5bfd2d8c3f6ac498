// main() for the caffe_peer program: glog initialised as a Caffe program does it; the
// backend comes from BLOBRT_BACKEND (meson runs the program once per backend).
#include <glog/logging.h>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  google::InitGoogleLogging(argv[0]);
  return RUN_ALL_TESTS();
}
