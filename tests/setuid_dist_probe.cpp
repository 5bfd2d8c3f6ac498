// Prints what libblobrt-dist took from its environment, for setuid_test.py: run setuid
// root by another user, BLOBRT_DIST_NCCL (a library to load) must be ignored.
#include <cstdio>

#include "blobrt/dist/communicator.hpp"

int main() {
  blobrt::dist::NcclPartReport nccl = blobrt::dist::nccl_part_report();
  std::printf("nccl_path=%s\n", nccl.path.c_str());
  return 0;
}
