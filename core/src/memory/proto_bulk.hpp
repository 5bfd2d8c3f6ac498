// Bulk moves between Blob memory and BlobProto's packed repeated fields: one reserve and
// one memcpy (or one converting loop) per field, never a per-element add_data().
#ifndef BLOBRT_PROTO_BULK_HPP
#define BLOBRT_PROTO_BULK_HPP

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "blobrt.pb.h"
#include "blobrt/error.hpp"
#include "blobrt_kernels/huge_pages.hpp"
#include "blobrt_kernels/level1.hpp"

namespace blobrt::proto_bulk {

// A protobuf message cannot exceed 2 GiB (INT_MAX bytes) when serialised.
inline void check_fits_in_message(std::int64_t count, std::size_t element_size, bool with_diff,
                                  const std::string& shape) {
  const std::uint64_t limit = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  std::uint64_t payload = static_cast<std::uint64_t>(count) * element_size * (with_diff ? 2 : 1);
  if (payload + 1024 > limit) {
    detail::fail("ToProto: Blob with shape ", shape, " needs ", payload,
                 " bytes of values, more than a protobuf message can hold (2 GiB); "
                 "split the blob or store it with another format");
  }
}

template <typename T>
void fill(google::protobuf::RepeatedField<T>* field, std::int64_t count, const T* values) {
  field->Clear();
  if (count == 0) return;
  field->Reserve(static_cast<int>(count));
  T* out = field->AddNAlreadyReserved(static_cast<int>(count));
  // Fresh from malloc and not yet touched: ask for huge pages before the copy faults it in.
  blobrt_kernels::advise_huge_pages(out, static_cast<std::size_t>(count) * sizeof(T));
  blobrt_kernels::copy_bytes(out, values, static_cast<std::size_t>(count) * sizeof(T));
}

// Caffe's ToProto: shape already set; float blobs fill data/diff, double blobs
// double_data/double_diff; the fields of the same precision are cleared first.
template <typename Dtype>
void write_values(BlobProto* proto, std::int64_t count, const Dtype* data, const Dtype* diff,
                  bool write_diff) {
  if constexpr (std::is_same_v<Dtype, float>) {
    fill(proto->mutable_data(), count, data);
    proto->clear_diff();
    if (write_diff) fill(proto->mutable_diff(), count, diff);
  } else {
    fill(proto->mutable_double_data(), count, data);
    proto->clear_double_diff();
    if (write_diff) fill(proto->mutable_double_diff(), count, diff);
  }
}

template <typename From, typename To>
void convert(const From* in, std::int64_t count, To* out) {
  if constexpr (std::is_same_v<From, To>) {
    blobrt_kernels::copy_bytes(out, in, static_cast<std::size_t>(count) * sizeof(To));
  } else {
    blobrt_kernels::parallel_for(count, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) out[i] = static_cast<To>(in[i]);
    });
  }
}

// The double field is read if it has values, else the float one; it must hold exactly
// count values.
inline void check_values(const google::protobuf::RepeatedField<double>& doubles,
                         const google::protobuf::RepeatedField<float>& floats, const char* name,
                         const std::string& shape, std::int64_t count) {
  bool use_double = doubles.size() > 0;
  std::int64_t have = use_double ? doubles.size() : floats.size();
  if (have != count) {
    detail::fail("FromProto: ", use_double ? "double_" : "", name, " has ", have,
                 " values but the Blob shape ", shape, " needs ", count);
  }
}

// Copies the field check_values() chose into out (count values).
template <typename Dtype>
void read_values(const google::protobuf::RepeatedField<double>& doubles,
                 const google::protobuf::RepeatedField<float>& floats, std::int64_t count, Dtype* out) {
  if (doubles.size() > 0) {
    convert(doubles.data(), count, out);
  } else {
    convert(floats.data(), count, out);
  }
}

}  // namespace blobrt::proto_bulk

#endif
