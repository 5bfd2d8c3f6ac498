// blobrt-conformance's main: the GoogleTest suite, or with --fleet the fleet-wide run
// under mpirun (conformance_fleet.hpp), when built with libblobrt-dist.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#ifdef BLOBRT_HAVE_DIST
#include "conformance_fleet.hpp"
#endif

int main(int argc, char** argv) {
  // A line as soon as each test (or fleet check) ends, also into a pipe or a log file:
  // the whole suite takes minutes on a slow device.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fleet") == 0) {
#ifdef BLOBRT_HAVE_DIST
      return blobrt::fleet::run(argc, argv);
#else
      std::fprintf(stderr, "blobrt-conformance: --fleet needs libblobrt-dist, which this build lacks "
                           "(configure with -Dmpi=enabled and Open MPI installed)\n");
      return 2;
#endif
    }
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
