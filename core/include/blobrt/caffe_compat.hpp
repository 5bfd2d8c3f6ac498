// Source compatibility with BVLC Caffe: code written against caffe/blob.hpp,
// caffe/syncedmem.hpp, caffe/common.hpp, caffe/util/io.hpp, caffe/util/rng.hpp and
// caffe/util/math_functions.hpp (both halves) compiles with its includes pointing here.
// Caffe's layer sources build unchanged with one-line caffe/*.hpp headers that include
// this one (tests/caffe/peer/README.md, docs/differences-from-caffe.md).
//
// The caffe_gpu_* functions work on the *active device* (whatever backend is loaded)
// and take the handles that gpu_data()/mutable_gpu_data() return. For OpenCL such a
// handle is a cl_mem, not a pointer: pass it as returned, never offset it.
#ifndef BLOBRT_CAFFE_COMPAT_HPP
#define BLOBRT_CAFFE_COMPAT_HPP

#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

// Code that also uses Caffe's own messages (LayerParameter, FillerParameter, ...) includes
// Caffe's generated caffe.pb.h before this header, or defines BLOBRT_USE_CAFFE_PROTO:
// caffe::BlobProto and caffe::BlobShape are then Caffe's, and caffe::Blob reads and
// writes them (copying through blobrt's identical message: docs/differences-from-caffe.md).
// Without either, it is found by itself when "caffe/proto/caffe.pb.h" is on the include
// path (so Caffe's files compile in Caffe's own include order); BLOBRT_NO_CAFFE_PROTO
// keeps blobrt's own messages even then.
#if defined(BLOBRT_USE_CAFFE_PROTO) || defined(GOOGLE_PROTOBUF_INCLUDED_caffe_2eproto) || \
    defined(GOOGLE_PROTOBUF_INCLUDED_caffe_2fproto_2fcaffe_2eproto)
#define BLOBRT_CAFFE_PROTO 1
#elif !defined(BLOBRT_NO_CAFFE_PROTO) && defined(__has_include)
#if __has_include("caffe/proto/caffe.pb.h")
#define BLOBRT_CAFFE_PROTO 1
#endif
#endif
#ifdef BLOBRT_CAFFE_PROTO
#include "caffe/proto/caffe.pb.h"
#endif

#include "blobrt/blob.hpp"
#include "blobrt/caffe/common.hpp"
#include "blobrt/caffe/math_functions.hpp"
#include "blobrt/io.hpp"
#include "blobrt/runtime.hpp"
#include "blobrt/syncedmem.hpp"

namespace caffe {

// Caffe's Blob, with Caffe's exact signatures: count() and offset() return int, so that
// std::min(blob.count(), 10), member-function pointers and overloads written for Caffe
// compile. A value too large for int throws (never wraps); blobrt::Blob, the base, keeps
// the 64-bit ones. A caffe::Blob is a blobrt::Blob wherever one is expected.
template <typename Dtype>
class Blob : public blobrt::Blob<Dtype> {
  using Base = blobrt::Blob<Dtype>;

 public:
  Blob() = default;
  explicit Blob(const int num, const int channels, const int height, const int width)
      : Base(num, channels, height, width) {}
  explicit Blob(const vector<int>& shape) : Base(shape) {}

  int count() const { return as_int(Base::count(), "count()"); }
  int count(int start_axis, int end_axis) const {
    return as_int(Base::count(start_axis, end_axis), "count(start_axis, end_axis)");
  }
  int count(int start_axis) const { return as_int(Base::count(start_axis), "count(start_axis)"); }
  int offset(const int n, const int c = 0, const int h = 0, const int w = 0) const {
    return as_int(Base::offset(n, c, h, w), "offset(n, c, h, w)");
  }
  int offset(const vector<int>& indices) const { return as_int(Base::offset(indices), "offset(indices)"); }

  // Members of caffe::Blob itself, not only of the base: a pointer to one names caffe::Blob
  // as its class, which is what Boost.Python needs to call it on a caffe::Blob (pycaffe
  // binds &Blob<Dtype>::num, ::mutable_cpu_data, ...; a base member would not match).
  const vector<int>& shape() const { return Base::shape(); }
  int shape(int index) const { return Base::shape(index); }
  int num_axes() const { return Base::num_axes(); }
  int num() const { return Base::num(); }
  int channels() const { return Base::channels(); }
  int height() const { return Base::height(); }
  int width() const { return Base::width(); }
  const Dtype* cpu_data() const { return Base::cpu_data(); }
  const Dtype* cpu_diff() const { return Base::cpu_diff(); }
  const Dtype* gpu_data() const { return Base::gpu_data(); }
  const Dtype* gpu_diff() const { return Base::gpu_diff(); }
  Dtype* mutable_cpu_data() { return Base::mutable_cpu_data(); }
  Dtype* mutable_cpu_diff() { return Base::mutable_cpu_diff(); }
  Dtype* mutable_gpu_data() { return Base::mutable_gpu_data(); }
  Dtype* mutable_gpu_diff() { return Base::mutable_gpu_diff(); }

#ifdef BLOBRT_CAFFE_PROTO
  // Caffe's own BlobProto and BlobShape (see the top of this header).
  using Base::FromProto;
  using Base::Reshape;
  using Base::ShapeEquals;
  using Base::ToProto;
  void Reshape(const caffe::BlobShape& shape) { Base::Reshape(blobrt_shape(shape)); }
  bool ShapeEquals(const caffe::BlobProto& other) { return Base::ShapeEquals(blobrt_proto(other, false)); }
  void FromProto(const caffe::BlobProto& proto, bool reshape = true) {
    Base::FromProto(blobrt_proto(proto, true), reshape);
  }
  void ToProto(caffe::BlobProto* proto, bool write_diff = false) const {
    if (!proto) blobrt::detail::fail("ToProto: null BlobProto");
    blobrt::BlobProto ours;
    Base::ToProto(&ours, write_diff);
    proto->clear_shape();
    for (std::int64_t d : ours.shape().dim()) proto->mutable_shape()->add_dim(d);
    // The same precision's fields are replaced, as Caffe's ToProto does.
    if (std::is_same<Dtype, double>::value) {
      proto->clear_double_diff();
      proto->mutable_double_data()->Swap(ours.mutable_double_data());
      proto->mutable_double_diff()->Swap(ours.mutable_double_diff());
    } else {
      proto->clear_diff();
      proto->mutable_data()->Swap(ours.mutable_data());
      proto->mutable_diff()->Swap(ours.mutable_diff());
    }
  }

 private:
  static blobrt::BlobShape blobrt_shape(const caffe::BlobShape& shape) {
    blobrt::BlobShape out;
    for (std::int64_t d : shape.dim()) out.add_dim(d);
    return out;
  }
  // Field by field: the two messages have the same fields and numbers; the values go as
  // whole repeated fields (one copy each), never element by element.
  static blobrt::BlobProto blobrt_proto(const caffe::BlobProto& in, bool values) {
    blobrt::BlobProto out;
    if (in.has_shape()) *out.mutable_shape() = blobrt_shape(in.shape());
    if (in.has_num()) out.set_num(in.num());
    if (in.has_channels()) out.set_channels(in.channels());
    if (in.has_height()) out.set_height(in.height());
    if (in.has_width()) out.set_width(in.width());
    if (values) {
      *out.mutable_data() = in.data();
      *out.mutable_diff() = in.diff();
      *out.mutable_double_data() = in.double_data();
      *out.mutable_double_diff() = in.double_diff();
    }
    return out;
  }

 public:
#endif

 private:
  int as_int(std::int64_t value, const char* what) const {
    if (value > std::numeric_limits<int>::max()) {
      blobrt::detail::fail("caffe::Blob::", what, " is ", value, ", more than Caffe's int can hold (shape ",
                           this->shape_string(), "); use blobrt::Blob's 64-bit accessors");
    }
    return static_cast<int>(value);
  }
};

#ifndef BLOBRT_CAFFE_PROTO
using blobrt::BlobProto;
using blobrt::BlobShape;
#endif
using blobrt::kMaxBlobAxes;
using blobrt::SyncedMemory;

// blobrt-caffe's caffe/*.hpp headers (BLOBRT_CAFFE_HEADERS) declare Caffe's own io.hpp,
// defined by Caffe's io.cpp: then these would conflict with it.
#ifndef BLOBRT_CAFFE_HEADERS
using blobrt::ReadProtoFromBinaryFile;
using blobrt::ReadProtoFromBinaryFileOrDie;
using blobrt::ReadProtoFromTextFile;
using blobrt::ReadProtoFromTextFileOrDie;
using blobrt::WriteProtoToBinaryFile;
using blobrt::WriteProtoToTextFile;
#endif

#ifndef BLOBRT_CAFFE_PROTO
using blobrt::BlobProtoVector;
#endif

// ---- host memory (caffe/syncedmem.hpp) ----
namespace pinned_host_detail {

// Which device each page-locked buffer came from. Caffe's CaffeFreeHost(ptr, use_cuda) names
// no device, and the thread's current device may have changed since the allocation (a
// DeviceGuard, Caffe::SetDevice): that device's release_host would be handed a pointer it
// never gave out. Never destroyed, so buffers freed by static destructors still find theirs.
struct Owners {
  std::mutex mutex;
  std::unordered_map<void*, std::shared_ptr<blobrt::Device>> of;
};
inline Owners& owners() {
  static Owners* owners = new Owners;
  return *owners;
}

// Page-locked memory from `device` when it offers it, remembered with its device; nullptr
// when it does not.
inline void* allocate(const std::shared_ptr<blobrt::Device>& device, std::size_t size) {
  void* pinned = size ? device->allocate_host(size) : nullptr;
  if (pinned) {
    try {
      std::lock_guard<std::mutex> lock(owners().mutex);
      owners().of.emplace(pinned, device);
    } catch (...) {
      device->release_host(pinned);
      throw;
    }
  }
  return pinned;
}

// Gives `pointer` back to the device that allocated it. A pointer no device gave out is an
// error (Caffe's cudaFreeHost fails on one too), never handed to some device to guess.
inline void release(void* pointer) {
  std::shared_ptr<blobrt::Device> device;
  {
    std::lock_guard<std::mutex> lock(owners().mutex);
    auto found = owners().of.find(pointer);
    if (found == owners().of.end()) {
      blobrt::detail::fail("CaffeFreeHost: ", pointer, " is not page-locked memory CaffeMallocHost gave out");
    }
    device = std::move(found->second);
    owners().of.erase(found);
  }
  device->release_host(pointer);
}

}  // namespace pinned_host_detail

// Page-locked memory from the current device when it offers it (Caffe: cudaMallocHost in
// GPU mode), else ordinary aligned memory; *use_cuda says which, for CaffeFreeHost, which
// gives page-locked memory back to the device it came from.
inline void CaffeMallocHost(void** ptr, std::size_t size, bool* use_cuda) {
  void* pinned = pinned_host_detail::allocate(blobrt::current_device(), size);
  *use_cuda = pinned != nullptr;
  *ptr = pinned ? pinned : std::aligned_alloc(64, (size + 63) / 64 * 64 + (size ? 0 : 64));
  if (!*ptr) blobrt::detail::fail("CaffeMallocHost: host allocation of size ", size, " failed");
}
inline void CaffeFreeHost(void* ptr, bool use_cuda) {
  if (use_cuda) {
    pinned_host_detail::release(ptr);
  } else {
    std::free(ptr);
  }
}

}  // namespace caffe

#endif  // BLOBRT_CAFFE_COMPAT_HPP
