#include "list_check.hpp"

#include <cstdint>
#include <map>
#include <sstream>

#include "blobrt/error.hpp"
#include "mpi_call.hpp"

namespace blobrt::dist {
namespace {

// FNV-1a: a digest for equality only, the lists themselves settle any doubt.
std::uint64_t digest(const std::vector<std::string>& list) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](unsigned char c) { h = (h ^ c) * 1099511628211ull; };
  for (const std::string& s : list) {
    for (char c : s) mix(static_cast<unsigned char>(c));
    mix('\n');
  }
  return h;
}

std::string join(const std::vector<std::string>& list) {
  std::string text;
  for (const std::string& s : list) text += s + '\n';
  return text;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> list;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    list.push_back(text.substr(start, end - start));
  }
  return list;
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::ostringstream s;
  s << (ranks.size() == 1 ? "rank " : "ranks ");
  for (std::size_t i = 0; i < ranks.size(); ++i) s << (i ? ", " : "") << ranks[i];
  return s.str();
}

}  // namespace

std::vector<std::string> describe(const std::vector<ParamRef>& params) {
  std::vector<std::string> list;
  list.reserve(params.size());
  for (const ParamRef& p : params) {
    std::ostringstream s;
    s << (p.is_double() ? "double [" : "float [");
    for (std::size_t i = 0; i < p.shape().size(); ++i) s << (i ? " " : "") << p.shape()[i];
    s << "]";
    list.push_back(s.str());
  }
  return list;
}

std::string mismatch_message(const std::vector<std::vector<std::string>>& lists, const char* what) {
  const std::size_t ranks = lists.size();
  std::ostringstream s;
  s << "blobrt::dist " << what << ": the parameter lists differ across the " << ranks
    << " ranks (every rank must pass the same blobs in the same order): ";
  // Parameter counts first: a missing blob shifts everything after it.
  std::map<std::size_t, std::vector<int>> by_count;
  for (std::size_t r = 0; r < ranks; ++r) by_count[lists[r].size()].push_back(static_cast<int>(r));
  if (by_count.size() > 1) {
    bool first = true;
    for (const auto& [count, who] : by_count) {
      s << (first ? "" : "; ") << ranks_text(who) << (who.size() == 1 ? " has " : " have ") << count
        << " parameters";
      first = false;
    }
  }
  std::size_t shortest = by_count.begin()->first;
  for (std::size_t i = 0; i < shortest; ++i) {
    std::map<std::string, std::vector<int>> by_value;
    for (std::size_t r = 0; r < ranks; ++r) by_value[lists[r][i]].push_back(static_cast<int>(r));
    if (by_value.size() == 1) continue;
    s << (by_count.size() > 1 ? "; first difference: " : "") << "parameter " << i << " is ";
    // Rank 0's value first, then the others.
    const std::string& reference = lists[0][i];
    s << reference << " on " << ranks_text(by_value[reference]);
    for (const auto& [value, who] : by_value) {
      if (value != reference) s << " but " << value << " on " << ranks_text(who);
    }
    return s.str();
  }
  return by_count.size() > 1 ? s.str() : "";
}

void check_same_lists(MPI_Comm comm, const std::vector<std::string>& mine, const char* what) {
  int ranks = 1;
  mpi_call("MPI_Comm_size", MPI_Comm_size(comm, &ranks));
  const std::uint64_t my_digest = digest(mine);
  std::vector<std::uint64_t> digests(ranks);
  mpi_call("MPI_Allgather", MPI_Allgather(&my_digest, 1, MPI_UINT64_T, digests.data(), 1, MPI_UINT64_T, comm));
  bool same = true;
  for (std::uint64_t d : digests) same = same && d == digests[0];
  if (same) return;

  // Rare path: gather the lists themselves, so every rank builds the same message.
  const std::string text = join(mine);
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(ranks), displacements(ranks);
  mpi_call("MPI_Allgather", MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm));
  int total = 0;
  for (int r = 0; r < ranks; ++r) {
    displacements[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  mpi_call("MPI_Allgatherv", MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(),
                                            displacements.data(), MPI_CHAR, comm));
  std::vector<std::vector<std::string>> lists;
  for (int r = 0; r < ranks; ++r) lists.push_back(split(all.substr(displacements[r], lengths[r])));
  std::string message = mismatch_message(lists, what);
  if (message.empty()) message = std::string("blobrt::dist ") + what + ": parameter list digests differ across ranks";
  detail::fail(message);
}

}  // namespace blobrt::dist
