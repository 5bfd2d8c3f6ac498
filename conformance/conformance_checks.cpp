#include "conformance_checks.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>

#include "blobrt/error.hpp"
#include "conformance_math.hpp"

namespace blobrt::conformance {

const char* to_string(Operation op) {
  switch (op) {
    case Operation::kMemset: return "memset";
    case Operation::kCopyRoundTrip: return "copy_host_device";
    case Operation::kCopyDevice: return "copy_device";
    case Operation::kAxpy: return "axpy";
    case Operation::kDot: return "dot";
    case Operation::kAsum: return "asum";
    case Operation::kScal: return "scal";
    case Operation::kGemm: return "gemm";
    case Operation::kGemv: return "gemv";
    case Operation::kElementwise: return "elementwise";
    case Operation::kIm2col: return "im2col";
    case Operation::kCol2im: return "col2im";
    case Operation::kMaxPool: return "max_pool";
    case Operation::kMaxPoolBackward: return "max_pool_backward";
    case Operation::kAvePool: return "ave_pool";
    case Operation::kAvePoolBackward: return "ave_pool_backward";
    case Operation::kSoftmax: return "softmax";
    case Operation::kSoftmaxBackward: return "softmax_backward";
    case Operation::kSoftmaxLoss: return "softmax_loss";
    case Operation::kSoftmaxLossBackward: return "softmax_loss_backward";
    case Operation::kCopyRows: return "copy_rows";
    case Operation::kLrnScale: return "lrn_scale";
    case Operation::kLrnBackward: return "lrn_backward";
    case Operation::kChannelAffine: return "channel_affine";
    case Operation::kGatherRows: return "gather_rows";
    case Operation::kScatterAddRows: return "scatter_add_rows";
    case Operation::kTopKHits: return "top_k_hits";
    case Operation::kBernoulliMask: return "bernoulli_mask";
    case Operation::kRoiMaxPool: return "roi_max_pool";
    case Operation::kRoiMaxPoolBackward: return "roi_max_pool_backward";
    case Operation::kIm2col3d: return "im2col_3d";
    case Operation::kCol2im3d: return "col2im_3d";
  }
  return "?";
}

bool is_math(Operation op) {
  switch (op) {
    case Operation::kGemm:
    case Operation::kGemv:
    case Operation::kElementwise:
    case Operation::kIm2col:
    case Operation::kCol2im:
    case Operation::kMaxPool:
    case Operation::kMaxPoolBackward:
    case Operation::kAvePool:
    case Operation::kAvePoolBackward:
    case Operation::kSoftmax:
    case Operation::kSoftmaxBackward:
    case Operation::kSoftmaxLoss:
    case Operation::kSoftmaxLossBackward:
    case Operation::kCopyRows:
    case Operation::kLrnScale:
    case Operation::kLrnBackward:
    case Operation::kChannelAffine:
    case Operation::kGatherRows:
    case Operation::kScatterAddRows:
    case Operation::kTopKHits:
    case Operation::kBernoulliMask:
    case Operation::kRoiMaxPool:
    case Operation::kRoiMaxPoolBackward:
    case Operation::kIm2col3d:
    case Operation::kCol2im3d: return true;
    default: return false;
  }
}

std::vector<Operation> all_operations() {
  return {Operation::kMemset, Operation::kCopyRoundTrip, Operation::kCopyDevice, Operation::kAxpy, Operation::kDot,
          Operation::kAsum,   Operation::kScal,          Operation::kGemm,       Operation::kGemv, Operation::kElementwise,
          Operation::kIm2col, Operation::kCol2im, Operation::kMaxPool, Operation::kMaxPoolBackward,
          Operation::kAvePool, Operation::kAvePoolBackward, Operation::kSoftmax, Operation::kSoftmaxBackward,
          Operation::kSoftmaxLoss, Operation::kSoftmaxLossBackward, Operation::kCopyRows,
          Operation::kLrnScale, Operation::kLrnBackward, Operation::kChannelAffine, Operation::kGatherRows,
          Operation::kScatterAddRows, Operation::kTopKHits, Operation::kBernoulliMask,
          Operation::kRoiMaxPool, Operation::kRoiMaxPoolBackward, Operation::kIm2col3d, Operation::kCol2im3d};
}

const char* to_string(Precision p) { return p == Precision::kFloat32 ? "float" : "double"; }

std::string Case::name() const {
  if (is_math(op)) return math_case_name(*this);
  std::ostringstream s;
  s << to_string(op) << "_" << to_string(precision) << "_n" << n << "_off" << offset;
  return s.str();
}

std::string param_name(const std::string& id, const Case& c) {
  std::string name = id + "_" + c.name();
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

std::vector<Case> standard_cases() {
  std::vector<Case> cases;
  for (Operation op : {Operation::kMemset, Operation::kCopyRoundTrip, Operation::kCopyDevice, Operation::kAxpy,
                       Operation::kDot, Operation::kAsum, Operation::kScal}) {
    for (Precision p : {Precision::kFloat32, Precision::kFloat64}) {
      for (std::int64_t n : {0, 1, 7, 1000, 65537, (1 << 20) + 3}) {
        for (std::int64_t offset : {0, 5}) cases.push_back({op, p, n, offset});
      }
    }
  }
  for (const Case& c : math_cases()) cases.push_back(c);
  return cases;
}

namespace {

// A device buffer released on every path out.
class Buffer {
 public:
  Buffer(Device& device, std::size_t bytes) : device_(device), handle_(device.allocate(bytes ? bytes : 1)) {}
  ~Buffer() { device_.release(handle_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  DeviceBuffer get() const { return handle_; }

 private:
  Device& device_;
  DeviceBuffer handle_;
};

template <typename T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> distribution(-1.0, 1.0);
  std::vector<T> values(n);
  for (auto& v : values) v = static_cast<T>(distribution(generator));
  return values;
}

template <typename T>
class Checker {
 public:
  Checker(Device& device, const Case& c)
      : device_(device), c_(c), total_(static_cast<std::size_t>(c.n + c.offset)),
        bytes_(total_ * sizeof(T)), offset_bytes_(static_cast<std::size_t>(c.offset) * sizeof(T)) {}

  Result run() {
    switch (c_.op) {
      case Operation::kMemset: return memset();
      case Operation::kCopyRoundTrip: return round_trip();
      case Operation::kCopyDevice: return copy_device();
      case Operation::kAxpy: return axpy();
      case Operation::kDot: return reduction(true);
      case Operation::kAsum: return reduction(false);
      case Operation::kScal: return scal();
    case Operation::kGemm:
    case Operation::kGemv:
    case Operation::kElementwise:
    case Operation::kIm2col:
    case Operation::kCol2im: break;  // run_math_case
    }
    return fail("unknown operation");
  }

 private:
  static constexpr double eps = std::numeric_limits<T>::epsilon();

  Result pass() { return {true, false, ""}; }
  template <typename... Parts>
  Result fail(const Parts&... parts) {
    std::ostringstream s;
    s.precision(17);
    (s << ... << parts);
    return {false, false, s.str()};
  }

  // Uploads host values into a new device buffer.
  std::unique_ptr<Buffer> upload(const std::vector<T>& values) {
    auto buffer = std::make_unique<Buffer>(device_, bytes_);
    if (bytes_) device_.copy_to_device(values.data(), buffer->get(), 0, bytes_);
    return buffer;
  }
  std::vector<T> download(const Buffer& buffer) {
    std::vector<T> values(total_);
    if (bytes_) device_.copy_to_host(buffer.get(), 0, values.data(), bytes_);
    return values;
  }
  Result compare_exact(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
    if (got.size() != want.size() ||
        (!want.empty() && std::memcmp(got.data(), want.data(), want.size() * sizeof(T)) != 0)) {
      for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
        if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
          return fail(what, ": element ", i, " is ", got[i], ", expected ", want[i]);
        }
      }
      return fail(what, ": contents differ");
    }
    return pass();
  }

  Result memset() {
    auto values = random_values<T>(total_, 1);
    auto buffer = upload(values);
    std::vector<T> want = values;
    if (bytes_ > offset_bytes_) {
      std::memset(reinterpret_cast<char*>(want.data()) + offset_bytes_, 0x3f, bytes_ - offset_bytes_);
    }
    device_.memset(buffer->get(), offset_bytes_, 0x3f, bytes_ - offset_bytes_);
    return compare_exact(download(*buffer), want, "memset 0x3f");
  }

  Result round_trip() {
    auto values = random_values<T>(total_, 2);
    Buffer buffer(device_, bytes_);
    // Write the two parts separately so the destination offset is exercised.
    if (offset_bytes_) device_.copy_to_device(values.data(), buffer.get(), 0, offset_bytes_);
    if (bytes_ > offset_bytes_) {
      device_.copy_to_device(values.data() + c_.offset, buffer.get(), offset_bytes_, bytes_ - offset_bytes_);
    }
    std::vector<T> tail(static_cast<std::size_t>(c_.n));
    if (c_.n) device_.copy_to_host(buffer.get(), offset_bytes_, tail.data(), bytes_ - offset_bytes_);
    std::vector<T> want(values.begin() + c_.offset, values.end());
    Result r = compare_exact(tail, want, "copy_to_host at offset");
    if (!r.passed) return r;
    return compare_exact(download(buffer), values, "copy_to_device at offset");
  }

  Result copy_device() {
    auto source_values = random_values<T>(total_, 3);
    auto target_values = random_values<T>(total_, 4);
    auto source = upload(source_values);
    auto target = upload(target_values);
    // Copy source[0..n) to target[offset..offset+n): different offsets on each side.
    std::size_t payload = static_cast<std::size_t>(c_.n) * sizeof(T);
    device_.copy_device(source->get(), 0, target->get(), offset_bytes_, payload);
    std::vector<T> want = target_values;
    std::copy(source_values.begin(), source_values.begin() + c_.n, want.begin() + c_.offset);
    return compare_exact(download(*target), want, "copy_device");
  }

  Result axpy() {
    auto x = random_values<T>(total_, 5);
    auto y = random_values<T>(total_, 6);
    const T alpha = static_cast<T>(-0.75);
    auto bx = upload(x);
    auto by = upload(y);
    device_.axpy(c_.n, alpha, bx->get(), c_.offset, by->get(), c_.offset);
    auto got = download(*by);
    for (std::size_t i = 0; i < total_; ++i) {
      bool in_range = i >= static_cast<std::size_t>(c_.offset);
      double ref = in_range ? static_cast<double>(y[i]) + static_cast<double>(alpha) * x[i] : y[i];
      double tol = in_range ? 2 * eps * (std::fabs(alpha * x[i]) + std::fabs(y[i])) : 0;
      if (!(std::fabs(got[i] - ref) <= tol)) {
        return fail("axpy: element ", i, " is ", got[i], ", expected ", ref, " ± ", tol,
                    in_range ? "" : " (outside the range: must be untouched)");
      }
    }
    return pass();
  }

  Result scal() {
    auto x = random_values<T>(total_, 7);
    const T alpha = static_cast<T>(1.25);
    auto bx = upload(x);
    device_.scal(c_.n, alpha, bx->get(), c_.offset);
    auto got = download(*bx);
    for (std::size_t i = 0; i < total_; ++i) {
      bool in_range = i >= static_cast<std::size_t>(c_.offset);
      double ref = in_range ? static_cast<double>(alpha) * x[i] : x[i];
      double tol = in_range ? 2 * eps * std::fabs(ref) : 0;
      if (!(std::fabs(got[i] - ref) <= tol)) {
        return fail("scal: element ", i, " is ", got[i], ", expected ", ref, " ± ", tol);
      }
    }
    return pass();
  }

  Result reduction(bool is_dot) {
    auto x = random_values<T>(total_, 8);
    auto y = random_values<T>(total_, 9);
    // Poison the skipped prefix so a device that ignores the offset is caught.
    for (std::int64_t i = 0; i < c_.offset; ++i) x[i] = y[i] = static_cast<T>(1000);
    auto bx = upload(x);
    auto by = upload(y);
    double ref = 0, magnitude = 0;
    for (std::size_t i = static_cast<std::size_t>(c_.offset); i < total_; ++i) {
      double term = is_dot ? static_cast<double>(x[i]) * y[i] : std::fabs(static_cast<double>(x[i]));
      ref += term;
      magnitude += std::fabs(term);
    }
    T got = static_cast<T>(12345);  // must be overwritten, even for n = 0
    if (is_dot) {
      device_.dot(c_.n, bx->get(), c_.offset, by->get(), c_.offset, &got);
    } else {
      device_.asum(c_.n, bx->get(), c_.offset, &got);
    }
    double tol = eps * (8 + std::sqrt(static_cast<double>(c_.n))) * magnitude;
    if (!(std::fabs(got - ref) <= tol)) {
      return fail(is_dot ? "dot" : "asum", ": got ", got, ", expected ", ref, " ± ", tol);
    }
    return pass();
  }

  Device& device_;
  Case c_;
  std::size_t total_, bytes_, offset_bytes_;
};

}  // namespace

Result run_case(Device& device, const Case& c) {
  if (c.precision == Precision::kFloat64 && !device.description().supports_fp64) {
    return {false, true, device.description().id() + " (" + device.description().name + ") has no fp64"};
  }
  try {
    if (is_math(c.op)) return run_math_case(device, c);
    if (c.precision == Precision::kFloat32) return Checker<float>(device, c).run();
    return Checker<double>(device, c).run();
  } catch (const std::exception& e) {
    return {false, false, std::string("threw: ") + e.what()};
  }
}

}  // namespace blobrt::conformance
