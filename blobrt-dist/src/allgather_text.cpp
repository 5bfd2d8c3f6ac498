#include "allgather_text.hpp"

#include <sstream>

#include "mpi_call.hpp"

namespace blobrt::dist {

std::vector<std::string> allgather_text(MPI_Comm comm, const std::string& mine) {
  int ranks = 1;
  mpi_call("MPI_Comm_size", MPI_Comm_size(comm, &ranks));
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(ranks), displacements(ranks);
  mpi_call("MPI_Allgather", MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm));
  int total = 0;
  for (int r = 0; r < ranks; ++r) {
    displacements[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  mpi_call("MPI_Allgatherv", MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                                            displacements.data(), MPI_CHAR, comm));
  std::vector<std::string> texts;
  texts.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) texts.push_back(all.substr(displacements[r], lengths[r]));
  return texts;
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::ostringstream s;
  s << (ranks.size() == 1 ? "rank " : "ranks ");
  for (std::size_t i = 0; i < ranks.size(); ++i) s << (i ? ", " : "") << ranks[i];
  return s.str();
}

}  // namespace blobrt::dist
