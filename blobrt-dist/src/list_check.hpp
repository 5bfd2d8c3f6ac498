// Every rank must reduce the same parameter list: checked with one allgather of a digest,
// and only on a mismatch an allgather of the lists themselves to say what differs.
#ifndef BLOBRT_DIST_LIST_CHECK_HPP
#define BLOBRT_DIST_LIST_CHECK_HPP

#include <mpi.h>

#include <string>
#include <vector>

#include "blobrt/dist/communicator.hpp"

namespace blobrt::dist {

// "float [64 3 7 7]" per parameter.
std::vector<std::string> describe(const std::vector<ParamRef>& params);

// Throws blobrt::Error on every rank of `comm` when the ranks' lists differ, naming the
// first differing parameter and which ranks hold what. `what` names the operation.
void check_same_lists(MPI_Comm comm, const std::vector<std::string>& mine, const char* what);

// The message check_same_lists throws for these gathered lists ("" when all equal).
std::string mismatch_message(const std::vector<std::vector<std::string>>& lists, const char* what);

}  // namespace blobrt::dist

#endif
