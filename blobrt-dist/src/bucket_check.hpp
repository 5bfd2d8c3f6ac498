// Every rank must cut the fused layout into the same buckets: one collective per bucket, so
// ranks with different bucket sizes would pair collectives of different lengths (a failed
// transfer, heap corruption or a hang). The communicator's constructor checks it with one
// allgather of the size, and a difference is a blobrt::Error on every rank naming the ranks,
// their sizes and where each size came from.
#ifndef BLOBRT_DIST_BUCKET_CHECK_HPP
#define BLOBRT_DIST_BUCKET_CHECK_HPP

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

namespace blobrt::dist {

// One rank's bucket size and where it came from.
struct BucketSetting {
  std::size_t bytes = 0;  // 0 when `error` says why there is none
  std::string source;     // "Options::bucket_bytes", "BLOBRT_DIST_BUCKET_BYTES" or "default"
  std::string error;      // e.g. "BLOBRT_DIST_BUCKET_BYTES='25M' is not a positive number of bytes"
};

// BLOBRT_DIST_BUCKET_BYTES, else the default (25 MiB). Never throws: an invalid value is
// reported by check_same_bucket_bytes on every rank, so no rank leaves the others waiting.
BucketSetting bucket_setting_from_environment();

// Collective over `comm`: returns if every rank has the same valid size, else throws the
// same blobrt::Error on every rank (bucket_mismatch_message).
void check_same_bucket_bytes(MPI_Comm comm, const BucketSetting& mine);

// The message for these gathered settings ("" when all are the same and valid).
std::string bucket_mismatch_message(const std::vector<BucketSetting>& settings);

}  // namespace blobrt::dist

#endif
