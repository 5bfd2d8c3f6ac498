// Addressable handles over a device's opaque ones (addressable_device.hpp).
#include "addressable_device.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "blobrt/error.hpp"

namespace blobrt {
namespace {

struct Located {
  DeviceBuffer buffer;  // the device's own handle
  std::size_t offset;   // bytes into it
};

// The device's stretch of reserved address space: PROT_NONE, never touched, so it costs
// no memory, and a handle in it used as a pointer faults at once instead of reaching some
// other object. Each live buffer has a range of it.
class AddressSpace {
 public:
  explicit AddressSpace(std::size_t bytes) {
    for (; bytes >= (std::size_t{1} << 30); bytes /= 2) {
      void* base = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (base != MAP_FAILED) {
        begin_ = next_ = reinterpret_cast<std::uintptr_t>(base);
        end_ = begin_ + bytes;
        return;
      }
    }
    detail::fail("addressable handles: could not reserve address space for them (mmap PROT_NONE, down to 1 GiB)");
  }
  ~AddressSpace() { munmap(reinterpret_cast<void*>(begin_), end_ - begin_); }
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;

  // A range for `bytes` of the buffer `real`; 0 when the stretch has no room.
  std::uintptr_t add(std::size_t bytes, DeviceBuffer real) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    const std::uintptr_t at = place(bytes);
    if (at != 0) live_.emplace(at, Range{bytes, real});
    return at;
  }
  // The device's own handle of the buffer at `at`, which leaves; null if there is none.
  DeviceBuffer remove(std::uintptr_t at) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto found = live_.find(at);
    if (found == live_.end()) return nullptr;
    DeviceBuffer real = found->second.real;
    live_.erase(found);
    return real;
  }
  bool find(std::uintptr_t address, Located* out) const noexcept {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto after = live_.upper_bound(address);
    if (after == live_.begin()) return false;
    const auto& [start, range] = *std::prev(after);
    // One past the end is still this buffer's (an empty operand there).
    if (address - start > range.bytes) return false;
    *out = Located{range.real, static_cast<std::size_t>(address - start)};
    return true;
  }
  std::size_t size() const { return end_ - begin_; }

 private:
  struct Range {
    std::size_t bytes;
    DeviceBuffer real;
  };
  // Ranges are kept at least this far apart, so that one past a buffer's end is never the
  // next buffer's start.
  static constexpr std::uintptr_t kGap = 4096;
  static std::uintptr_t round_up(std::uintptr_t v) { return (v + kGap - 1) / kGap * kGap; }

  // After the last range placed while there is room, then the first gap that fits (the
  // bump mark moves past whatever that places, so the two never overlap).
  std::uintptr_t place(std::size_t bytes) {
    if (bytes > end_ - begin_) return 0;
    const std::uintptr_t need = round_up(bytes) + kGap;
    if (end_ - next_ >= need) {
      const std::uintptr_t at = next_;
      next_ += need;
      return at;
    }
    std::uintptr_t at = begin_;
    for (const auto& [start, range] : live_) {
      if (start >= at + need) break;
      at = start + round_up(range.bytes) + kGap;
    }
    if (end_ - at < need) return 0;
    next_ = std::max(next_, at + need);
    return at;
  }

  mutable std::shared_mutex mutex_;
  std::map<std::uintptr_t, Range> live_;
  std::uintptr_t begin_ = 0, end_ = 0, next_ = 0;
};

// How much address space a device's handles get: four times its memory (64 GiB where it
// does not say), and no more than a quarter of the process's address-space limit.
std::size_t range_for(const DeviceDescription& d) {
  std::size_t bytes = d.memory_bytes ? static_cast<std::size_t>(d.memory_bytes) * 4 : std::size_t{64} << 30;
  bytes = std::max(bytes, std::size_t{1} << 32);
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    bytes = std::min<std::size_t>(bytes, limit.rlim_cur / 4);
  }
  return bytes;
}

class AddressableDevice final : public Device {
 public:
  // `range_bytes`: the address space its handles get (0: range_for its description).
  AddressableDevice(std::shared_ptr<Device> inner, std::size_t range_bytes)
      : inner_(std::move(inner)),
        description_(inner_->description()),
        space_(range_bytes ? range_bytes : range_for(description_)) {}

  const DeviceDescription& description() const noexcept override { return description_; }

  DeviceBuffer allocate(std::size_t bytes) override {
    DeviceBuffer real = inner_->allocate(bytes);
    const std::uintptr_t at = space_.add(bytes, real);
    if (at == 0) {
      inner_->release(real);
      detail::fail(description_.id(), ": no room for a buffer of ", bytes, " bytes in its addressable handles' ",
                   space_.size(), "-byte range of the address space");
    }
    return reinterpret_cast<DeviceBuffer>(at);
  }
  void release(DeviceBuffer buffer) noexcept override {
    if (DeviceBuffer real = space_.remove(reinterpret_cast<std::uintptr_t>(buffer))) {
      inner_->release(real);
    }
  }
  void* allocate_host(std::size_t bytes) override { return inner_->allocate_host(bytes); }
  void release_host(void* pointer) noexcept override { inner_->release_host(pointer); }
  void* host_alias(ConstDeviceBuffer buffer) noexcept override {
    Located at{};
    if (!find(buffer, &at)) return nullptr;
    char* alias = static_cast<char*>(inner_->host_alias(at.buffer));
    return alias ? alias + at.offset : nullptr;
  }
  bool is_buffer(ConstDeviceBuffer handle) const noexcept override {
    Located at{};
    return find(handle, &at);
  }
  // A view is the handle at the offset, where the device offers views at all.
  DeviceBuffer view(DeviceBuffer buffer, std::size_t offset, std::size_t bytes) override {
    if (description_.view_alignment == 0) return Device::view(buffer, offset, bytes);  // says it has none
    if (offset % description_.view_alignment) {
      detail::fail(description_.id(), ": view offset ", offset, " is not a multiple of the device's view alignment ",
                   description_.view_alignment);
    }
    char* at = static_cast<char*>(buffer) + offset;
    if (locate(buffer, "view buffer").buffer != locate(at + bytes, "view end").buffer) {
      detail::fail(description_.id(), ": a view of ", bytes, " bytes at offset ", offset, " runs past its buffer");
    }
    return at;
  }

  void copy_to_device(const void* host, DeviceBuffer dst, std::size_t dst_offset, std::size_t bytes) override {
    const Located d = locate(dst, "copy_to_device destination");
    inner_->copy_to_device(host, d.buffer, d.offset + dst_offset, bytes);
  }
  void copy_to_host(ConstDeviceBuffer src, std::size_t src_offset, void* host, std::size_t bytes) override {
    const Located s = locate(src, "copy_to_host source");
    inner_->copy_to_host(s.buffer, s.offset + src_offset, host, bytes);
  }
  void copy_device(ConstDeviceBuffer src, std::size_t src_offset, DeviceBuffer dst, std::size_t dst_offset,
                   std::size_t bytes) override {
    const Located s = locate(src, "copy_device source"), d = locate(dst, "copy_device destination");
    inner_->copy_device(s.buffer, s.offset + src_offset, d.buffer, d.offset + dst_offset, bytes);
  }
  void memset(DeviceBuffer dst, std::size_t offset, int value, std::size_t bytes) override {
    const Located d = locate(dst, "memset destination");
    inner_->memset(d.buffer, d.offset + offset, value, bytes);
  }
  void synchronize() override { inner_->synchronize(); }
  void sync_host_alias(DeviceBuffer buffer, std::size_t offset, std::size_t bytes, AliasSync direction) override {
    const Located b = locate(buffer, "sync_host_alias buffer");
    inner_->sync_host_alias(b.buffer, b.offset + offset, bytes, direction);
  }

  void axpy(Precision precision, std::int64_t n, double alpha, ConstDeviceBuffer x, std::int64_t x_offset,
            DeviceBuffer y, std::int64_t y_offset) override {
    const Located xs = locate(x, "axpy x"), ys = locate(y, "axpy y");
    inner_->axpy(precision, n, alpha, xs.buffer, x_offset + elements(xs, precision, "x"), ys.buffer,
                 y_offset + elements(ys, precision, "y"));
  }
  double dot(Precision precision, std::int64_t n, ConstDeviceBuffer x, std::int64_t x_offset, ConstDeviceBuffer y,
             std::int64_t y_offset) override {
    const Located xs = locate(x, "dot x"), ys = locate(y, "dot y");
    return inner_->dot(precision, n, xs.buffer, x_offset + elements(xs, precision, "x"), ys.buffer,
                       y_offset + elements(ys, precision, "y"));
  }
  double asum(Precision precision, std::int64_t n, ConstDeviceBuffer x, std::int64_t x_offset) override {
    const Located xs = locate(x, "asum x");
    return inner_->asum(precision, n, xs.buffer, x_offset + elements(xs, precision, "x"));
  }
  void scal(Precision precision, std::int64_t n, double alpha, DeviceBuffer x, std::int64_t x_offset) override {
    const Located xs = locate(x, "scal x");
    inner_->scal(precision, n, alpha, xs.buffer, x_offset + elements(xs, precision, "x"));
  }

  // Caffe's math operations, one override per entry of blobrt/math_operations.h's list:
  // each buffer located (in parameter order), and the byte offset its handle stands for
  // added, in elements, to the OFFSET that follows it.
#define BLOBRT_ADDRESSABLE_LOCATE_INPUT(name) \
  const Located name##_at_ = locate(name, #name); \
  last = &name##_at_;
#define BLOBRT_ADDRESSABLE_LOCATE_OUTPUT(name) BLOBRT_ADDRESSABLE_LOCATE_INPUT(name)
#define BLOBRT_ADDRESSABLE_LOCATE_OFFSET(name) name += elements(*last, precision, #name);
#define BLOBRT_ADDRESSABLE_LOCATE_PRECISION(name)
#define BLOBRT_ADDRESSABLE_LOCATE_TRANSPOSE(name)
#define BLOBRT_ADDRESSABLE_LOCATE_EW_OP(name)
#define BLOBRT_ADDRESSABLE_LOCATE_SIZE(name)
#define BLOBRT_ADDRESSABLE_LOCATE_SCALAR(name)
#define BLOBRT_ADDRESSABLE_LOCATE_(kind, name) BLOBRT_ADDRESSABLE_LOCATE_##kind(name)
#define BLOBRT_ADDRESSABLE_PASS_INPUT(name) , name##_at_.buffer
#define BLOBRT_ADDRESSABLE_PASS_OUTPUT(name) , name##_at_.buffer
#define BLOBRT_ADDRESSABLE_PASS_(kind, name) BLOBRT_ADDRESSABLE_PASS_##kind(name)
#define BLOBRT_ADDRESSABLE_PASS_OFFSET(name) , name
#define BLOBRT_ADDRESSABLE_PASS_PRECISION(name) , name
#define BLOBRT_ADDRESSABLE_PASS_TRANSPOSE(name) , name
#define BLOBRT_ADDRESSABLE_PASS_EW_OP(name) , name
#define BLOBRT_ADDRESSABLE_PASS_SIZE(name) , name
#define BLOBRT_ADDRESSABLE_PASS_SCALAR(name) , name
#define BLOBRT_ADDRESSABLE_MATH_(X, since, name, parameters)                             \
  void name(BLOBRT_DEVICE_MATH_PARAMETERS(parameters)) override {                        \
    const Located* last = nullptr;                                                       \
    parameters(BLOBRT_ADDRESSABLE_LOCATE_)(void) last;                                   \
    inner_->name(BLOBRT_MATH_LIST(parameters, BLOBRT_ADDRESSABLE_PASS_));                \
  }
  BLOBRT_MATH_OPERATIONS(BLOBRT_ADDRESSABLE_MATH_, ~)
#undef BLOBRT_ADDRESSABLE_MATH_

 private:
  bool find(ConstDeviceBuffer handle, Located* out) const noexcept {
    return space_.find(reinterpret_cast<std::uintptr_t>(handle), out);
  }
  // A null handle stays null (an operand the operation does not use, or one the device's
  // own checks refuse with their message).
  Located locate(ConstDeviceBuffer handle, const char* what) const {
    Located at{};
    if (handle != nullptr && !find(handle, &at)) {
      detail::fail(description_.id(), " (", description_.name, "): ", what, " ", handle,
                   " is inside no live buffer of this device (a handle offset past its buffer, or released)");
    }
    return at;
  }
  static std::int64_t elements(const Located& at, Precision precision, const char* what) {
    const std::size_t size = precision == Precision::kFloat64 ? 8 : 4;
    if (at.offset % size != 0) {
      detail::fail("addressable handles: ", what, " is ", at.offset, " bytes into its buffer, not a whole number of ",
                   size, "-byte elements");
    }
    return static_cast<std::int64_t>(at.offset / size);
  }

  std::shared_ptr<Device> inner_;
  // As the device's own: addressable_handles stays false, since a handle is no address
  // outside blobrt (DLPack export and NCCL refuse it), though blobrt takes it offset.
  DeviceDescription description_;
  AddressSpace space_;
};

}  // namespace

std::shared_ptr<Device> make_addressable(std::shared_ptr<Device> device, std::size_t range_bytes) {
  if (!device || device->description().addressable_handles || dynamic_cast<AddressableDevice*>(device.get())) {
    return device;
  }
  return std::make_shared<AddressableDevice>(std::move(device), range_bytes);
}

bool handles_take_offsets(const Device& device) noexcept {
  return device.description().addressable_handles || dynamic_cast<const AddressableDevice*>(&device) != nullptr;
}

}  // namespace blobrt
