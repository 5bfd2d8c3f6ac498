// libblobrt-dist's objects made after MPI_Finalize (issue 48): a blobrt::Error naming MPI's
// state, as MpiSession already raised, where Open MPI would abort the process inside the
// library ("called after MPI_FINALIZE was invoked"). Its own main: MPI is initialised and
// finalised first, then every test runs (under mpirun -np 2, tests/dist/meson.build).
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/dist/communicator.hpp"
#include "blobrt/dist/layerwise.hpp"
#include "blobrt/error.hpp"

namespace blobrt::dist {
namespace {

void expect_finalised_error(const std::string& text, const char* who) {
  EXPECT_NE(text.find(who), std::string::npos) << text;
  EXPECT_NE(text.find("MPI was already finalised"), std::string::npos) << text;
}

// Guards against the abort: a Communicator made after MPI_Finalize raises.
TEST(AfterFinalize, ACommunicatorIsAClearError) {
  try {
    Communicator comm;
    ADD_FAILURE() << "a Communicator was made after MPI_Finalize";
  } catch (const Error& e) {
    expect_finalised_error(e.what(), "blobrt::dist::Communicator");
  }
}

// Guards against the abort: a LayerwiseReducer made after MPI_Finalize raises.
TEST(AfterFinalize, ALayerwiseReducerIsAClearError) {
  Blob<float> w(std::vector<int>{4});
  try {
    LayerwiseReducer reducer({{&w}});
    ADD_FAILURE() << "a LayerwiseReducer was made after MPI_Finalize";
  } catch (const Error& e) {
    expect_finalised_error(e.what(), "blobrt::dist::LayerwiseReducer");
  }
}

// Guards against a regression of what already held: MpiSession says MPI cannot restart.
TEST(AfterFinalize, AnMpiSessionIsAClearError) {
  EXPECT_THROW(MpiSession(nullptr, nullptr), Error);
}

}  // namespace
}  // namespace blobrt::dist

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Finalize();
  GTEST_FLAG_SET(color, "no");
  ::testing::InitGoogleTest(&argc, argv);
  if (rank != 0) {  // rank 0 prints; the others only their failures
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
