// Source compatibility with BVLC Caffe: code written against caffe/blob.hpp,
// caffe/syncedmem.hpp, caffe/util/io.hpp and the level-1 math of
// caffe/util/math_functions.hpp compiles with only its include changed to this one.
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
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

// Code that also uses Caffe's own messages (LayerParameter, FillerParameter, ...) includes
// Caffe's generated caffe.pb.h before this header, or defines BLOBRT_USE_CAFFE_PROTO:
// caffe::BlobProto and caffe::BlobShape are then Caffe's, and caffe::Blob reads and
// writes them (copying through blobrt's identical message: docs/differences-from-caffe.md).
#if defined(BLOBRT_USE_CAFFE_PROTO) || defined(GOOGLE_PROTOBUF_INCLUDED_caffe_2eproto) || \
    defined(GOOGLE_PROTOBUF_INCLUDED_caffe_2fproto_2fcaffe_2eproto)
#define BLOBRT_CAFFE_PROTO 1
#include "caffe/proto/caffe.pb.h"
#endif

#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"
#include "blobrt/runtime.hpp"
#include "blobrt/syncedmem.hpp"

namespace caffe {

// What caffe/common.hpp brings into namespace caffe.
using std::ifstream;
using std::ios;
using std::isnan;
using std::isinf;
using std::iterator;
using std::make_pair;
using std::map;
using std::ostringstream;
using std::pair;
using std::set;
using std::shared_ptr;
using std::string;
using std::stringstream;
using std::vector;

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

using blobrt::ReadProtoFromBinaryFile;
using blobrt::ReadProtoFromBinaryFileOrDie;
using blobrt::ReadProtoFromTextFile;
using blobrt::ReadProtoFromTextFileOrDie;
using blobrt::WriteProtoToBinaryFile;
using blobrt::WriteProtoToTextFile;

#ifndef BLOBRT_CAFFE_PROTO
using blobrt::BlobProtoVector;
#endif

// Caffe's singleton, as far as Blob code uses it: the mode is recorded (blobrt's math
// goes where the head is, not by mode) and the random seed seeds caffe_rng_*.
class Caffe {
 public:
  enum Brew { CPU, GPU };
  static Brew mode() { return state().mode; }
  static void set_mode(Brew mode) { state().mode = mode; }
  static void set_random_seed(const unsigned int seed) { state().generator.seed(seed); }
  // The generator behind caffe_rng_* (Caffe's is per thread, as this one).
  static std::mt19937& rng() { return state().generator; }

 private:
  struct State {
    Brew mode = CPU;
    std::mt19937 generator{std::random_device{}()};
  };
  static State& state() {
    thread_local State s;
    return s;
  }
};

// ---- random numbers (caffe/util/math_functions.hpp), from Caffe::rng() ----
template <typename Dtype>
void caffe_rng_uniform(const int n, const Dtype a, const Dtype b, Dtype* r) {
  if (n < 0 || !r || a > b) blobrt::detail::fail("caffe_rng_uniform: n ", n, ", range [", a, ", ", b, "]");
  std::uniform_real_distribution<Dtype> distribution(a, std::nextafter(b, std::numeric_limits<Dtype>::max()));
  for (int i = 0; i < n; ++i) r[i] = distribution(Caffe::rng());
}

template <typename Dtype>
void caffe_rng_gaussian(const int n, const Dtype mu, const Dtype sigma, Dtype* r) {
  if (n < 0 || !r || !(sigma > 0)) blobrt::detail::fail("caffe_rng_gaussian: n ", n, ", sigma ", sigma, " (must be > 0)");
  std::normal_distribution<Dtype> distribution(mu, sigma);
  for (int i = 0; i < n; ++i) r[i] = distribution(Caffe::rng());
}

template <typename Dtype, typename Int>
void caffe_rng_bernoulli(const int n, const Dtype p, Int* r) {
  if (n < 0 || !r || p < 0 || p > 1) blobrt::detail::fail("caffe_rng_bernoulli: n ", n, ", p ", p, " (must be in [0, 1])");
  std::bernoulli_distribution distribution(static_cast<double>(p));
  for (int i = 0; i < n; ++i) r[i] = static_cast<Int>(distribution(Caffe::rng()));
}

// ---- host memory (caffe/syncedmem.hpp) ----
// Page-locked memory from the active device when it offers it (Caffe: cudaMallocHost in
// GPU mode), else ordinary aligned memory; *use_cuda says which, for CaffeFreeHost.
inline void CaffeMallocHost(void** ptr, std::size_t size, bool* use_cuda) {
  void* pinned = size ? blobrt::active_device()->allocate_host(size) : nullptr;
  *use_cuda = pinned != nullptr;
  *ptr = pinned ? pinned : std::aligned_alloc(64, (size + 63) / 64 * 64 + (size ? 0 : 64));
  if (!*ptr) blobrt::detail::fail("CaffeMallocHost: host allocation of size ", size, " failed");
}
inline void CaffeFreeHost(void* ptr, bool use_cuda) {
  if (use_cuda) {
    blobrt::active_device()->release_host(ptr);
  } else {
    std::free(ptr);
  }
}

// ---- host math (caffe_cpu_* / caffe_*) ----
template <typename Dtype>
void caffe_set(const std::int64_t N, const Dtype alpha, Dtype* Y) {
  if (alpha == 0) {
    if (N > 0) std::memset(Y, 0, sizeof(Dtype) * static_cast<std::size_t>(N));
    return;
  }
  for (std::int64_t i = 0; i < N; ++i) Y[i] = alpha;
}

inline void caffe_memset(const std::size_t N, const int alpha, void* X) {
  std::memset(X, alpha, N);
}

template <typename Dtype>
void caffe_copy(const std::int64_t N, const Dtype* X, Dtype* Y) {
  if (X != Y && N > 0) std::memcpy(Y, X, sizeof(Dtype) * static_cast<std::size_t>(N));
}

template <typename Dtype>
void caffe_axpy(const std::int64_t N, const Dtype alpha, const Dtype* X, Dtype* Y) {
  blobrt::host_device()->axpy(N, alpha, X, 0, Y, 0);
}

template <typename Dtype>
void caffe_scal(const std::int64_t N, const Dtype alpha, Dtype* X) {
  blobrt::host_device()->scal(N, alpha, X, 0);
}

template <typename Dtype>
Dtype caffe_cpu_dot(const std::int64_t n, const Dtype* x, const Dtype* y) {
  Dtype result = 0;
  blobrt::host_device()->dot(n, x, 0, y, 0, &result);
  return result;
}

template <typename Dtype>
Dtype caffe_cpu_asum(const std::int64_t n, const Dtype* x) {
  Dtype result = 0;
  blobrt::host_device()->asum(n, x, 0, &result);
  return result;
}

// y = alpha * x
template <typename Dtype>
void caffe_cpu_scale(const std::int64_t n, const Dtype alpha, const Dtype* x, Dtype* y) {
  caffe_copy(n, x, y);
  caffe_scal(n, alpha, y);
}

// Y = alpha * X + beta * Y
template <typename Dtype>
void caffe_cpu_axpby(const std::int64_t N, const Dtype alpha, const Dtype* X, const Dtype beta, Dtype* Y) {
  caffe_scal(N, beta, Y);
  caffe_axpy(N, alpha, X, Y);
}

// ---- active-device math (caffe_gpu_*), on handles from gpu_data() ----
// Y[0..N) = alpha: a device memset for 0 (and for every value on a host-memory device),
// else one upload of N values (the Device interface has no fill).
template <typename Dtype>
void caffe_gpu_set(const std::int64_t N, const Dtype alpha, Dtype* Y) {
  if (N <= 0) return;
  const auto& device = blobrt::active_device();
  const std::size_t bytes = sizeof(Dtype) * static_cast<std::size_t>(N);
  if (alpha == 0) {
    device->memset(Y, 0, 0, bytes);
  } else if (device->description().host_memory) {
    caffe_set(N, alpha, Y);
  } else {
    std::vector<Dtype> values(static_cast<std::size_t>(N), alpha);
    device->copy_to_device(values.data(), Y, 0, bytes);
  }
}

inline void caffe_gpu_memset(const std::size_t N, const int alpha, void* X) {
  blobrt::active_device()->memset(X, 0, alpha, N);
}

// Copies N bytes in whichever direction X and Y make, as Caffe's (cudaMemcpyDefault): each
// is a buffer of the active device (as gpu_data() or Device::allocate returned it, not
// offset) or host memory. On devices whose memory is host memory it is a memcpy.
inline void caffe_gpu_memcpy(const std::size_t N, const void* X, void* Y) {
  if (X == Y || N == 0) return;
  blobrt::Device& device = *blobrt::active_device();
  if (device.description().host_memory) {
    std::memcpy(Y, X, N);
    return;
  }
  const bool from_device = device.is_buffer(X), to_device = device.is_buffer(Y);
  if (from_device && to_device) {
    device.copy_device(X, 0, Y, 0, N);
  } else if (from_device) {
    device.copy_to_host(X, 0, Y, N);
  } else if (to_device) {
    device.copy_to_device(X, Y, 0, N);
  } else {
    std::memcpy(Y, X, N);
  }
}

template <typename Dtype>
void caffe_gpu_axpy(const std::int64_t N, const Dtype alpha, const Dtype* X, Dtype* Y) {
  blobrt::active_device()->axpy(N, alpha, X, 0, Y, 0);
}

template <typename Dtype>
void caffe_gpu_scal(const std::int64_t N, const Dtype alpha, Dtype* X) {
  blobrt::active_device()->scal(N, alpha, X, 0);
}

// y = alpha * x
template <typename Dtype>
void caffe_gpu_scale(const std::int64_t n, const Dtype alpha, const Dtype* x, Dtype* y) {
  if (x != y && n > 0) blobrt::active_device()->copy_device(x, 0, y, 0, sizeof(Dtype) * static_cast<std::size_t>(n));
  blobrt::active_device()->scal(n, alpha, y, 0);
}

// Y = alpha * X + beta * Y
template <typename Dtype>
void caffe_gpu_axpby(const std::int64_t N, const Dtype alpha, const Dtype* X, const Dtype beta, Dtype* Y) {
  blobrt::active_device()->scal(N, beta, Y, 0);
  blobrt::active_device()->axpy(N, alpha, X, 0, Y, 0);
}

template <typename Dtype>
void caffe_gpu_dot(const std::int64_t n, const Dtype* x, const Dtype* y, Dtype* out) {
  blobrt::active_device()->dot(n, x, 0, y, 0, out);
}

template <typename Dtype>
void caffe_gpu_asum(const std::int64_t n, const Dtype* x, Dtype* y) {
  blobrt::active_device()->asum(n, x, 0, y);
}

}  // namespace caffe

#endif  // BLOBRT_CAFFE_COMPAT_HPP
