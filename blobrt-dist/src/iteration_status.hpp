// The end of a LayerwiseReducer iteration, agreed by every rank with one MPI_Allgather of
// a few flags (docs/dist.md, "When an iteration is abandoned"): whether each rank finished
// the iteration or abandoned it, whether its reduction failed, and whether its parameters'
// sizes changed since the buckets were planned.
#ifndef BLOBRT_DIST_ITERATION_STATUS_HPP
#define BLOBRT_DIST_ITERATION_STATUS_HPP

#include <mpi.h>

#include <string>
#include <vector>

namespace blobrt::dist {

struct IterationStatus {
  bool abandoned = false;  // left before finish() (destructor, abandon())
  bool failed = false;     // a bucket's collective raised here
  bool resized = false;    // a parameter's count differs from the plan
};

struct IterationOutcome {
  std::vector<int> abandoned;  // ranks
  std::vector<int> failed;     // ranks
  bool resized = false;        // on any rank
};

// Collective over `comm` (every rank calls it once per iteration, from finish() or the
// abandon path, after all of the iteration's buckets).
IterationOutcome settle_iteration(MPI_Comm comm, IterationStatus mine);

// What finish() raises on a rank that finished where others abandoned the iteration or
// failed ("" when neither happened).
std::string others_message(const IterationOutcome& outcome, int my_rank);

}  // namespace blobrt::dist

#endif
