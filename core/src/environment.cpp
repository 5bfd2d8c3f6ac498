#include "environment.hpp"

#include <cstdlib>

#include <sys/auxv.h>

namespace blobrt::environment {

bool ignored() { return getauxval(AT_SECURE) != 0; }

std::optional<std::string> get(const char* name) {
  const char* value = secure_getenv(name);  // NULL under AT_SECURE
  if (!value) return std::nullopt;
  return std::string(value);
}

}  // namespace blobrt::environment
