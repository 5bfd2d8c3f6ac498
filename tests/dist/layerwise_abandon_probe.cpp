// Under mpirun -np 2 (tests/dist/layerwise_abandon_test.py): every rank's backward throws
// with layer-wise buckets still queued, at a different point on each rank, and the program
// leaves as a training program would (the exception unwinds the reducer, main returns an
// error, MPI_Finalize). Rank 0 has queued four buckets and its communication thread is
// inside the second one's collective; rank 1 has queued one. The job must end, not hang.
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/dist/communicator.hpp"
#include "blobrt/dist/layerwise.hpp"

namespace {

void train(int layers_per_bucket_reported) {
  std::vector<std::unique_ptr<blobrt::Blob<float>>> blobs;
  std::vector<std::vector<blobrt::dist::ParamRef>> layers;
  for (int i = 0; i < 8; ++i) {  // 8 layers of 1024 floats, one 4 KiB bucket each
    blobs.push_back(std::make_unique<blobrt::Blob<float>>(std::vector<int>{1024}));
    layers.push_back({blobs.back().get()});
  }
  blobrt::dist::LayerwiseOptions options;
  options.bucket_bytes = 4096;
  blobrt::dist::LayerwiseReducer reducer(layers, options);
  reducer.begin_backward();
  for (int done = 0; done < layers_per_bucket_reported; ++done) {
    const int layer = 7 - done;
    blobs[layer]->mutable_cpu_diff()[0] = 1.0f;
    reducer.layer_done(layer);
  }
  // Time for the communication thread to enter what was queued.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  throw std::runtime_error("backward failed after " + std::to_string(layers_per_bucket_reported) + " layers");
}

}  // namespace

int main(int argc, char** argv) {
  blobrt::dist::MpiSession mpi(&argc, &argv, MPI_THREAD_SERIALIZED);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    train(rank == 0 ? 4 : 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: training stopped: %s\n", rank, e.what());
    return 3;
  }
  return 0;
}
