// The program bench_startup.cpp starts: one Blob on the selected backend (BLOBRT_BACKEND),
// touched on its device side, as a short-lived tool or an MPI rank would. Its exit status
// is how many OpenCL or CUDA libraries it has mapped (libOpenCL, CLBlast, PoCL, cudart,
// cuBLAS, libcuda): a process that selected blis should have none.
#include <fstream>
#include <string>

#include "blobrt/blob.hpp"

int main() {
  blobrt::Blob<float> blob(1, 1, 2, 4);
  blob.mutable_gpu_data();
  std::ifstream maps("/proc/self/maps");
  int foreign = 0;
  std::string seen;
  for (std::string line; std::getline(maps, line);) {
    const std::size_t slash = line.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string file = line.substr(slash + 1);
    const std::string stem = file.substr(0, file.find(".so"));
    if (seen.find("|" + stem + "|") != std::string::npos) continue;
    for (const char* library : {"libOpenCL", "libclblast", "libpocl", "libcudart", "libcublas", "libcuda"}) {
      if (stem == library) {
        ++foreign;
        seen += "|" + stem + "|";
      }
    }
  }
  return foreign;
}
