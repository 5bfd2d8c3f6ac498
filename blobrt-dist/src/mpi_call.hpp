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

// Whether MPI can be called now: initialised and not yet finalised. Any MPI call after
// MPI_Finalize aborts the process inside the library (Open MPI: "called after MPI_FINALIZE
// was invoked"), and MPI_Initialized stays true then, so MPI_Finalized is asked too.
inline bool mpi_live() {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);  // callable at any time, before MPI_Init and after MPI_Finalize
  return initialised && !finalised;
}

// A blobrt::Error naming `who` where MPI cannot be called: not initialised, or finalised.
inline void require_mpi_live(const char* who) {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (finalised) {
    detail::fail(who, ": MPI was already finalised in this process (MPI_Finalize was called, by the program or "
                 "a library such as mpi4py); no MPI communication is possible after it, and MPI cannot be "
                 "initialised again");
  }
  if (!initialised) {
    detail::fail(who, ": MPI is not initialised; create a blobrt::dist::MpiSession (or call MPI_Init) first");
  }
}

// MPI counts are int: longer in-place operations go in pieces of at most 2^30 elements.
constexpr std::size_t kMaxMpiCount = std::size_t{1} << 30;

}  // namespace blobrt::dist

#endif
