#include "blobrt/blob.hpp"

#include <climits>
#include <cstring>
#include <limits>
#include <sstream>

#include "blob_math.hpp"
#include "proto_bulk.hpp"

namespace blobrt {

using detail::fail;

namespace {

// The element count of a shape, validated: Reshape's checks, usable before anything changes.
std::int64_t checked_count(const std::vector<int>& shape, std::size_t element_size) {
  if (shape.size() > static_cast<std::size_t>(kMaxBlobAxes)) {
    fail("Reshape: ", shape.size(), " axes exceed kMaxBlobAxes = ", kMaxBlobAxes);
  }
  std::int64_t count = 1;
  const std::int64_t max_count =
      static_cast<std::int64_t>(std::numeric_limits<std::size_t>::max() / element_size / 2);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      std::ostringstream dims;
      for (int d : shape) dims << d << " ";
      fail("Reshape: dimension ", i, " is ", shape[i], " (must be >= 0) in shape ", dims.str());
    }
    if (count != 0 && shape[i] > max_count / count) {
      fail("Reshape: blob size exceeds the addressable limit at axis ", i, " (", count, " * ",
           shape[i], " elements)");
    }
    count *= shape[i];
  }
  return count;
}

std::vector<int> dims_of(const BlobShape& shape) {
  if (shape.dim_size() > kMaxBlobAxes) {
    fail("Reshape: BlobShape has ", shape.dim_size(), " axes, more than kMaxBlobAxes = ",
         kMaxBlobAxes);
  }
  std::vector<int> dims(shape.dim_size());
  for (int i = 0; i < shape.dim_size(); ++i) {
    if (shape.dim(i) > INT_MAX || shape.dim(i) < INT_MIN) {
      fail("Reshape: BlobShape dimension ", i, " is ", shape.dim(i),
           ", outside the int range of a single dimension");
    }
    dims[i] = static_cast<int>(shape.dim(i));
  }
  return dims;
}

// The shape a BlobProto gives a Blob: the deprecated 4-D fields where any is set, else `shape`.
std::vector<int> proto_dims(const BlobProto& proto) {
  if (proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width()) {
    return {proto.num(), proto.channels(), proto.height(), proto.width()};
  }
  return dims_of(proto.shape());
}

// What ToProto writes for a default-constructed Blob (no axes, count 0): no axes and no
// values. Caffe reads it as a scalar needing one value and fails; blobrt reads it back as
// the Blob it came from (docs/differences-from-caffe.md). A scalar always has one value.
bool is_empty_blob(const BlobProto& proto) {
  const bool legacy = proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width();
  return !legacy && proto.shape().dim_size() == 0 && proto.data_size() == 0 && proto.diff_size() == 0 &&
         proto.double_data_size() == 0 && proto.double_diff_size() == 0;
}

std::string shape_text(const std::vector<int>& shape, std::int64_t count) {
  std::ostringstream stream;
  for (int d : shape) stream << d << " ";
  stream << "(" << count << ")";
  return stream.str();
}

}  // namespace

template <typename Dtype>
Blob<Dtype>::Blob(const int num, const int channels, const int height, const int width)
    : count_(0), capacity_(0) {
  Reshape(num, channels, height, width);
}

template <typename Dtype>
Blob<Dtype>::Blob(const std::vector<int>& shape) : count_(0), capacity_(0) {
  Reshape(shape);
}

template <typename Dtype>
void Blob<Dtype>::Reshape(const int num, const int channels, const int height, const int width) {
  Reshape(std::vector<int>{num, channels, height, width});
}

template <typename Dtype>
void Blob<Dtype>::Reshape(const std::vector<int>& shape) {
  // Validate everything before changing anything, so a failed Reshape leaves the blob as it was.
  const std::int64_t count = checked_count(shape, sizeof(Dtype));
  if (!shape_data_ || shape_data_->size() < shape.size() * sizeof(int)) {
    shape_data_ = std::make_shared<SyncedMemory>(shape.size() * sizeof(int));
  }
  int* shape_data = static_cast<int*>(shape_data_->mutable_cpu_data());
  if (!shape.empty()) std::memcpy(shape_data, shape.data(), shape.size() * sizeof(int));
  shape_ = shape;
  count_ = count;
  // As Caffe, shrinking keeps the allocation (capacity). Unlike Caffe (issue #5439), growth
  // is measured against the memory the blob really holds, which ShareData/ShareDiff and
  // set_cpu_data/set_gpu_data may have made smaller than capacity_: growing past it
  // reallocates instead of writing past what was given.
  const std::size_t bytes = static_cast<std::size_t>(count_) * sizeof(Dtype);
  bool both_too_small = !data_ || (data_->size() < bytes && diff_->size() < bytes);
  // blobrt also shrinks memory that was never allocated, so a blob whose first touch
  // failed (too large) stays usable; never memory another blob shares.
  bool never_allocated = data_ && data_->head() == SyncedMemory::UNINITIALIZED &&
                         diff_->head() == SyncedMemory::UNINITIALIZED;
  bool shared = data_ && (data_.use_count() > 1 || diff_.use_count() > 1);
  if (count_ > capacity_ || both_too_small || (never_allocated && !shared && count_ < capacity_)) {
    capacity_ = count_;
    data_ = std::make_shared<SyncedMemory>(static_cast<std::size_t>(capacity_) * sizeof(Dtype));
    diff_ = std::make_shared<SyncedMemory>(static_cast<std::size_t>(capacity_) * sizeof(Dtype));
    return;
  }
  // Within capacity_, only one side may be too small: libblobrt-dist re-points a diff at a
  // view of exactly count() elements of its fused buffer. That side alone gets fresh
  // memory (of capacity_, as the other); the other keeps its values, as it would in Caffe.
  const std::size_t capacity_bytes = static_cast<std::size_t>(capacity_) * sizeof(Dtype);
  if (data_->size() < bytes) data_ = std::make_shared<SyncedMemory>(capacity_bytes);
  if (diff_->size() < bytes) diff_ = std::make_shared<SyncedMemory>(capacity_bytes);
}

template <typename Dtype>
void Blob<Dtype>::Reshape(const BlobShape& shape) {
  Reshape(dims_of(shape));
}

template <typename Dtype>
void Blob<Dtype>::ReshapeLike(const Blob<Dtype>& other) {
  Reshape(other.shape());
}

template <typename Dtype>
std::string Blob<Dtype>::shape_string() const {
  return shape_text(shape_, count_);
}

template <typename Dtype>
int Blob<Dtype>::CanonicalAxisIndex(int axis_index) const {
  if (axis_index < -num_axes() || axis_index >= num_axes()) {
    fail("axis ", axis_index, " out of range for ", num_axes(), "-D Blob with shape ",
         shape_string());
  }
  return axis_index < 0 ? axis_index + num_axes() : axis_index;
}

template <typename Dtype>
std::int64_t Blob<Dtype>::count(int start_axis, int end_axis) const {
  if (start_axis > end_axis || start_axis < 0 || end_axis < 0 || start_axis > num_axes() ||
      end_axis > num_axes()) {
    fail("count(", start_axis, ", ", end_axis, "): axes out of range for ", num_axes(),
         "-D Blob with shape ", shape_string());
  }
  std::int64_t count = 1;
  for (int i = start_axis; i < end_axis; ++i) count *= shape(i);
  return count;
}

template <typename Dtype>
int Blob<Dtype>::LegacyShape(int index) const {
  if (num_axes() > 4) {
    fail("Cannot use legacy accessors on Blobs with > 4 axes (shape ", shape_string(), ")");
  }
  if (index >= 4 || index < -4) fail("LegacyShape: index ", index, " outside [-4, 3]");
  if (index >= num_axes() || index < -num_axes()) {
    // Axis is out of range, but still in [0, 3] (or [-4, -1] for reverse indexing)
    // -- this special case simulates the one-padding used to fill extraneous axes of legacy blobs.
    return 1;
  }
  return shape(index);
}

template <typename Dtype>
std::int64_t Blob<Dtype>::offset(const int n, const int c, const int h, const int w) const {
  // Caffe's checks, including its "<=" bounds (one past the end is a valid offset).
  auto check = [this](const char* name, int value, int limit) {
    if (value < 0 || value > limit) {
      fail("offset: ", name, " = ", value, " outside [0, ", limit, "] for Blob with shape ",
           shape_string());
    }
  };
  check("n", n, num());
  check("c", c, channels());
  check("h", h, height());
  check("w", w, width());
  return ((static_cast<std::int64_t>(n) * channels() + c) * height() + h) * width() + w;
}

template <typename Dtype>
std::int64_t Blob<Dtype>::offset(const std::vector<int>& indices) const {
  if (indices.size() > shape_.size()) {
    fail("offset: ", indices.size(), " indices for ", num_axes(), "-D Blob with shape ",
         shape_string());
  }
  std::int64_t offset = 0;
  for (int i = 0; i < num_axes(); ++i) {
    offset *= shape(i);
    if (static_cast<int>(indices.size()) > i) {
      if (indices[i] < 0 || indices[i] >= shape(i)) {
        fail("offset: index ", indices[i], " at axis ", i, " outside [0, ", shape(i),
             ") for Blob with shape ", shape_string());
      }
      offset += indices[i];
    }
  }
  return offset;
}

template <typename Dtype>
std::int64_t Blob<Dtype>::checked_element(std::int64_t offset) const {
  // Caffe reads past the end here; blobrt refuses (offset() allows one past the end).
  if (offset >= count_) {
    fail("element offset ", offset, " is past the end of Blob with shape ", shape_string());
  }
  return offset;
}

template <typename Dtype>
Dtype Blob<Dtype>::data_at(const int n, const int c, const int h, const int w) const {
  return cpu_data()[checked_element(offset(n, c, h, w))];
}
template <typename Dtype>
Dtype Blob<Dtype>::diff_at(const int n, const int c, const int h, const int w) const {
  return cpu_diff()[checked_element(offset(n, c, h, w))];
}
template <typename Dtype>
Dtype Blob<Dtype>::data_at(const std::vector<int>& index) const {
  return cpu_data()[checked_element(offset(index))];
}
template <typename Dtype>
Dtype Blob<Dtype>::diff_at(const std::vector<int>& index) const {
  return cpu_diff()[checked_element(offset(index))];
}

template <typename Dtype>
const std::shared_ptr<SyncedMemory>& Blob<Dtype>::checked(const std::shared_ptr<SyncedMemory>& mem,
                                                          const char* what) const {
  if (!mem) fail(what, ": Blob has no memory (default-constructed and never reshaped)");
  return mem;
}

template <typename Dtype>
const std::shared_ptr<SyncedMemory>& Blob<Dtype>::data() const {
  return checked(data_, "data()");
}
template <typename Dtype>
const std::shared_ptr<SyncedMemory>& Blob<Dtype>::diff() const {
  return checked(diff_, "diff()");
}

template <typename Dtype>
const Dtype* Blob<Dtype>::cpu_data() const {
  return static_cast<const Dtype*>(checked(data_, "cpu_data")->cpu_data());
}

// Memory set from outside holds exactly count() elements: data and diff are resized to
// that (as Caffe does, so that their sizes stay equal).
template <typename Dtype>
void Blob<Dtype>::memory_of_exact_size() {
  std::size_t size = static_cast<std::size_t>(count_) * sizeof(Dtype);
  if (!data_ || data_->size() != size) {
    data_ = std::make_shared<SyncedMemory>(size);
    diff_ = std::make_shared<SyncedMemory>(size);
  }
}

template <typename Dtype>
void Blob<Dtype>::set_cpu_data(Dtype* data) {
  if (!data) fail("set_cpu_data: null pointer for Blob with shape ", shape_string());
  memory_of_exact_size();
  data_->set_cpu_data(data);
}

template <typename Dtype>
const int* Blob<Dtype>::gpu_shape() const {
  return static_cast<const int*>(checked(shape_data_, "gpu_shape")->gpu_data());
}

template <typename Dtype>
const Dtype* Blob<Dtype>::gpu_data() const {
  return static_cast<const Dtype*>(checked(data_, "gpu_data")->gpu_data());
}

template <typename Dtype>
void Blob<Dtype>::set_gpu_data(Dtype* data) {
  if (!data) fail("set_gpu_data: null handle for Blob with shape ", shape_string());
  memory_of_exact_size();
  data_->set_gpu_data(data);
}

template <typename Dtype>
const Dtype* Blob<Dtype>::cpu_diff() const {
  return static_cast<const Dtype*>(checked(diff_, "cpu_diff")->cpu_data());
}
template <typename Dtype>
const Dtype* Blob<Dtype>::gpu_diff() const {
  return static_cast<const Dtype*>(checked(diff_, "gpu_diff")->gpu_data());
}
template <typename Dtype>
Dtype* Blob<Dtype>::mutable_cpu_data() {
  return static_cast<Dtype*>(checked(data_, "mutable_cpu_data")->mutable_cpu_data());
}
template <typename Dtype>
Dtype* Blob<Dtype>::mutable_gpu_data() {
  return static_cast<Dtype*>(checked(data_, "mutable_gpu_data")->mutable_gpu_data());
}
template <typename Dtype>
Dtype* Blob<Dtype>::mutable_cpu_diff() {
  return static_cast<Dtype*>(checked(diff_, "mutable_cpu_diff")->mutable_cpu_data());
}
template <typename Dtype>
Dtype* Blob<Dtype>::mutable_gpu_diff() {
  return static_cast<Dtype*>(checked(diff_, "mutable_gpu_diff")->mutable_gpu_data());
}

template <typename Dtype>
void Blob<Dtype>::ShareData(const Blob& other) {
  if (count_ != other.count()) {
    fail("ShareData: count ", count_, " (shape ", shape_string(), ") != other count ",
         other.count(), " (shape ", other.shape_string(), ")");
  }
  data_ = other.data();
}

template <typename Dtype>
void Blob<Dtype>::ShareDiff(const Blob& other) {
  if (count_ != other.count()) {
    fail("ShareDiff: count ", count_, " (shape ", shape_string(), ") != other count ",
         other.count(), " (shape ", other.shape_string(), ")");
  }
  diff_ = other.diff();
}

// The math goes where the head is, as in Caffe: host when the head is at the CPU,
// the memory's own device when it is at the device or synced (blob_math.hpp). Data and
// diff on two devices (ShareData/ShareDiff across devices) is an error naming both.
template <typename Dtype>
void Blob<Dtype>::Update() {
  if (!data_) fail("Update: Blob has no memory (shape ", shape_string(), ")");
  if (data_->head() == SyncedMemory::UNINITIALIZED) {
    fail("Update: Syncedmem not initialized (Blob with shape ", shape_string(), ")");
  }
  blob_math::same_device(*data_, "its data", *diff_, "its diff", "Update");
  const bool device_side = blob_math::on_device(*data_);
  const void* diff = blob_math::side_data(*diff_, device_side);
  void* data = blob_math::side_mutable_data(*data_, device_side);
  blob_math::math_device(*data_, device_side).axpy(count_, Dtype(-1), diff, 0, data, 0);
}

template <typename Dtype>
static Dtype asum_of(SyncedMemory* mem, std::int64_t count) {
  if (!mem || mem->head() == SyncedMemory::UNINITIALIZED) return 0;
  const bool device_side = blob_math::on_device(*mem);
  Dtype result = 0;
  const void* x = blob_math::side_data(*mem, device_side);
  blob_math::math_device(*mem, device_side).asum(count, x, 0, &result);
  return result;
}

template <typename Dtype>
static Dtype sumsq_of(SyncedMemory* mem, std::int64_t count) {
  if (!mem || mem->head() == SyncedMemory::UNINITIALIZED) return 0;
  const bool device_side = blob_math::on_device(*mem);
  Dtype result = 0;
  const void* x = blob_math::side_data(*mem, device_side);
  blob_math::math_device(*mem, device_side).dot(count, x, 0, x, 0, &result);
  return result;
}

template <typename Dtype>
static void scale_of(SyncedMemory* mem, std::int64_t count, Dtype factor) {
  if (!mem || mem->head() == SyncedMemory::UNINITIALIZED) return;
  const bool device_side = blob_math::on_device(*mem);
  void* x = blob_math::side_mutable_data(*mem, device_side);
  blob_math::math_device(*mem, device_side).scal(count, factor, x, 0);
}

template <typename Dtype>
Dtype Blob<Dtype>::asum_data() const { return asum_of<Dtype>(data_.get(), count_); }
template <typename Dtype>
Dtype Blob<Dtype>::asum_diff() const { return asum_of<Dtype>(diff_.get(), count_); }
template <typename Dtype>
Dtype Blob<Dtype>::sumsq_data() const { return sumsq_of<Dtype>(data_.get(), count_); }
template <typename Dtype>
Dtype Blob<Dtype>::sumsq_diff() const { return sumsq_of<Dtype>(diff_.get(), count_); }
template <typename Dtype>
void Blob<Dtype>::scale_data(Dtype scale_factor) { scale_of<Dtype>(data_.get(), count_, scale_factor); }
template <typename Dtype>
void Blob<Dtype>::scale_diff(Dtype scale_factor) { scale_of<Dtype>(diff_.get(), count_, scale_factor); }

template <typename Dtype>
bool Blob<Dtype>::ShapeEquals(const BlobProto& other) {
  if (other.has_num() || other.has_channels() || other.has_height() || other.has_width()) {
    // Using deprecated 4D Blob dimensions -- shape is (num, channels, height, width).
    // Legacy parameter blobs were indexed from the end of the blob shape (e.g. bias Blob
    // shape (1 x 1 x 1 x N)), hence LegacyShape(-4..-1).
    return shape_.size() <= 4 && LegacyShape(-4) == other.num() &&
           LegacyShape(-3) == other.channels() && LegacyShape(-2) == other.height() &&
           LegacyShape(-1) == other.width();
  }
  if (other.shape().dim_size() != num_axes()) return false;
  for (int i = 0; i < other.shape().dim_size(); ++i) {
    if (other.shape().dim(i) != shape_[i]) return false;
  }
  return true;
}

template <typename Dtype>
void Blob<Dtype>::CopyFrom(const Blob& source, bool copy_diff, bool reshape) {
  if (source.count() != count_ || source.shape() != shape_) {
    if (reshape) {
      ReshapeLike(source);
    } else {
      fail("Trying to copy blobs of different sizes: ", source.shape_string(), " into ",
           shape_string(), " (reshape not set)");
    }
  }
  if (count_ == 0) return;
  const std::shared_ptr<SyncedMemory>& from = copy_diff ? source.diff() : source.data();
  const std::shared_ptr<SyncedMemory>& to = copy_diff ? diff_ : data_;
  if (from == to) return;  // shared memory: copying onto itself
  blob_math::same_device(*from, "the source", *to, "this Blob", "CopyFrom");
  std::size_t bytes = static_cast<std::size_t>(count_) * sizeof(Dtype);
  // Caffe picks the side by Caffe::mode(); blobrt by where the source's newest copy is.
  if (from->head() == SyncedMemory::HEAD_AT_GPU || from->head() == SyncedMemory::SYNCED) {
    const void* src = from->gpu_data();
    void* dst = to->mutable_gpu_data();
    to->device()->copy_device(src, 0, dst, 0, bytes);
  } else {
    const void* src = from->cpu_data();
    std::memcpy(to->mutable_cpu_data(), src, bytes);
  }
}

// Every check comes before any change: a FromProto that fails leaves the blob as it was.
template <typename Dtype>
void Blob<Dtype>::FromProto(const BlobProto& proto, bool reshape) {
  std::vector<int> target = shape_;
  const bool empty_blob = is_empty_blob(proto);
  if (reshape) {
    target = proto_dims(proto);
  } else if (!ShapeEquals(proto) || (empty_blob && count_ != 0)) {
    fail("FromProto: shape mismatch (reshape not set): Blob has shape ", shape_string(),
         empty_blob ? ", the BlobProto is an empty Blob (no axes, no values)" : "");
  }
  if (empty_blob) {
    shape_.clear();  // keeps its memory, as a Reshape to fewer elements does
    count_ = 0;
    return;
  }
  const std::int64_t count = checked_count(target, sizeof(Dtype));
  const std::string shape = shape_text(target, count);
  // Either precision is read; double_* wins when present, as in Caffe.
  proto_bulk::check_values(proto.double_data(), proto.data(), "data", shape, count);
  const bool has_diff = proto.double_diff_size() > 0 || proto.diff_size() > 0;
  if (has_diff) proto_bulk::check_values(proto.double_diff(), proto.diff(), "diff", shape, count);
  if (reshape) Reshape(target);
  if (count == 0) return;
  proto_bulk::read_values(proto.double_data(), proto.data(), count, mutable_cpu_data());
  if (has_diff) proto_bulk::read_values(proto.double_diff(), proto.diff(), count, mutable_cpu_diff());
}

BlobProtoShape blob_proto_shape(const BlobProto& proto) {
  if (is_empty_blob(proto)) return {};
  BlobProtoShape out{proto_dims(proto), 0};
  // The element size only bounds the count: that of the precision FromProto would read.
  out.count = checked_count(out.shape, proto.double_data_size() > 0 ? sizeof(double) : sizeof(float));
  proto_bulk::check_values(proto.double_data(), proto.data(), "data", shape_text(out.shape, out.count), out.count);
  return out;
}

template <typename Dtype>
void Blob<Dtype>::ToProto(BlobProto* proto, bool write_diff) const {
  if (!proto) fail("ToProto: null BlobProto");
  proto_bulk::check_fits_in_message(count_, sizeof(Dtype), write_diff, shape_string());
  proto->clear_shape();
  BlobShape* shape = proto->mutable_shape();
  shape->mutable_dim()->Reserve(num_axes());
  for (int d : shape_) shape->add_dim(d);
  proto_bulk::write_values<Dtype>(proto, count_, count_ ? cpu_data() : nullptr,
                                  write_diff ? (count_ ? cpu_diff() : nullptr) : nullptr, write_diff);
}

// Integer blobs (labels, indices) as in Caffe: storage, shapes, sharing and FromProto;
// their math and ToProto fail, as Caffe's NOT_IMPLEMENTED does.
#define BLOBRT_NO_INTEGER_MATH(Dtype, type_name)                                                   \
  template <>                                                                                    \
  void Blob<Dtype>::Update() {                                                                   \
    fail("Blob<" type_name ">::Update: no math on integer blobs (as in Caffe); shape ", shape_string()); \
  }                                                                                              \
  template <>                                                                                    \
  Dtype Blob<Dtype>::asum_data() const {                                                         \
    fail("Blob<" type_name ">::asum_data: no math on integer blobs (as in Caffe)");               \
  }                                                                                              \
  template <>                                                                                    \
  Dtype Blob<Dtype>::asum_diff() const {                                                         \
    fail("Blob<" type_name ">::asum_diff: no math on integer blobs (as in Caffe)");               \
  }                                                                                              \
  template <>                                                                                    \
  Dtype Blob<Dtype>::sumsq_data() const {                                                        \
    fail("Blob<" type_name ">::sumsq_data: no math on integer blobs (as in Caffe)");              \
  }                                                                                              \
  template <>                                                                                    \
  Dtype Blob<Dtype>::sumsq_diff() const {                                                        \
    fail("Blob<" type_name ">::sumsq_diff: no math on integer blobs (as in Caffe)");              \
  }                                                                                              \
  template <>                                                                                    \
  void Blob<Dtype>::scale_data(Dtype) {                                                          \
    fail("Blob<" type_name ">::scale_data: no math on integer blobs (as in Caffe)");              \
  }                                                                                              \
  template <>                                                                                    \
  void Blob<Dtype>::scale_diff(Dtype) {                                                          \
    fail("Blob<" type_name ">::scale_diff: no math on integer blobs (as in Caffe)");              \
  }                                                                                              \
  template <>                                                                                    \
  void Blob<Dtype>::ToProto(BlobProto*, bool) const {                                            \
    fail("Blob<" type_name ">::ToProto: BlobProto holds float or double values only (Caffe "    \
         "defines ToProto for those two); shape ", shape_string());                               \
  }
BLOBRT_NO_INTEGER_MATH(int, "int")
BLOBRT_NO_INTEGER_MATH(unsigned int, "unsigned int")
// SSD's Caffe (weiliu89/caffe) keeps 0/1 overlap tables in Blob<bool> (its ApplyNMSGPU, its
// tests), and its blob.cpp instantiates it: so does blobrt, which replaces that file.
BLOBRT_NO_INTEGER_MATH(bool, "bool")
#undef BLOBRT_NO_INTEGER_MATH

template class Blob<float>;
template class Blob<double>;
template class Blob<int>;
template class Blob<unsigned int>;
template class Blob<bool>;

}  // namespace blobrt
