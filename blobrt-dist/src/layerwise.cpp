#include "blobrt/dist/layerwise.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "blobrt/error.hpp"
#include "blobrt/log.hpp"
#include "blobrt/runtime.hpp"
#include "list_check.hpp"
#include "mpi_call.hpp"

namespace blobrt::dist {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::size_t bytes_of(const std::vector<ParamRef>& params) {
  std::size_t bytes = 0;
  for (const ParamRef& p : params) bytes += static_cast<std::size_t>(p.count()) * p.element_size();
  return bytes;
}

// "layer 3: float [20 1 5 5], float [20]" per layer, for the ranks' comparison.
std::vector<std::string> describe_layers(const std::vector<std::vector<ParamRef>>& layers) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::string line = "layer " + std::to_string(i) + ":";
    for (const std::string& p : describe(layers[i])) line += " " + p + ",";
    if (line.back() == ',') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

double LayerwiseStats::hidden_fraction() const {
  if (reduce_seconds <= 0) return 1;
  return std::clamp(1 - exposed_seconds / reduce_seconds, 0.0, 1.0);
}

struct LayerwiseReducer::State {
  struct Bucket {
    std::vector<ParamRef> params;
    int pending_layers = 0;  // layers of this bucket not yet done in this iteration
    std::unique_ptr<Communicator> comm;
  };

  LayerwiseOptions options;
  std::vector<std::vector<ParamRef>> layers;
  std::unique_ptr<Communicator> control;  // broadcasts; its bucket size is every bucket's
  std::vector<Bucket> buckets;             // in backward order
  std::vector<int> bucket_of_layer;        // -1 for a layer without parameters
  std::vector<int> layers_per_bucket;

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

  bool in_iteration = false;  // between begin_backward() and finish()

  std::thread thread;
  std::string device_id;  // the communication thread uses the training thread's device

  // Under `mutex`.
  void start_iteration() {
    for (std::size_t b = 0; b < buckets.size(); ++b) buckets[b].pending_layers = layers_per_bucket[b];
    next_to_queue = 0;
    reduced = 0;
    reduce_seconds = 0;
    bytes_reduced = 0;
    backward_seconds = -1;
    backward_start = Clock::now();
    in_iteration = true;
  }

  void reduce(std::size_t b) {
    if (control->size() == 1) return;  // the mean of one rank is its own diff
    const Clock::time_point start = Clock::now();
    buckets[b].comm->allreduce_diffs(buckets[b].params, options.reduction);
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

  void run_thread() {
    try {
      select_thread_device(device_id);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      failure = std::current_exception();
    }
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
  State& s = *state_;
  s.options = options;
  s.layers = std::move(layers);
  s.control = std::make_unique<Communicator>(comm, Options{options.bucket_bytes});
  check_same_lists(comm, describe_layers(s.layers), "blobrt::dist::LayerwiseReducer (the layers' parameters)");

  // Buckets in backward order: from the last layer, consecutive layers while they fit.
  const std::size_t limit = s.control->options().bucket_bytes;
  s.bucket_of_layer.assign(s.layers.size(), -1);
  std::size_t open_bytes = 0;
  for (std::size_t i = s.layers.size(); i-- > 0;) {
    const std::size_t bytes = bytes_of(s.layers[i]);
    if (s.layers[i].empty() || bytes == 0) continue;
    if (s.buckets.empty() || open_bytes + bytes > limit) {
      s.buckets.emplace_back();
      s.layers_per_bucket.push_back(0);
      open_bytes = 0;
    }
    State::Bucket& bucket = s.buckets.back();
    bucket.params.insert(bucket.params.end(), s.layers[i].begin(), s.layers[i].end());
    s.bucket_of_layer[i] = static_cast<int>(s.buckets.size() - 1);
    ++s.layers_per_bucket.back();
    open_bytes += bytes;
  }
  for (State::Bucket& bucket : s.buckets) {
    bucket.comm = std::make_unique<Communicator>(comm, Options{limit});
    bucket.comm->fuse(bucket.params);  // laid out once, here, not by the first reduction
  }

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
    overlap_ = true;
    s.device_id = current_device_id();
    s.thread = std::thread([&s] { s.run_thread(); });
  }
  log_message(LogLevel::kInfo, "dist: layer-wise reduction of ", s.layers.size(), " layers in ", s.buckets.size(),
              " buckets of at most ", limit, " bytes; ",
              overlap_ ? std::string("overlapping backward") : overlap_reason_);
}

LayerwiseReducer::~LayerwiseReducer() {
  State& s = *state_;
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
  const int b = s.bucket_of_layer[layer];
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
  if (!overlap_) {
    const Clock::time_point start = Clock::now();
    s.in_iteration = false;  // a failed collective below ends the iteration too
    for (std::size_t b = 0; b < s.buckets.size(); ++b) s.reduce(b);
    s.next_to_queue = s.reduced = s.buckets.size();
    stats_ = {static_cast<int>(s.buckets.size()), s.bytes_reduced, s.backward_seconds, s.reduce_seconds,
              seconds_since(start)};
    return;
  }
  std::unique_lock<std::mutex> lock(s.mutex);
  for (State::Bucket& bucket : s.buckets) bucket.pending_layers = 0;  // layers not reported: done now
  s.queue_ready();
  const Clock::time_point start = Clock::now();
  s.changed.wait(lock, [&] { return s.reduced == s.buckets.size(); });
  s.in_iteration = false;
  stats_ = {static_cast<int>(s.buckets.size()), s.bytes_reduced, s.backward_seconds, s.reduce_seconds,
            seconds_since(start)};
  if (s.failure) {
    std::exception_ptr failure = std::exchange(s.failure, nullptr);
    std::rethrow_exception(failure);
  }
}

}  // namespace blobrt::dist
