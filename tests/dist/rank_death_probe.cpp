// Under mpirun: every rank reduces in a loop, and the rank named by the first argument
// kills itself (SIGKILL, no chance to clean up) after the first reduction. The others are
// then inside or entering a collective with it: the job must end, not hang (dist_rank_death).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/dist/communicator.hpp"

int main(int argc, char** argv) {
  blobrt::dist::MpiSession mpi(&argc, &argv);
  const int victim = argc > 1 ? std::atoi(argv[1]) : 1;
  blobrt::dist::Communicator comm;
  blobrt::Blob<float> w(std::vector<int>{1 << 16});
  for (int step = 0; step < 100000; ++step) {
    w.mutable_cpu_diff()[0] = 1.0f;
    comm.allreduce_diffs({&w});
    if (step == 0 && comm.rank() == victim) {
      std::fprintf(stderr, "rank %d: killing myself after the first reduction\n", comm.rank());
      std::raise(SIGKILL);
    }
  }
  std::printf("rank %d: finished all steps, which should not happen\n", comm.rank());
  return 0;
}
