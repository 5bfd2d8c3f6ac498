// MPI return codes as blobrt::Error. (On the default communicator error handler MPI
// aborts the job before returning an error; a program that sets MPI_ERRORS_RETURN gets
// the library's own words here.)
#ifndef BLOBRT_DIST_MPI_CALL_HPP
#define BLOBRT_DIST_MPI_CALL_HPP

#include <mpi.h>

#include <cstddef>
#include <string>

#include "blobrt/error.hpp"

namespace blobrt::dist {

inline void mpi_call(const char* what, int code) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  detail::fail("blobrt::dist: ", what, " failed: ", length ? std::string(text, length) : "error " + std::to_string(code));
}

// MPI counts are int: longer in-place operations go in pieces of at most 2^30 elements.
constexpr std::size_t kMaxMpiCount = std::size_t{1} << 30;

}  // namespace blobrt::dist

#endif
