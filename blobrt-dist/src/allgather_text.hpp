// Every rank's string, on every rank: the rare path of the cross-rank checks (list_check,
// bucket_check), taken only once a digest has shown that the ranks differ, so that every
// rank can throw the same message.
#ifndef BLOBRT_DIST_ALLGATHER_TEXT_HPP
#define BLOBRT_DIST_ALLGATHER_TEXT_HPP

#include <mpi.h>

#include <string>
#include <vector>

namespace blobrt::dist {

// Collective over `comm`: element r of the result is rank r's `mine`.
std::vector<std::string> allgather_text(MPI_Comm comm, const std::string& mine);

// "rank 3" or "ranks 0, 1, 2".
std::string ranks_text(const std::vector<int>& ranks);

}  // namespace blobrt::dist

#endif
