// main() for Caffe's own tests (Caffe's test_caffe_main.cpp does the same plus device
// selection, which BLOBRT_BACKEND does here).
#include <glog/logging.h>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  google::InitGoogleLogging(argv[0]);
  return RUN_ALL_TESTS();
}
