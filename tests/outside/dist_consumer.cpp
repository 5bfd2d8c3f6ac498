// A program that uses an installed libblobrt-dist (tests/outside/outside_in_test.py): each rank's
// diff holds its rank + 1; the summed diff is the same on every rank.
#include <blobrt/dist/communicator.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  blobrt::dist::MpiSession session(&argc, &argv);
  blobrt::dist::Communicator comm;
  blobrt::Blob<float> param({4, 5});
  float* diff = param.mutable_cpu_diff();
  for (int i = 0; i < param.count(); ++i) diff[i] = static_cast<float>(comm.rank() + 1);
  comm.allreduce_diffs({&param});
  const int expected = comm.size() * (comm.size() + 1) / 2;
  const bool right = param.cpu_diff()[0] == expected && param.cpu_diff()[param.count() - 1] == expected;
  std::printf("dist consumer rank %d of %d: sum %s\n", comm.rank(), comm.size(), right ? "right" : "WRONG");
  return right ? 0 : 1;
}
