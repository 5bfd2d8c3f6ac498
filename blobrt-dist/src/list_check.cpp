#include "list_check.hpp"

#include <cstdint>
#include <map>
#include <sstream>

#include "allgather_text.hpp"
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
  std::vector<std::vector<std::string>> lists;
  for (const std::string& text : allgather_text(comm, join(mine))) lists.push_back(split(text));
  std::string message = mismatch_message(lists, what);
  if (message.empty()) message = std::string("blobrt::dist ") + what + ": parameter list digests differ across ranks";
  detail::fail(message);
}

}  // namespace blobrt::dist
