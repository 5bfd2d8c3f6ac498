// Where the tests find the files they use. The build bakes in its own paths; a relocated
// copy of the tests (the GPU bundle, tools/gpu-bundle.sh) names others in the environment
// under the same names.
#ifndef BLOBRT_TESTS_TEST_PATHS_HPP
#define BLOBRT_TESTS_TEST_PATHS_HPP

#include <cstdlib>
#include <string>

namespace blobrt::testing {

inline std::string test_path(const char* variable, const char* built_in) {
  const char* value = std::getenv(variable);
  return value && *value ? value : built_in;
}

}  // namespace blobrt::testing

// Each macro is defined by tests/meson.build for the suites that use it.
#define BLOBRT_TEST_PATH(name) ::blobrt::testing::test_path(#name, name)

#endif
