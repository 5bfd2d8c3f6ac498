#include "iteration_status.hpp"

#include <algorithm>

#include "allgather_text.hpp"
#include "mpi_call.hpp"

namespace blobrt::dist {

IterationOutcome settle_iteration(MPI_Comm comm, IterationStatus mine) {
  int ranks = 1;
  mpi_call("MPI_Comm_size", MPI_Comm_size(comm, &ranks));
  const int bits = (mine.abandoned ? 1 : 0) | (mine.failed ? 2 : 0) | (mine.resized ? 4 : 0);
  std::vector<int> all(static_cast<std::size_t>(ranks));
  mpi_call("MPI_Allgather", MPI_Allgather(&bits, 1, MPI_INT, all.data(), 1, MPI_INT, comm));
  IterationOutcome outcome;
  for (int r = 0; r < ranks; ++r) {
    if (all[r] & 1) outcome.abandoned.push_back(r);
    if (all[r] & 2) outcome.failed.push_back(r);
    if (all[r] & 4) outcome.resized = true;
  }
  return outcome;
}

std::string others_message(const IterationOutcome& outcome, int my_rank) {
  std::vector<int> failed;
  for (int r : outcome.failed) {
    if (r != my_rank) failed.push_back(r);
  }
  if (outcome.abandoned.empty() && failed.empty()) return "";
  std::string text = "blobrt::dist::LayerwiseReducer::finish: ";
  if (!outcome.abandoned.empty()) {
    text += ranks_text(outcome.abandoned) + " abandoned this iteration (" +
            (outcome.abandoned.size() == 1 ? "its" : "their") +
            " LayerwiseReducer was destroyed, or abandon() called, before finish(): e.g. backward threw there)";
  }
  if (!failed.empty()) {
    text += std::string(outcome.abandoned.empty() ? "" : "; ") + "the reduction failed on " + ranks_text(failed) +
            " (the error is raised there)";
  }
  return text + "; every bucket was still reduced so that no rank waits, but the diffs here are not the ranks' "
                "mean and must not be applied";
}

}  // namespace blobrt::dist
