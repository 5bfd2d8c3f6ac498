#include "blobrt/dist/layerwise.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "blobrt/error.hpp"
#include "blobrt/log.hpp"
#include "blobrt/runtime.hpp"
#include "iteration_status.hpp"
#include "layerwise_plan.hpp"
#include "list_check.hpp"
#include "mpi_call.hpp"

namespace blobrt::dist {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

double LayerwiseStats::hidden_fraction() const {
  if (reduce_seconds <= 0) return 1;
  return std::clamp(1 - exposed_seconds / reduce_seconds, 0.0, 1.0);
}

struct LayerwiseReducer::State {
  struct Bucket {
    int pending_layers = 0;  // layers of this bucket not yet done in this iteration
    std::unique_ptr<Communicator> comm;
  };

  LayerwiseOptions options;
  std::vector<std::vector<ParamRef>> layers;
  MPI_Comm comm = MPI_COMM_NULL;          // the user's; each Communicator duplicates it
  MPI_Comm own = MPI_COMM_NULL;           // a duplicate: the plan's checks, each iteration's end
  std::unique_ptr<Communicator> control;  // broadcasts; its bucket size is every bucket's
  BucketPlan plan;
  std::vector<Bucket> buckets;  // plan.buckets' communicators, in backward order

  // Per iteration, under `mutex`.
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::size_t next_to_queue = 0;  // buckets before it are queued (in order)
  std::deque<std::size_t> queue;
  std::size_t reduced = 0;        // buckets whose collective has returned
  std::exception_ptr failure;
  bool stopping = false;
  double reduce_seconds = 0;
  std::uint64_t bytes_reduced = 0;
  Clock::time_point backward_start;
  double backward_seconds = -1;  // set when the last bucket is queued by layer_done

  bool in_iteration = false;  // between begin_backward() and finish() (or the abandon path)

  std::thread thread;
  std::string device_id;  // the communication thread uses the training thread's device

  ~State() {
    if (own != MPI_COMM_NULL && mpi_live()) MPI_Comm_free(&own);
  }

  // Collective: the buckets for the parameters' sizes now, a Communicator each, its diffs
  // fused once here rather than by the first reduction.
  // The old plan stays whole where this throws.
  void make_plan() {
    BucketPlan next = plan_buckets(layers, control->options().bucket_bytes);
    std::vector<Bucket> made(next.buckets.size());
    for (std::size_t b = 0; b < made.size(); ++b) {
      made[b].comm = std::make_unique<Communicator>(comm, Options{control->options().bucket_bytes});
      made[b].comm->fuse(next.buckets[b].params);
    }
    plan = std::move(next);
    buckets = std::move(made);
  }

  // Under `mutex`.
  void start_iteration() {
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      buckets[b].pending_layers = static_cast<int>(plan.buckets[b].layers.size());
    }
    next_to_queue = 0;
    reduced = 0;
    reduce_seconds = 0;
    bytes_reduced = 0;
    backward_seconds = -1;
    backward_start = Clock::now();
    failure = nullptr;
    in_iteration = true;
  }

  void reduce(std::size_t b) {
    if (control->size() == 1) return;  // the mean of one rank is its own diff
    const Clock::time_point start = Clock::now();
    try {
      buckets[b].comm->allreduce_diffs(plan.buckets[b].params, options.reduction);
    } catch (const Error& e) {
      // The Communicator numbers the bucket's parameters from 0: say which layers they are.
      detail::fail("blobrt::dist::LayerwiseReducer: bucket ", b, " of ", buckets.size(), ", which holds ",
                   bucket_contents(plan.buckets[b], layers), ": ", e.what());
    }
    const double took = seconds_since(start);
    std::lock_guard<std::mutex> lock(mutex);
    reduce_seconds += took;
    bytes_reduced += buckets[b].comm->last_stats().bytes_reduced;
  }

  // Queues the buckets, in order, whose layers are all done. Under `mutex`.
  void queue_ready() {
    while (next_to_queue < buckets.size() && buckets[next_to_queue].pending_layers == 0) {
      queue.push_back(next_to_queue++);
    }
    if (next_to_queue == buckets.size() && backward_seconds < 0) backward_seconds = seconds_since(backward_start);
    changed.notify_all();
  }

  // Reduces every bucket of the iteration not reduced yet, in order, and returns once all
  // have been: by the communication thread where there is one, here otherwise. A failed
  // bucket is kept in `failure` and the ones after it are skipped (every rank fails the
  // same bucket: its peers are not waiting for those).
  void complete_buckets(bool overlap) {
    if (!overlap) {
      for (std::size_t b = 0; b < buckets.size() && !failure; ++b) {
        try {
          reduce(b);
        } catch (...) {
          failure = std::current_exception();
        }
      }
      std::lock_guard<std::mutex> lock(mutex);
      next_to_queue = reduced = buckets.size();
      return;
    }
    std::unique_lock<std::mutex> lock(mutex);
    for (Bucket& bucket : buckets) bucket.pending_layers = 0;  // layers not reported: done now
    queue_ready();
    changed.wait(lock, [&] { return reduced == buckets.size(); });
  }

  // The iteration's end on this rank, agreed with the others (one small collective). With
  // no rank abandoned or failed and some parameter's size changed since the plan, every
  // rank plans anew (after comparing the layers' shapes: a difference raises everywhere).
  IterationOutcome settle(bool abandoned) {
    IterationOutcome outcome;
    const bool resized = counts_changed(layers, plan);
    if (control->size() == 1) {
      outcome.resized = resized;
    } else {
      if (!mpi_live()) return outcome;
      outcome = settle_iteration(own, IterationStatus{abandoned, failure != nullptr, resized});
    }
    if (outcome.resized && outcome.abandoned.empty() && outcome.failed.empty()) {
      check_same_lists(own, describe_layers(layers),
                       "blobrt::dist::LayerwiseReducer (re-planning its buckets: a parameter's size changed)");
      make_plan();
      log_message(LogLevel::kInfo, "dist: a parameter's size changed: layer-wise buckets planned anew, ",
                  buckets.size(), " buckets");
    }
    return outcome;
  }

  // `started` gets "" once the thread uses the training thread's device, or why it cannot;
  // in that case the thread ends at once.
  void run_thread(std::promise<std::string>& started) {
    try {
      select_thread_device(device_id);
    } catch (const std::exception& e) {
      started.set_value(e.what());
      return;
    } catch (...) {
      started.set_value("unknown error");
      return;
    }
    started.set_value("");
    for (;;) {
      std::size_t b = 0;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return stopping || !queue.empty(); });
        if (stopping) return;
        b = queue.front();
        queue.pop_front();
        if (failure) {  // a bucket before failed: its peers are not waiting for this one
          ++reduced;
          changed.notify_all();
          continue;
        }
      }
      try {
        reduce(b);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        failure = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex);
      ++reduced;
      changed.notify_all();
    }
  }
};

LayerwiseReducer::LayerwiseReducer(std::vector<std::vector<ParamRef>> layers, LayerwiseOptions options,
                                   MPI_Comm comm)
    : state_(std::make_unique<State>()) {
  require_mpi_live("blobrt::dist::LayerwiseReducer");
  State& s = *state_;
  s.options = options;
  s.layers = std::move(layers);
  s.comm = comm;
  s.control = std::make_unique<Communicator>(comm, Options{options.bucket_bytes});
  mpi_call("MPI_Comm_dup", MPI_Comm_dup(comm, &s.own));
  check_same_lists(s.own, describe_layers(s.layers), "blobrt::dist::LayerwiseReducer (the layers' parameters)");
  s.make_plan();

  int thread_level = MPI_THREAD_SINGLE;
  mpi_call("MPI_Query_thread", MPI_Query_thread(&thread_level));
  if (!options.overlap) {
    overlap_reason_ = "overlap is off (LayerwiseOptions::overlap)";
  } else if (s.control->size() == 1) {
    overlap_reason_ = "one rank: nothing to overlap";
  } else if (thread_level < MPI_THREAD_SERIALIZED) {
    overlap_reason_ = "MPI was initialised below MPI_THREAD_SERIALIZED, so only this thread may call it; "
                      "finish() reduces every bucket";
  } else {
    s.device_id = current_device_id();
    std::promise<std::string> started;
    std::future<std::string> thread_error = started.get_future();
    // The thread owns the promise, so the state the future reads outlives its set_value.
    s.thread = std::thread([&s, started = std::move(started)]() mutable { s.run_thread(started); });
    // Known before the first iteration: a thread that could not take the device would fail
    // every bucket on this rank alone while its peers wait in their collectives. This rank
    // reduces in finish() instead; the buckets are matched in the same order either way.
    const std::string error = thread_error.get();
    if (error.empty()) {
      overlap_ = true;
    } else {
      s.thread.join();
      overlap_reason_ = "the communication thread could not use " + s.device_id + " (" + error +
                        "); finish() reduces every bucket";
    }
  }
  log_message(LogLevel::kInfo, "dist: layer-wise reduction of ", s.layers.size(), " layers in ", s.buckets.size(),
              " buckets of at most ", s.control->options().bucket_bytes, " bytes; ",
              overlap_ ? std::string("overlapping backward") : overlap_reason_);
}

LayerwiseReducer::~LayerwiseReducer() {
  State& s = *state_;
  abandon();  // an iteration left unfinished (backward threw): its collectives completed
  if (s.thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.stopping = true;
    }
    s.changed.notify_all();
    s.thread.join();
  }
}

int LayerwiseReducer::rank() const { return state_->control->rank(); }
int LayerwiseReducer::size() const { return state_->control->size(); }
int LayerwiseReducer::bucket_count() const { return static_cast<int>(state_->buckets.size()); }

int LayerwiseReducer::buckets_reduced() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return static_cast<int>(state_->reduced);
}

bool LayerwiseReducer::in_iteration() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->in_iteration;
}

void LayerwiseReducer::broadcast_data(int root) {
  std::vector<ParamRef> all;
  for (const auto& layer : state_->layers) all.insert(all.end(), layer.begin(), layer.end());
  state_->control->broadcast_data(all, root);
}

void LayerwiseReducer::begin_backward() {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.in_iteration) {
    detail::fail("blobrt::dist::LayerwiseReducer::begin_backward: the last iteration's reduction is not finished (",
                 s.reduced, " of ", s.buckets.size(), " buckets reduced); call finish() first");
  }
  s.start_iteration();
}

void LayerwiseReducer::layer_done(int layer) {
  State& s = *state_;
  if (layer < 0 || static_cast<std::size_t>(layer) >= s.layers.size()) {
    detail::fail("blobrt::dist::LayerwiseReducer::layer_done: layer ", layer, " is not one of the ",
                 s.layers.size(), " layers");
  }
  const int b = s.plan.bucket_of_layer[layer];
  if (b < 0) return;
  std::lock_guard<std::mutex> lock(s.mutex);
  // Outside an iteration (a backward of the program's own) or reported twice: nothing.
  if (!s.in_iteration || s.buckets[b].pending_layers == 0) return;
  if (--s.buckets[b].pending_layers == 0 && overlap_) s.queue_ready();
}

void LayerwiseReducer::finish() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.in_iteration) {
      detail::fail("blobrt::dist::LayerwiseReducer::finish: no iteration was begun (begin_backward() first)");
    }
    if (!overlap_ && s.backward_seconds < 0) s.backward_seconds = seconds_since(s.backward_start);
  }
  const Clock::time_point start = Clock::now();
  s.complete_buckets(overlap_);
  std::exception_ptr failure;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.in_iteration = false;  // a failure below ends the iteration too
    stats_ = {static_cast<int>(s.buckets.size()), s.bytes_reduced, s.backward_seconds, s.reduce_seconds,
              seconds_since(start)};
    failure = s.failure;
  }
  const IterationOutcome outcome = s.settle(/*abandoned=*/false);
  s.failure = nullptr;
  if (failure) std::rethrow_exception(failure);
  const std::string others = others_message(outcome, rank());
  if (!others.empty()) detail::fail(others);
}

void LayerwiseReducer::abandon() noexcept {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.in_iteration) return;
  }
  try {
    if (!mpi_live()) {
      // Nothing can be reduced any more (nor can any peer be waiting on this process).
      std::lock_guard<std::mutex> lock(s.mutex);
      s.queue.clear();
      s.in_iteration = false;
      return;
    }
    // Every bucket, also those this rank did not reach: another rank may have queued more
    // (its communication thread is then inside that bucket's collective, or will be), and
    // each bucket is matched by every rank in the same order, whether it finishes or
    // abandons. The diffs are unspecified afterwards; every rank that calls finish() raises.
    s.complete_buckets(overlap_);
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.in_iteration = false;
    }
    s.settle(/*abandoned=*/true);
    log_message(LogLevel::kWarn, "dist: rank ", rank(), " abandoned a layer-wise iteration before finish(); ",
                "its buckets were reduced to keep the ranks' collectives matched");
  } catch (const std::exception& e) {
    log_message(LogLevel::kWarn, "dist: rank ", rank(), " abandoning a layer-wise iteration: ", e.what());
  } catch (...) {
    log_message(LogLevel::kWarn, "dist: rank ", rank(), " abandoning a layer-wise iteration: unknown error");
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  s.in_iteration = false;
  s.failure = nullptr;
}

}  // namespace blobrt::dist
