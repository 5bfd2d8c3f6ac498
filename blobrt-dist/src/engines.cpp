#include "engines.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"
#include "blobrt/log.hpp"
#include "mpi_call.hpp"
#include "nccl_loader.hpp"
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace blobrt::dist {

StagingBuffer::~StagingBuffer() { release(); }

void StagingBuffer::release() noexcept {
  if (!pointer_) return;
  if (pinned_) {
    device_->release_host(pointer_);
  } else {
    std::free(pointer_);
  }
  pointer_ = nullptr;
  bytes_ = 0;
}

void* StagingBuffer::get(std::size_t bytes) {
  if (bytes <= bytes_ && pointer_) return pointer_;
  release();
  pointer_ = device_->allocate_host(bytes);
  pinned_ = pointer_ != nullptr;
  if (!pointer_) pointer_ = std::malloc(bytes ? bytes : 1);
  if (!pointer_) detail::fail_as<OutOfMemoryError>("blobrt::dist: cannot allocate ", bytes, " bytes of staging memory");
  bytes_ = bytes;
  return pointer_;
}

void mpi_allreduce_in_place(MPI_Comm comm, void* data, std::size_t bytes, bool is_double, ReduceStats& stats) {
  const std::size_t element = is_double ? sizeof(double) : sizeof(float);
  const std::size_t count = bytes / element;
  char* p = static_cast<char*>(data);
  for (std::size_t done = 0; done < count;) {
    const std::size_t n = std::min(count - done, kMaxMpiCount);
    mpi_call("MPI_Allreduce", MPI_Allreduce(MPI_IN_PLACE, p + done * element, static_cast<int>(n),
                                            is_double ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, comm));
    ++stats.collectives;
    done += n;
  }
}

void allreduce_host(MPI_Comm comm, void* data, std::size_t bytes, bool is_double, Reduction reduction,
                    ReduceStats& stats) {
  mpi_allreduce_in_place(comm, data, bytes, is_double, stats);
  const std::size_t count = bytes / (is_double ? sizeof(double) : sizeof(float));
  if (reduction == Reduction::kMean && count) {
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    // The host device's kernels: the memory is host memory whatever the active device.
    if (is_double) {
      host_device()->scal(static_cast<std::int64_t>(count), 1.0 / ranks, data, 0);
    } else {
      host_device()->scal(static_cast<std::int64_t>(count), 1.0f / static_cast<float>(ranks), data, 0);
    }
  }
}

void Engine::broadcast_host(void* data, std::size_t bytes, int root) {
  char* p = static_cast<char*>(data);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(bytes - done, kMaxMpiCount);
    mpi_call("MPI_Bcast", MPI_Bcast(p + done, static_cast<int>(n), MPI_BYTE, root, comm_));
    done += n;
  }
}

namespace {

// host, blis: handles are host pointers, MPI works on the device memory itself.
class InPlaceEngine final : public Engine {
 public:
  using Engine::Engine;
  void allreduce(DeviceBuffer buffer, std::size_t offset, std::size_t bytes, bool is_double, Reduction reduction,
                 ReduceStats& stats) override {
    allreduce_host(comm_, static_cast<char*>(buffer) + offset, bytes, is_double, reduction, stats);
  }
  void broadcast(SyncedMemory& memory, int root) override {
    broadcast_host(memory.mutable_gpu_data(), memory.size(), root);
  }
};

// Through host memory: copy the bucket out, reduce it there, copy it back.
//  - on host aliases (OpenCL on a CPU): the host memory is the buffer's own, lent through
//    host_alias; sync_host_alias orders the host's access after the device's and before
//    its next use (a map and unmap, or waiting for the queue), and moves no bytes;
//  - staging (separate memory): the host memory is a (pinned) staging buffer.
class HostRoundTripEngine final : public Engine {
 public:
  HostRoundTripEngine(std::shared_ptr<Device> device, MPI_Comm comm, EngineReport report, bool on_alias)
      : Engine(std::move(device), comm, std::move(report)), on_alias_(on_alias) {}
  void allreduce(DeviceBuffer buffer, std::size_t offset, std::size_t bytes, bool is_double, Reduction reduction,
                 ReduceStats& stats) override {
    char* host = on_alias_ ? static_cast<char*>(device_->host_alias(buffer)) : static_cast<char*>(staging_.get(bytes));
    if (!host) detail::fail("blobrt::dist: ", device_->description().id(), " lent no host memory for a buffer");
    if (on_alias_) {
      host += offset;
      device_->sync_host_alias(buffer, offset, bytes, Device::AliasSync::kToHost);
      allreduce_host(comm_, host, bytes, is_double, reduction, stats);
      device_->sync_host_alias(buffer, offset, bytes, Device::AliasSync::kToDevice);
      return;
    }
    device_->copy_to_host(buffer, offset, host, bytes);
    allreduce_host(comm_, host, bytes, is_double, reduction, stats);
    device_->copy_to_device(host, buffer, offset, bytes);
    stats.bytes_staged += 2 * bytes;
  }
  void broadcast(SyncedMemory& memory, int root) override {
    broadcast_host(memory.mutable_cpu_data(), memory.size(), root);  // an alias: no copy
  }

 private:
  bool on_alias_;
};

// MPI that takes CUDA device pointers (Open MPI built with CUDA, MPIX_Query_cuda_support).
class CudaAwareMpiEngine final : public Engine {
 public:
  using Engine::Engine;
  void allreduce(DeviceBuffer buffer, std::size_t offset, std::size_t bytes, bool is_double, Reduction reduction,
                 ReduceStats& stats) override {
    device_->synchronize();
    mpi_allreduce_in_place(comm_, static_cast<char*>(buffer) + offset, bytes, is_double, stats);
    if (reduction == Reduction::kMean) {
      int ranks = 1;
      MPI_Comm_size(comm_, &ranks);
      const std::size_t element = is_double ? sizeof(double) : sizeof(float);
      // The device scales its own memory: scal on a view-free range of the buffer.
      if (is_double) {
        device_->scal(static_cast<std::int64_t>(bytes / element), 1.0 / ranks, buffer,
                      static_cast<std::int64_t>(offset / element));
      } else {
        device_->scal(static_cast<std::int64_t>(bytes / element), 1.0f / static_cast<float>(ranks), buffer,
                      static_cast<std::int64_t>(offset / element));
      }
    }
  }
  void broadcast(SyncedMemory& memory, int root) override {
    void* p = memory.mutable_gpu_data();
    device_->synchronize();
    broadcast_host(p, memory.size(), root);
  }
};

class NcclEngine final : public Engine {
 public:
  NcclEngine(std::shared_ptr<Device> device, MPI_Comm comm, EngineReport report, void* nccl_comm)
      : Engine(std::move(device), comm, std::move(report)), table_(nccl_part().table), comm_nccl_(nccl_comm) {}
  ~NcclEngine() override { table_->destroy(comm_nccl_); }
  void allreduce(DeviceBuffer buffer, std::size_t offset, std::size_t bytes, bool is_double, Reduction reduction,
                 ReduceStats& stats) override {
    device_->synchronize();  // the plugin's stream has written the diffs
    char err[512] = {};
    const std::size_t element = is_double ? sizeof(double) : sizeof(float);
    if (table_->allreduce(comm_nccl_, static_cast<char*>(buffer) + offset, bytes / element, is_double ? 1 : 0,
                          reduction == Reduction::kMean ? 1 : 0, err, sizeof err) != 0) {
      detail::fail("blobrt::dist (nccl on ", device_->description().id(), "): ", err);
    }
    ++stats.collectives;
  }
  void broadcast(SyncedMemory& memory, int root) override {
    void* p = memory.mutable_gpu_data();
    device_->synchronize();
    char err[512] = {};
    if (table_->broadcast(comm_nccl_, p, memory.size(), root, err, sizeof err) != 0) {
      detail::fail("blobrt::dist (nccl on ", device_->description().id(), "): ", err);
    }
  }

 private:
  const blobrt_dist_nccl_v1* table_;
  void* comm_nccl_;
};

bool cuda_aware_mpi() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

// NCCL and CUDA-aware MPI take CUDA device pointers: the device must say it is CUDA memory
// (DLPack's kDLCUDA) and that its handles are addresses; its views lay out a bucket.
bool is_cuda(const DeviceDescription& d) {
  return d.native_type == NativeDeviceType::kCuda && d.addressable_handles && d.view_alignment > 0;
}

// NCCL's unique id from rank 0, then ncclCommInitRank everywhere. Every rank reports
// whether it succeeded, so all fall back together.
void* try_nccl(MPI_Comm comm, const DeviceDescription& d, std::string& why_not) {
  const blobrt_dist_nccl_v1* t = nccl_part().table;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  unsigned char id[BLOBRT_DIST_NCCL_ID_BYTES] = {};
  char err[512] = {};
  int ok = rank != 0 || t->unique_id(id, err, sizeof err) == 0;
  int all_ok = 0;
  mpi_call("MPI_Allreduce", MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm));
  if (!all_ok) {
    why_not = std::string("ncclGetUniqueId failed on rank 0") + (err[0] ? std::string(": ") + err : "");
    return nullptr;
  }
  mpi_call("MPI_Bcast", MPI_Bcast(id, BLOBRT_DIST_NCCL_ID_BYTES, MPI_BYTE, 0, comm));
  void* nccl = nullptr;
  ok = t->init(id, ranks, rank, d.index, &nccl, err, sizeof err) == 0;
  mpi_call("MPI_Allreduce", MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm));
  if (!all_ok) {
    if (nccl) t->destroy(nccl);
    why_not = std::string("ncclCommInitRank failed") + (err[0] ? std::string(" here: ") + err : " on another rank");
    return nullptr;
  }
  return nccl;
}

}  // namespace

EngineReport plan_engine(const DeviceDescription& d) {
  EngineReport r;
  r.device = d.id();
  switch (d.memory_model) {
    case MemoryModel::kShared:
      r.engine = "mpi in place";
      r.details = "device memory is host memory: MPI reduces it directly, no copies";
      return r;
    case MemoryModel::kAliased:
      r.engine = d.view_alignment ? "mpi on host aliases" : "mpi via host staging";
      r.details = d.view_alignment ? "buffers live in host memory: map, MPI on it, unmap; no copies"
                                   : "buffers live in host memory but the plugin offers no views: diffs are packed";
      return r;
    case MemoryModel::kSeparate:
      break;
  }
  if (is_cuda(d)) {
    const NcclPart& nccl = nccl_part();
    if (nccl.table) {
      r.engine = "nccl";
      r.details = nccl.version + " from " + nccl.path + " (when every rank is on a CUDA device; else " +
                  (cuda_aware_mpi() ? "cuda-aware mpi)" : "mpi via pinned host staging)");
      return r;
    }
    r.engine = cuda_aware_mpi() ? "cuda-aware mpi" : "mpi via host staging";
    r.details = "NCCL part not used: " + nccl.reason +
                (cuda_aware_mpi() ? "; MPI takes device pointers (MPIX_Query_cuda_support)"
                                  : "; MPI is not CUDA-aware: through pinned host memory");
    return r;
  }
  r.engine = "mpi via host staging";
  r.details = std::string("separate device memory: copied to ") + (d.has_pinned_host ? "pinned " : "") +
              "host memory, reduced, copied back";
  return r;
}

namespace {

std::unique_ptr<Engine> choose_engine(const std::shared_ptr<Device>& device, MPI_Comm comm) {
  const DeviceDescription& d = device->description();
  EngineReport report = plan_engine(d);
  // Collective on every rank, whatever its device: NCCL only when all ranks can.
  int wants_nccl = is_cuda(d) && nccl_part().table ? 1 : 0;
  int all_nccl = 0;
  mpi_call("MPI_Allreduce", MPI_Allreduce(&wants_nccl, &all_nccl, 1, MPI_INT, MPI_MIN, comm));
  if (all_nccl) {
    std::string why_not;
    if (void* nccl = try_nccl(comm, d, why_not)) {
      return std::make_unique<NcclEngine>(device, comm, report, nccl);
    }
    report.details = why_not + "; falling back";
  } else if (wants_nccl) {
    report.details = "not every rank is on a CUDA device with the NCCL part; falling back";
  }
  if (is_cuda(d)) {
    report.engine = cuda_aware_mpi() ? "cuda-aware mpi" : "mpi via host staging";
    if (cuda_aware_mpi()) return std::make_unique<CudaAwareMpiEngine>(device, comm, report);
    return std::make_unique<HostRoundTripEngine>(device, comm, report, false);
  }
  switch (d.memory_model) {
    case MemoryModel::kShared: return std::make_unique<InPlaceEngine>(device, comm, report);
    case MemoryModel::kAliased:
      return std::make_unique<HostRoundTripEngine>(device, comm, report, d.view_alignment != 0);
    case MemoryModel::kSeparate: break;
  }
  return std::make_unique<HostRoundTripEngine>(device, comm, report, false);
}

}  // namespace

// The engine, said at info; a CUDA device reducing without NCCL among several ranks said
// at warn (the reduction then goes through MPI, through host memory unless MPI is
// CUDA-aware).
std::unique_ptr<Engine> make_engine(const std::shared_ptr<Device>& device, MPI_Comm comm) {
  std::unique_ptr<Engine> engine = choose_engine(device, comm);
  const EngineReport& r = engine->report();
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  if (ranks > 1 && is_cuda(device->description()) && r.engine != "nccl") {
    log_message(LogLevel::kWarn, "dist: ", r.device, " reduces with ", r.engine, ", not NCCL: ", r.details);
  } else {
    log_message(LogLevel::kInfo, "dist: ", r.device, " reduces with ", r.engine, ": ", r.details);
  }
  return engine;
}

}  // namespace blobrt::dist
