// main() for GoogleTest suites run under mpirun: every rank runs every test, rank 0
// prints, and the exit status is non-zero on every rank if any rank failed a test. MPI is
// initialised with MPI_THREAD_SERIALIZED (what a LayerwiseReducer's communication thread
// needs), or MPI_THREAD_FUNNELED, MpiSession's default, when BLOBRT_TEST_MPI_THREAD=funneled.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>

#include "blobrt/dist/communicator.hpp"

int main(int argc, char** argv) {
  const char* level = std::getenv("BLOBRT_TEST_MPI_THREAD");
  const bool funneled = level && std::string(level) == "funneled";
  blobrt::dist::MpiSession mpi(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_SERIALIZED);
  // Plain output: mpirun forwards it through a pseudo-terminal, and colour escapes would end
  // up in meson's JUnit log.
  GTEST_FLAG_SET(color, "no");
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    // Other ranks report only failures, prefixed with their rank by the assertion text.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  if (failed && rank != 0) {
    std::fprintf(stderr, "rank %d: %d test(s) failed\n", rank, ::testing::UnitTest::GetInstance()->failed_test_count());
  }
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}
