// Layer-wise reduction: parameter diffs summed across MPI ranks bucket by bucket while
// backward goes on (docs/dist.md, "Overlap with backward"), as Caffe's NCCL class does
// with its after-backward hook and PyTorch DDP does with its buckets.
//
//   blobrt::dist::LayerwiseReducer reducer(layers);  // each layer's parameters, forward order
//   reducer.broadcast_data();                         // rank 0's weights everywhere, once
//   for (...) {
//     reducer.begin_backward();
//     for (int i = last; i >= 0; --i) { backward(i); reducer.layer_done(i); }
//     reducer.finish();                               // every diff is the ranks' mean
//     update();
//   }
//
// Layers are grouped into buckets in backward order (the last layer's parameters first),
// consecutive layers joined while a bucket stays within the bucket size. A bucket is handed
// to a communication thread as soon as its last layer is done, so its collective runs
// while backward computes the layers below it; finish() waits for the rest. Every bucket
// has a Communicator of its own, so its diffs are fused into one allocation once and never
// laid out again. Every rank must describe the same layers: the constructor compares the
// ranks' layer lists and throws the same blobrt::Error on every rank when they differ.
//
// Each iteration ends with one small collective (an allgather of a few flags per rank):
// - a parameter whose size changed since the buckets were planned (a Blob empty when the
//   reducer was made and sized later, a layer reshaped) is reduced all the same (its
//   bucket's Communicator lays it out anew), and the buckets are planned anew after that
//   iteration, once the ranks' shapes have been compared: shapes that differ across ranks
//   are the same blobrt::Error on every rank, naming the layer and each rank's shape;
// - an iteration a rank leaves before finish() (backward threw, and the reducer is
//   destroyed, or abandon() is called) is still completed there: every bucket is reduced,
//   also those that rank never reached, since another rank may be inside any of them; so no
//   rank is left waiting in a collective. Its diffs are then unspecified, and every rank that
//   calls finish() for it raises a blobrt::Error naming the ranks that abandoned it
//   (docs/dist.md, "When an iteration is abandoned"). The parameters must outlive the
//   reducer, whose destructor may reduce them.
#ifndef BLOBRT_DIST_LAYERWISE_HPP
#define BLOBRT_DIST_LAYERWISE_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blobrt/dist/communicator.hpp"

namespace blobrt::dist {

struct LayerwiseOptions {
  // Bytes a bucket holds at most (one layer larger than this is a bucket alone). 0: as
  // Options::bucket_bytes (BLOBRT_DIST_BUCKET_BYTES, else 25 MiB).
  std::size_t bucket_bytes = 0;
  Reduction reduction = Reduction::kMean;
  // Reduce on a communication thread while backward goes on. Off, where MPI was not
  // initialised with MPI_THREAD_SERIALIZED or more, or with one rank (which reduces
  // nothing), finish() does the buckets itself.
  bool overlap = true;
};

// What one iteration's reduction did, in seconds of the steady clock.
struct LayerwiseStats {
  int buckets = 0;                 // collectives' buckets reduced
  std::uint64_t bytes_reduced = 0;
  double backward_seconds = 0;     // begin_backward() to the last layer_done() (or finish())
  double reduce_seconds = 0;       // time spent in the buckets' collectives
  double exposed_seconds = 0;      // what finish() waited once backward was over
  // The share of the reduction that ran while backward went on: 1 - exposed / reduce.
  double hidden_fraction() const;
};

class LayerwiseReducer {
 public:
  // `layers[i]` is layer i's parameters (none for a layer without); layers are reported
  // done from the last to the first, as backward runs.
  explicit LayerwiseReducer(std::vector<std::vector<ParamRef>> layers, LayerwiseOptions options = {},
                            MPI_Comm comm = MPI_COMM_WORLD);
  ~LayerwiseReducer();
  LayerwiseReducer(const LayerwiseReducer&) = delete;
  LayerwiseReducer& operator=(const LayerwiseReducer&) = delete;

  int rank() const;
  int size() const;
  int bucket_count() const;
  // Whether buckets are reduced on the communication thread, and if not, why.
  bool overlaps() const { return overlap_; }
  const std::string& overlap_reason() const { return overlap_reason_; }

  // Every rank's parameter data becomes root's (the first bucket's communicator).
  void broadcast_data(int root = 0);
  // Starts an iteration's backward: no layer is done yet.
  void begin_backward();
  // Layer `layer`'s diffs are final for this iteration. A bucket whose layers are all done
  // is reduced now, after the buckets before it.
  void layer_done(int layer);
  // Returns once every bucket is reduced (those with a layer not reported are reduced
  // now). A failed collective (a rank gone, mismatched lists) is rethrown here, and a
  // blobrt::Error is raised where another rank abandoned the iteration or failed.
  void finish();

  // Leaves the iteration begun by begin_backward() without finishing it (backward threw):
  // every bucket's collective is still completed, as the other ranks' may be waiting in
  // it, then the ranks learn that this one abandoned it (their finish() raises). The diffs
  // are unspecified afterwards, and the communication thread may write them until it
  // returns: clear them for the next iteration after it. Nothing outside an iteration; the
  // destructor calls it; never throws (errors are logged). The next begin_backward() starts
  // afresh.
  void abandon() noexcept;
  // Between begin_backward() and finish() (or abandon()).
  bool in_iteration() const;

  // Buckets of this iteration whose collective has returned (so far: the communication
  // thread may be reducing more).
  int buckets_reduced() const;

  const LayerwiseStats& last_stats() const { return stats_; }

 private:
  struct State;

  bool overlap_ = false;
  std::string overlap_reason_;
  std::unique_ptr<State> state_;
  LayerwiseStats stats_;
};

}  // namespace blobrt::dist

#endif  // BLOBRT_DIST_LAYERWISE_HPP
