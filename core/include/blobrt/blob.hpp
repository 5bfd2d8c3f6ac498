// Blob: Caffe's N-dimensional array with data and diff, over SyncedMemory.
// Same members, names, default arguments and semantics as Caffe's blob.hpp, except
// (see docs/differences-from-caffe.md): count() and offsets are 64-bit, and every Caffe CHECK
// throws blobrt::Error naming the values instead of aborting.
#ifndef BLOBRT_BLOB_HPP
#define BLOBRT_BLOB_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blobrt.pb.h"
#include "blobrt/error.hpp"
#include "blobrt/syncedmem.hpp"

namespace blobrt {

constexpr int kMaxBlobAxes = 32;

template <typename Dtype>
class Blob {
 public:
  Blob() : data_(), diff_(), count_(0), capacity_(0) {}
  explicit Blob(const int num, const int channels, const int height, const int width);
  explicit Blob(const std::vector<int>& shape);
  Blob(const Blob&) = delete;
  Blob& operator=(const Blob&) = delete;

  void Reshape(const int num, const int channels, const int height, const int width);
  void Reshape(const std::vector<int>& shape);
  void Reshape(const BlobShape& shape);
  void ReshapeLike(const Blob& other);

  std::string shape_string() const;
  const std::vector<int>& shape() const { return shape_; }
  int shape(int index) const { return shape_[CanonicalAxisIndex(index)]; }
  int num_axes() const { return static_cast<int>(shape_.size()); }
  std::int64_t count() const { return count_; }
  std::int64_t count(int start_axis, int end_axis) const;
  std::int64_t count(int start_axis) const { return count(start_axis, num_axes()); }
  int CanonicalAxisIndex(int axis_index) const;

  // Deprecated legacy shape accessors (1-padded to 4 axes).
  int num() const { return LegacyShape(0); }
  int channels() const { return LegacyShape(1); }
  int height() const { return LegacyShape(2); }
  int width() const { return LegacyShape(3); }
  int LegacyShape(int index) const;

  std::int64_t offset(const int n, const int c = 0, const int h = 0, const int w = 0) const;
  std::int64_t offset(const std::vector<int>& indices) const;

  void CopyFrom(const Blob<Dtype>& source, bool copy_diff = false, bool reshape = false);

  Dtype data_at(const int n, const int c, const int h, const int w) const;
  Dtype diff_at(const int n, const int c, const int h, const int w) const;
  Dtype data_at(const std::vector<int>& index) const;
  Dtype diff_at(const std::vector<int>& index) const;

  const std::shared_ptr<SyncedMemory>& data() const;
  const std::shared_ptr<SyncedMemory>& diff() const;

  const Dtype* cpu_data() const;
  void set_cpu_data(Dtype* data);
  const int* gpu_shape() const;
  const Dtype* gpu_data() const;
  void set_gpu_data(Dtype* data);
  const Dtype* cpu_diff() const;
  const Dtype* gpu_diff() const;
  Dtype* mutable_cpu_data();
  Dtype* mutable_gpu_data();
  Dtype* mutable_cpu_diff();
  Dtype* mutable_gpu_diff();
  void Update();
  void FromProto(const BlobProto& proto, bool reshape = true);
  void ToProto(BlobProto* proto, bool write_diff = false) const;

  Dtype asum_data() const;
  Dtype asum_diff() const;
  Dtype sumsq_data() const;
  Dtype sumsq_diff() const;
  void scale_data(Dtype scale_factor);
  void scale_diff(Dtype scale_factor);

  void ShareData(const Blob& other);
  void ShareDiff(const Blob& other);

  bool ShapeEquals(const BlobProto& other);

 protected:
  std::shared_ptr<SyncedMemory> data_;
  std::shared_ptr<SyncedMemory> diff_;
  std::shared_ptr<SyncedMemory> shape_data_;
  std::vector<int> shape_;
  std::int64_t count_;
  std::int64_t capacity_;

 private:
  const std::shared_ptr<SyncedMemory>& checked(const std::shared_ptr<SyncedMemory>& mem,
                                               const char* what) const;
  std::int64_t checked_element(std::int64_t offset) const;
  void memory_of_exact_size();
};

extern template class Blob<float>;
extern template class Blob<double>;

// The shape Blob::FromProto(proto, true) gives a Blob and the number of values it reads,
// checked as FromProto checks them (axes, dimensions, size, the value count of the precision
// it would read), without copying any value: for code that reads a BlobProto's values itself
// (a model file's weights as NumPy arrays, `blobrt inspect`). Throws blobrt::Error as
// FromProto would; an empty Blob (no axes, no values) is {{}, 0}.
struct BlobProtoShape {
  std::vector<int> shape;
  std::int64_t count = 0;
};
BlobProtoShape blob_proto_shape(const BlobProto& proto);

}  // namespace blobrt

#endif  // BLOBRT_BLOB_HPP
