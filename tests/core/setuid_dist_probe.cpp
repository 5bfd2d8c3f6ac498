// Prints what libblobrt-dist took from its environment, for setuid_test.py: run setuid
// root by another user, BLOBRT_DIST_NCCL (a library to load) and BLOBRT_DIST_BUCKET_BYTES
// must be ignored.
#include <cstdio>

#include "blobrt/dist/communicator.hpp"
#include "bucket_check.hpp"

int main() {
  blobrt::dist::NcclPartReport nccl = blobrt::dist::nccl_part_report();
  std::printf("nccl_path=%s\n", nccl.path.c_str());
  blobrt::dist::BucketSetting bucket = blobrt::dist::bucket_setting_from_environment();
  std::printf("bucket_bytes=%zu (%s)\n", bucket.bytes, bucket.source.c_str());
  return 0;
}
