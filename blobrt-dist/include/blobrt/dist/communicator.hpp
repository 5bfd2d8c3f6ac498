// libblobrt-dist: sums Blob diffs and broadcasts Blob data across MPI processes
// (docs/dist.md). Its own library: libblobrt never links MPI or NCCL.
//
//   blobrt::dist::MpiSession mpi(&argc, &argv);       // MPI_Init_thread unless already done
//   blobrt::dist::Communicator comm;                   // over a duplicate of MPI_COMM_WORLD
//   comm.broadcast_data(params);                       // weights from rank 0, once
//   for (...) { backward(); comm.allreduce_diffs(params, Reduction::kMean); update(); }
//
// The first allreduce lays the diffs of the parameter list out in one allocation on the
// active device (Caffe's parallel.cpp: each Blob's diff is re-pointed into it), then every
// reduction moves buckets of that allocation (default 25 MiB, as PyTorch DDP) through the
// engine that fits the device: MPI in place on host memory, NCCL on CUDA, staging through
// host memory elsewhere. Every rank must pass the same list; that is checked before the
// first reduction and after any change of layout, and a mismatch is a blobrt::Error on
// every rank naming the first differing parameter and the ranks.
#ifndef BLOBRT_DIST_COMMUNICATOR_HPP
#define BLOBRT_DIST_COMMUNICATOR_HPP

// Only MPI's C API is used: keep <mpi.h> from pulling in Open MPI's (or MPICH's) deprecated
// C++ bindings, which a program would then have to link (MPI::Comm::Comm()).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blobrt/blob.hpp"

namespace blobrt::dist {

enum class Reduction { kSum, kMean };

// One parameter of either precision (a list may mix them).
class ParamRef {
 public:
  ParamRef(Blob<float>* blob) : float_(blob) {}    // NOLINT(google-explicit-constructor)
  ParamRef(Blob<double>* blob) : double_(blob) {}  // NOLINT(google-explicit-constructor)
  ParamRef(Blob<float>& blob) : float_(&blob) {}   // NOLINT(google-explicit-constructor)
  ParamRef(Blob<double>& blob) : double_(&blob) {} // NOLINT(google-explicit-constructor)

  bool is_double() const { return double_ != nullptr; }
  Blob<float>* as_float() const { return float_; }
  Blob<double>* as_double() const { return double_; }
  std::size_t element_size() const { return is_double() ? sizeof(double) : sizeof(float); }
  std::int64_t count() const;
  const std::vector<int>& shape() const;
  const std::shared_ptr<SyncedMemory>& data() const;
  const std::shared_ptr<SyncedMemory>& diff() const;

 private:
  Blob<float>* float_ = nullptr;
  Blob<double>* double_ = nullptr;
};

struct Options {
  // Bytes one collective moves at most; buckets never split an element. 0: the
  // environment's BLOBRT_DIST_BUCKET_BYTES, else 25 MiB (PyTorch DDP's default).
  std::size_t bucket_bytes = 0;
};
constexpr std::size_t kDefaultBucketBytes = std::size_t{25} << 20;

// What the last allreduce_diffs did (for tests and benchmarks).
struct ReduceStats {
  int collectives = 0;               // MPI or NCCL calls made
  std::uint64_t bytes_reduced = 0;   // payload, without alignment padding
  std::uint64_t bytes_staged = 0;    // copied between device and host to reduce
  bool relaid_out = false;           // the layout was (re)built by this call
};

// How this process reduces on a device: what `blobrt info` prints.
struct EngineReport {
  std::string device;   // "blis:0"
  std::string engine;   // "mpi in place", "mpi on host aliases", "nccl", "cuda-aware mpi", "mpi via host staging"
  std::string details;  // why this engine, and what else was considered
};

// Initialises MPI (MPI_THREAD_FUNNELED, or the thread level asked for) unless the program
// already did, and finalises it at the end of scope if it initialised it; a blobrt::Error
// where MPI was already finalised in the process (it cannot start twice). A
// LayerwiseReducer overlaps backward where MPI gives MPI_THREAD_SERIALIZED or more.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  MpiSession(int* argc, char*** argv, int required_thread_level);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owns_ = false;
};

class Engine;  // src/engines.hpp

class Communicator {
 public:
  // Works on a duplicate of `comm`, so its collectives never match the program's own.
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD, Options options = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const Options& options() const { return options_; }

  // Every rank's data of `params` becomes root's. Checks that the lists match first.
  void broadcast_data(const std::vector<ParamRef>& params, int root = 0);
  // Sums (or averages) the diffs of `params` across ranks, in place on the active device.
  void allreduce_diffs(const std::vector<ParamRef>& params, Reduction reduction = Reduction::kSum);
  // Lays the diffs out in one allocation now (allreduce_diffs does it on first use).
  void fuse(const std::vector<ParamRef>& params);

  const ReduceStats& last_stats() const { return stats_; }
  // The engine for the active device.
  EngineReport engine() const;

 private:
  struct Layout;

  bool layout_matches(const std::vector<ParamRef>& params) const;
  void log_layout() const;
  // A bucket [begin, begin + bytes) of layout group `group` on a device without views.
  void reduce_packed(std::size_t group, std::size_t begin, std::size_t bytes, Reduction reduction);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  Options options_;
  std::unique_ptr<Layout> layout_;
  std::unique_ptr<Engine> engine_;
  ReduceStats stats_;
};

// The engine each device this process can open would use, and the MPI library's own
// words (for `blobrt info`). Needs no MPI_Init.
std::vector<EngineReport> engine_reports();
std::string mpi_library_version();

// libblobrt-dist-nccl.so, the part installed on GPU nodes: loaded or why not.
struct NcclPartReport {
  bool loaded = false;
  std::string path;
  std::string version;  // "NCCL 2.x.y (CUDA runtime N)"
  std::string reason;
};
NcclPartReport nccl_part_report();

}  // namespace blobrt::dist

#endif  // BLOBRT_DIST_COMMUNICATOR_HPP
