// How a bucket of diffs is reduced on the active device (docs/dist.md, "Engines"):
//  - mpi in place:         the device's memory is host memory (host, blis): MPI on it;
//  - mpi on host aliases:  buffers live in host memory behind handles (OpenCL on a CPU):
//                          map, MPI on the alias, unmap; no byte is copied;
//  - nccl:                 CUDA devices, every rank on one (libblobrt-dist-nccl.so);
//  - cuda-aware mpi:       CUDA devices where NCCL is not used but MPI takes device pointers;
//  - mpi via host staging: any other device with its own memory: copy, MPI, copy back.
// All but nccl are the same MPI_Allreduce, so ranks on different kinds of device (a blis
// rank next to an OpenCL rank) reduce together.
#ifndef BLOBRT_DIST_ENGINES_HPP
#define BLOBRT_DIST_ENGINES_HPP

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "blobrt/device.hpp"
#include "blobrt/dist/communicator.hpp"
#include "blobrt/syncedmem.hpp"

namespace blobrt::dist {

// Host memory for staging, grown on demand, pinned where the device offers it.
class StagingBuffer {
 public:
  explicit StagingBuffer(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  ~StagingBuffer();
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;
  void* get(std::size_t bytes);

 private:
  void release() noexcept;

  std::shared_ptr<Device> device_;
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
  bool pinned_ = false;
};

// MPI_Allreduce(MPI_SUM) in place (in pieces when longer than an MPI count), on memory
// MPI can read: host memory, or device memory for a CUDA-aware MPI.
void mpi_allreduce_in_place(MPI_Comm comm, void* data, std::size_t bytes, bool is_double, ReduceStats& stats);

// MPI_Allreduce in place on host memory (in pieces when longer than an MPI count), then
// the scaling of a mean by the host kernels.
void allreduce_host(MPI_Comm comm, void* data, std::size_t bytes, bool is_double, Reduction reduction,
                    ReduceStats& stats);

class Engine {
 public:
  virtual ~Engine() = default;
  const EngineReport& report() const { return report_; }
  // Reduces [offset, offset + bytes) of `buffer`, a buffer of the active device.
  virtual void allreduce(DeviceBuffer buffer, std::size_t offset, std::size_t bytes, bool is_double,
                         Reduction reduction, ReduceStats& stats) = 0;
  // Root's contents of `memory` (a blob's data) become every rank's.
  virtual void broadcast(SyncedMemory& memory, int root) = 0;
  StagingBuffer& staging() { return staging_; }
  const std::shared_ptr<Device>& device() const { return device_; }

  Engine(std::shared_ptr<Device> device, MPI_Comm comm, EngineReport report)
      : device_(std::move(device)), comm_(comm), report_(std::move(report)), staging_(device_) {}

 protected:
  void broadcast_host(void* data, std::size_t bytes, int root);

  std::shared_ptr<Device> device_;
  MPI_Comm comm_;
  EngineReport report_;
  StagingBuffer staging_;
};

// Picks the engine for `device`. Collective over `comm` (ranks agree on whether NCCL is
// used by all of them): every rank calls it at the same point.
std::unique_ptr<Engine> make_engine(const std::shared_ptr<Device>& device, MPI_Comm comm);

// What make_engine would pick for a device if every rank had the same, without MPI.
EngineReport plan_engine(const DeviceDescription& device);

}  // namespace blobrt::dist

#endif
