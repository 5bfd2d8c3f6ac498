// Tests of blobrt/device.hpp's layout: libblobrt.so.1's Device vtable only grows at its end.
// A program built against an older device.hpp calls a virtual by its slot; a virtual declared
// between two old ones (a new math operation expanded with the 1.2 group, say) would send
// that program's synchronize() to another function. The slots below are the ones the headers
// of plugin ABI 1.3 gave (90c7e86); what a later minor adds must come after them.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "blobrt/device.hpp"

namespace blobrt {
namespace {

// The vtable slot of a virtual member function, from its pointer-to-member (the Itanium C++
// ABI, which g++ and clang use on Linux: 1 + the slot's byte offset for a virtual).
template <typename F>
std::int64_t slot(F member) {
  static_assert(sizeof(F) == 2 * sizeof(void*), "an Itanium ABI pointer to member function");
  std::uintptr_t word = 0;
  std::memcpy(&word, &member, sizeof word);
  EXPECT_EQ(word % sizeof(void*), 1u) << "not a virtual function's pointer to member";
  return static_cast<std::int64_t>((word - 1) / sizeof(void*));
}

using TypedAxpyF = void (Device::*)(std::int64_t, float, ConstDeviceBuffer, std::int64_t, DeviceBuffer, std::int64_t);
using TypedAxpyD = void (Device::*)(std::int64_t, double, ConstDeviceBuffer, std::int64_t, DeviceBuffer, std::int64_t);
using TypedScalD = void (Device::*)(std::int64_t, double, DeviceBuffer, std::int64_t);

TEST(DeviceVtable, SlotsOfAbi13AreWhereTheyWere) {
  // Slots 0 and 1 are the destructor's two entries.
  EXPECT_EQ(slot(&Device::description), 2);
  EXPECT_EQ(slot(&Device::allocate), 3);
  EXPECT_EQ(slot(&Device::host_alias), 7);
  EXPECT_EQ(slot(&Device::view), 8);
  EXPECT_EQ(slot(&Device::copy_to_device), 11);
  EXPECT_EQ(slot(&Device::memset), 14);
  EXPECT_EQ(slot(static_cast<TypedAxpyF>(&Device::typed_axpy)), 15);
  EXPECT_EQ(slot(static_cast<TypedAxpyD>(&Device::typed_axpy)), 16);
  EXPECT_EQ(slot(static_cast<TypedScalD>(&Device::typed_scal)), 22);
  EXPECT_EQ(slot(&Device::gemm), 23);
  EXPECT_EQ(slot(&Device::gemv), 24);
  EXPECT_EQ(slot(&Device::elementwise), 25);
  EXPECT_EQ(slot(&Device::synchronize), 26);
  EXPECT_EQ(slot(static_cast<void (Device::*)(Precision, std::int64_t, double, ConstDeviceBuffer, std::int64_t,
                                             DeviceBuffer, std::int64_t)>(&Device::axpy)),
            27);
  EXPECT_EQ(slot(static_cast<void (Device::*)(Precision, std::int64_t, double, DeviceBuffer, std::int64_t)>(
                &Device::scal)),
            30);
}

TEST(DeviceVtable, LaterMinorsAppendAfterThem) {
  // ABI 1.4: sync_host_alias, then its math group (im2col, col2im).
  EXPECT_EQ(slot(&Device::sync_host_alias), 31);
  EXPECT_EQ(slot(&Device::im2col), 32);
  EXPECT_EQ(slot(&Device::col2im), 33);
  // ABI 1.5: its math group (pooling, softmax).
  EXPECT_EQ(slot(&Device::max_pool), 34);
  EXPECT_EQ(slot(&Device::max_pool_backward), 35);
  EXPECT_EQ(slot(&Device::ave_pool), 36);
  EXPECT_EQ(slot(&Device::ave_pool_backward), 37);
  EXPECT_EQ(slot(&Device::softmax), 38);
  EXPECT_EQ(slot(&Device::softmax_backward), 39);
  // ABI 1.6: the softmax loss, copy_rows, LRN, channel_affine.
  EXPECT_EQ(slot(&Device::softmax_loss), 40);
  EXPECT_EQ(slot(&Device::softmax_loss_backward), 41);
  EXPECT_EQ(slot(&Device::copy_rows), 42);
  EXPECT_EQ(slot(&Device::lrn_scale), 43);
  EXPECT_EQ(slot(&Device::lrn_backward), 44);
  EXPECT_EQ(slot(&Device::channel_affine), 45);
  // ABI 1.8: gather_rows, scatter_add_rows, top_k_hits.
  EXPECT_EQ(slot(&Device::gather_rows), 46);
  EXPECT_EQ(slot(&Device::scatter_add_rows), 47);
  EXPECT_EQ(slot(&Device::top_k_hits), 48);
  // ABI 1.10: bernoulli_mask.
  EXPECT_EQ(slot(&Device::bernoulli_mask), 49);
  // ABI 1.11: Fast R-CNN's region pooling.
  EXPECT_EQ(slot(&Device::roi_max_pool), 50);
  EXPECT_EQ(slot(&Device::roi_max_pool_backward), 51);
  // ABI 1.12: the n-d column layout over three spatial axes.
  EXPECT_EQ(slot(&Device::im2col_3d), 52);
  EXPECT_EQ(slot(&Device::col2im_3d), 53);
}

}  // namespace
}  // namespace blobrt
