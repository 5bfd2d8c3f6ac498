#include "bucket_check.hpp"

#include <cerrno>
#include <cstdlib>
#include <map>
#include <sstream>

#include "allgather_text.hpp"
#include "blobrt/dist/communicator.hpp"
#include "blobrt/environment.hpp"
#include "blobrt/error.hpp"
#include "mpi_call.hpp"

namespace blobrt::dist {
namespace {

// What follows "rank 3 has" / "ranks 0, 1 have".
std::string describe(const BucketSetting& s) {
  return s.error.empty() ? std::to_string(s.bytes) + " bytes (" + s.source + ")" : "an invalid setting: " + s.error;
}

}  // namespace

BucketSetting bucket_setting_from_environment() {
  // Read as libblobrt reads its variables: ignored in a setuid/setgid process.
  const std::string value = blobrt::environment::get("BLOBRT_DIST_BUCKET_BYTES").value_or("");
  if (value.empty()) return BucketSetting{kDefaultBucketBytes, "default", ""};
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (errno || *end || v == 0 || value[0] == '-') {
    return BucketSetting{0, "BLOBRT_DIST_BUCKET_BYTES",
                         "BLOBRT_DIST_BUCKET_BYTES='" + value + "' is not a positive number of bytes"};
  }
  return BucketSetting{static_cast<std::size_t>(v), "BLOBRT_DIST_BUCKET_BYTES", ""};
}

std::string bucket_mismatch_message(const std::vector<BucketSetting>& settings) {
  // Ranks grouped by what they have, in order of their first rank.
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  std::map<std::string, std::size_t> index;
  bool any_error = false;
  for (std::size_t r = 0; r < settings.size(); ++r) {
    const std::string text = describe(settings[r]);
    any_error = any_error || !settings[r].error.empty();
    auto [it, inserted] = index.emplace(text, groups.size());
    if (inserted) groups.push_back({text, {}});
    groups[it->second].second.push_back(static_cast<int>(r));
  }
  if (groups.size() <= 1 && !any_error) return "";
  std::ostringstream s;
  s << "blobrt::dist::Communicator: ";
  if (groups.size() == 1) {
    s << settings[0].error << " (on every rank)";
    return s.str();
  }
  s << "the bucket size must be the same on every rank (BLOBRT_DIST_BUCKET_BYTES or "
       "Options::bucket_bytes; each bucket is one collective, which all ranks must make alike), but ";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& [text, ranks] = groups[g];
    s << (g ? "; " : "") << ranks_text(ranks) << (ranks.size() == 1 ? " has " : " have ") << text;
  }
  return s.str();
}

void check_same_bucket_bytes(MPI_Comm comm, const BucketSetting& mine) {
  int ranks = 1;
  mpi_call("MPI_Comm_size", MPI_Comm_size(comm, &ranks));
  // Sizes first (0 for an invalid setting): one small allgather on the common path.
  const unsigned long long my_bytes = mine.error.empty() ? mine.bytes : 0;
  std::vector<unsigned long long> sizes(static_cast<std::size_t>(ranks));
  mpi_call("MPI_Allgather",
           MPI_Allgather(&my_bytes, 1, MPI_UNSIGNED_LONG_LONG, sizes.data(), 1, MPI_UNSIGNED_LONG_LONG, comm));
  bool same = true;
  for (unsigned long long s : sizes) same = same && s == sizes[0] && s != 0;
  if (same) return;

  // Rare path: every rank's setting in words, so every rank throws the same message.
  const std::vector<std::string> texts =
      allgather_text(comm, std::to_string(mine.bytes) + '\n' + mine.source + '\n' + mine.error);
  std::vector<BucketSetting> settings;
  for (const std::string& text : texts) {
    const std::size_t a = text.find('\n'), b = text.find('\n', a + 1);
    settings.push_back(BucketSetting{static_cast<std::size_t>(std::stoull(text.substr(0, a))),
                                     text.substr(a + 1, b - a - 1), text.substr(b + 1)});
  }
  std::string message = bucket_mismatch_message(settings);
  if (message.empty()) message = "blobrt::dist::Communicator: the bucket sizes differ across ranks";
  detail::fail(message);
}

}  // namespace blobrt::dist
