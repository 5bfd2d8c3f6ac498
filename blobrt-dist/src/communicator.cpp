#include "blobrt/dist/communicator.hpp"

#include <algorithm>
#include <cstring>

#include "blobrt/error.hpp"
#include "blobrt/log.hpp"
#include "blobrt/runtime.hpp"
#include "bucket_check.hpp"
#include "engines.hpp"
#include "list_check.hpp"
#include "mpi_call.hpp"
#include "nccl_loader.hpp"

namespace blobrt::dist {

std::int64_t ParamRef::count() const { return is_double() ? double_->count() : float_->count(); }
const std::vector<int>& ParamRef::shape() const { return is_double() ? double_->shape() : float_->shape(); }
const std::shared_ptr<SyncedMemory>& ParamRef::data() const { return is_double() ? double_->data() : float_->data(); }
const std::shared_ptr<SyncedMemory>& ParamRef::diff() const { return is_double() ? double_->diff() : float_->diff(); }

MpiSession::MpiSession(int* argc, char*** argv) : MpiSession(argc, argv, MPI_THREAD_FUNNELED) {}

MpiSession::MpiSession(int* argc, char*** argv, int required_thread_level) {
  int initialised = 0;
  mpi_call("MPI_Initialized", MPI_Initialized(&initialised));
  if (initialised) {
    // MPI_Initialized stays true after MPI_Finalize, and any MPI call then aborts the
    // process: say so instead (MPI cannot be started twice in one process).
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (finalised) {
      detail::fail("blobrt::dist::MpiSession: MPI was already finalised in this process (MPI_Finalize was "
                   "called, by the program or a library such as mpi4py), and MPI cannot be initialised again");
    }
    return;
  }
  int provided = 0;
  mpi_call("MPI_Init_thread", MPI_Init_thread(argc, argv, required_thread_level, &provided));
  owns_ = true;
}

MpiSession::~MpiSession() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (owns_ && !finalised) MPI_Finalize();
}

namespace {

// One allocation holding many blobs' diffs (views into it); freed when the last blob
// re-pointed into it lets go.
struct FusedBuffer {
  std::shared_ptr<Device> device;
  DeviceBuffer buffer = nullptr;
  std::vector<DeviceBuffer> views;
  ~FusedBuffer() {
    for (DeviceBuffer v : views) device->release_view(v);
    if (buffer) device->release(buffer);
  }
};

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

}  // namespace

// The parameters' diffs in one canonical order and layout, the same on every rank: float
// parameters then double ones, each group's blobs at offsets aligned to the largest view
// alignment of any rank (padding stays zero). A rank whose device offers views keeps the
// group in one device allocation laid out so ("fused"); one without packs each bucket
// into host memory at the same offsets. So buckets hold the same elements everywhere.
struct Communicator::Layout {
  struct Slot {
    std::shared_ptr<SyncedMemory> memory;
    DeviceBuffer view = nullptr;  // fused: the blob's diff handle, a view of the group's buffer
    std::size_t offset = 0;       // bytes, in the group's canonical layout
    std::size_t bytes = 0;
  };
  struct Group {
    bool is_double = false;
    std::size_t bytes = 0;  // with padding
    std::vector<Slot> slots;
    std::shared_ptr<FusedBuffer> fused;
  };
  std::shared_ptr<Device> device;
  std::vector<ParamRef> params;
  std::vector<const SyncedMemory*> diffs;  // per parameter (null for empty ones)
  std::vector<std::int64_t> counts;
  std::vector<Group> groups;
  bool fused = false;
  std::uint64_t payload_bytes = 0;
};

Communicator::Communicator(MPI_Comm comm, Options options) : options_(options) {
  require_mpi_live("blobrt::dist::Communicator");
  BucketSetting bucket{options_.bucket_bytes, "Options::bucket_bytes", ""};
  if (options_.bucket_bytes == 0) bucket = bucket_setting_from_environment();
  options_.bucket_bytes = bucket.bytes;
  mpi_call("MPI_Comm_dup", MPI_Comm_dup(comm, &comm_));
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  // Before any collective of a reduction: an invalid or differing size fails on every rank.
  try {
    check_same_bucket_bytes(comm_, bucket);
  } catch (...) {
    MPI_Comm_free(&comm_);  // no destructor runs for a constructor that throws
    throw;
  }
  log_message(LogLevel::kInfo, "dist: rank ", rank_, " of ", size_, ", buckets of ", options_.bucket_bytes,
              " bytes (", bucket.source, ")");
}

Communicator::~Communicator() {
  engine_.reset();
  layout_.reset();  // blobs keep their fused buffers alive
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

bool Communicator::layout_matches(const std::vector<ParamRef>& params) const {
  if (!layout_ || layout_->device != current_device() || params.size() != layout_->params.size()) return false;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ParamRef& p = params[i];
    const ParamRef& q = layout_->params[i];
    if (p.is_double() != q.is_double() || p.as_float() != q.as_float() || p.as_double() != q.as_double()) return false;
    if (p.count() != layout_->counts[i]) return false;
    if (p.count() && p.diff().get() != layout_->diffs[i]) return false;
  }
  if (layout_->fused) {
    // A blob whose diff was re-pointed elsewhere (set_gpu_data) needs a new layout.
    for (const Layout::Group& g : layout_->groups) {
      for (const Layout::Slot& s : g.slots) {
        if (s.memory->gpu_data() != s.view) return false;
      }
    }
  }
  return true;
}

void Communicator::fuse(const std::vector<ParamRef>& params) {
  require_mpi_live("blobrt::dist::Communicator::fuse");
  check_same_lists(comm_, describe(params), "allreduce_diffs");
  const std::shared_ptr<Device>& device = current_device();
  const DeviceDescription& d = device->description();
  unsigned long long mine = std::max<std::size_t>(64, d.view_alignment), alignment = 0;
  mpi_call("MPI_Allreduce", MPI_Allreduce(&mine, &alignment, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_));

  auto layout = std::make_unique<Layout>();
  layout->device = device;
  layout->params = params;
  layout->fused = d.view_alignment > 0 && alignment % d.view_alignment == 0;
  for (const ParamRef& p : params) {
    layout->counts.push_back(p.count());
    layout->diffs.push_back(p.count() ? p.diff().get() : nullptr);
  }
  for (bool is_double : {false, true}) {
    Layout::Group g;
    g.is_double = is_double;
    for (const ParamRef& p : params) {
      if (p.is_double() != is_double || p.count() == 0) continue;
      Layout::Slot s;
      s.memory = p.diff();
      s.offset = g.bytes;
      s.bytes = static_cast<std::size_t>(p.count()) * p.element_size();
      g.bytes = align_up(g.bytes + s.bytes, alignment);
      layout->payload_bytes += s.bytes;
      g.slots.push_back(std::move(s));
    }
    if (g.slots.empty()) continue;
    if (layout->fused) {
      // Caffe's apply_buffers, keeping the values: each diff is copied into its place and
      // the blob's diff re-pointed at a view of it.
      auto fused = std::make_shared<FusedBuffer>();
      fused->device = device;
      fused->buffer = device->allocate(g.bytes);
      device->memset(fused->buffer, 0, 0, g.bytes);
      for (Layout::Slot& s : g.slots) {
        device->copy_device(s.memory->gpu_data(), 0, fused->buffer, s.offset, s.bytes);
        s.view = device->view(fused->buffer, s.offset, s.bytes);
        fused->views.push_back(s.view);
        // Sized: the diff's SyncedMemory may be larger (a Blob shrunk within its capacity);
        // its size becomes the view's, so growing the Blob again gets fresh memory instead
        // of writing over the next blob's diff (and a new layout follows).
        s.memory->set_gpu_data(s.view, fused, s.bytes);
      }
      g.fused = std::move(fused);
    }
    layout->groups.push_back(std::move(g));
  }
  layout_ = std::move(layout);
  log_layout();
}

// At info: each group's size and bucket count, and how its buckets reach the engine.
void Communicator::log_layout() const {
  if (!log_enabled(LogLevel::kInfo)) return;
  std::string groups;
  for (const Layout::Group& g : layout_->groups) {
    const std::size_t element = g.is_double ? sizeof(double) : sizeof(float);
    const std::size_t bucket = std::max(element, options_.bucket_bytes / element * element);
    groups += (groups.empty() ? "" : "; ") + std::string(g.is_double ? "double" : "float") + ": " +
              std::to_string(g.slots.size()) + " blobs, " + std::to_string(g.bytes) + " bytes in " +
              std::to_string(g.bytes ? (g.bytes + bucket - 1) / bucket : 0) + " buckets";
  }
  log_message(LogLevel::kInfo, "dist: layout of ", layout_->params.size(), " parameters (", layout_->payload_bytes,
              " bytes) on ", layout_->device->description().id(), ", ",
              layout_->fused ? "fused (one device allocation per group, buckets reduced in place)"
                             : "packed (each bucket copied through host memory)",
              groups.empty() ? "" : ": ", groups);
}

void Communicator::allreduce_diffs(const std::vector<ParamRef>& params, Reduction reduction) {
  require_mpi_live("blobrt::dist::Communicator::allreduce_diffs");
  stats_ = ReduceStats{};
  // Whether any rank must rebuild its engine or layout: all ranks then do it together, so
  // the collectives inside stay matched.
  int mine[2] = {!engine_ || engine_->device() != current_device(), !layout_matches(params)};
  int any[2] = {0, 0};
  mpi_call("MPI_Allreduce", MPI_Allreduce(mine, any, 2, MPI_INT, MPI_MAX, comm_));
  if (any[0]) engine_ = make_engine(current_device(), comm_);
  if (any[1]) {
    fuse(params);
    stats_.relaid_out = true;
  }
  Engine& engine = *engine_;
  // Newest copy of every diff on the device, and marked so (the reduction writes there).
  for (const Layout::Group& g : layout_->groups) {
    for (const Layout::Slot& s : g.slots) s.memory->mutable_gpu_data();
  }
  for (std::size_t group = 0; group < layout_->groups.size(); ++group) {
    const Layout::Group& g = layout_->groups[group];
    const std::size_t element = g.is_double ? sizeof(double) : sizeof(float);
    const std::size_t bucket = std::max(element, options_.bucket_bytes / element * element);
    for (std::size_t begin = 0; begin < g.bytes; begin += bucket) {
      const std::size_t bytes = std::min(bucket, g.bytes - begin);
      if (layout_->fused) {
        engine.allreduce(g.fused->buffer, begin, bytes, g.is_double, reduction, stats_);
      } else {
        reduce_packed(group, begin, bytes, reduction);
      }
    }
  }
  stats_.bytes_reduced = layout_->payload_bytes;
}

// A bucket of a rank without views: each blob's part copied to host memory at its
// canonical offset, reduced, and copied back.
void Communicator::reduce_packed(std::size_t group, std::size_t begin, std::size_t bytes, Reduction reduction) {
  const Layout::Group& g = layout_->groups[group];
  Device& device = *layout_->device;
  char* host = static_cast<char*>(engine_->staging().get(bytes));
  std::memset(host, 0, bytes);
  auto each_part = [&](auto&& move) {
    for (const Layout::Slot& s : g.slots) {
      const std::size_t lo = std::max(begin, s.offset), hi = std::min(begin + bytes, s.offset + s.bytes);
      if (lo < hi) move(s.memory->mutable_gpu_data(), lo - s.offset, host + (lo - begin), hi - lo);
    }
  };
  each_part([&](DeviceBuffer handle, std::size_t offset, char* to, std::size_t n) {
    device.copy_to_host(handle, offset, to, n);
    stats_.bytes_staged += n;
  });
  allreduce_host(comm_, host, bytes, g.is_double, reduction, stats_);
  each_part([&](DeviceBuffer handle, std::size_t offset, char* from, std::size_t n) {
    device.copy_to_device(from, handle, offset, n);
    stats_.bytes_staged += n;
  });
}

void Communicator::broadcast_data(const std::vector<ParamRef>& params, int root) {
  require_mpi_live("blobrt::dist::Communicator::broadcast_data");
  if (root < 0 || root >= size_) {
    detail::fail("blobrt::dist::broadcast_data: root rank ", root, " is not in [0, ", size_, ")");
  }
  int mine = !engine_ || engine_->device() != current_device(), any = 0;
  mpi_call("MPI_Allreduce", MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm_));
  if (any) engine_ = make_engine(current_device(), comm_);
  check_same_lists(comm_, describe(params), "broadcast_data");
  for (const ParamRef& p : params) {
    if (p.count()) engine_->broadcast(*p.data(), root);
  }
}

EngineReport Communicator::engine() const {
  if (engine_ && engine_->device() == current_device()) return engine_->report();
  return plan_engine(current_device()->description());
}

std::vector<EngineReport> engine_reports() {
  std::vector<EngineReport> reports{plan_engine(host_device()->description())};
  for (const PluginReport& p : inventory().plugins) {
    if (!p.usable) continue;
    for (const DeviceDescription& d : p.devices) reports.push_back(plan_engine(d));
  }
  return reports;
}

NcclPartReport nccl_part_report() {
  const NcclPart& part = nccl_part();
  return NcclPartReport{part.table != nullptr, part.path, part.version, part.reason};
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown MPI";
  std::string s(text, static_cast<std::size_t>(length));
  if (std::size_t nl = s.find('\n'); nl != std::string::npos) s.resize(nl);  // first line only
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ' || s.back() == ',')) s.pop_back();
  return s;
}

}  // namespace blobrt::dist
