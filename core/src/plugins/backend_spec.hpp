// Parsing of what users write in the environment: BLOBRT_BACKEND ("auto", "host",
// "NAME" or "NAME:DEVICE") and colon-separated plugin path lists. Kept apart so the
// fuzzers (tests/fuzz) can reach it directly.
#ifndef BLOBRT_BACKEND_SPEC_HPP
#define BLOBRT_BACKEND_SPEC_HPP

#include <string>
#include <vector>

namespace blobrt {

struct BackendSpec {
  std::string name;
  int index = -1;  // -1: not given
};

// Throws blobrt::Error "ORIGIN='TEXT' ..." naming what is wrong.
BackendSpec parse_backend_spec(const std::string& text, const std::string& origin);

// "a::b:" -> {"a", "b"}: empty entries are dropped.
std::vector<std::string> split_path_list(const std::string& list);

}  // namespace blobrt

#endif
