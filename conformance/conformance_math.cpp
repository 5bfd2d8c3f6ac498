// gemm, gemv and the element-wise family against a plain double-precision loop with
// Caffe's semantics (conformance_checks.hpp states the tolerances).
//
// Cases: gemm with every transposition pair, m/n/k of 1, 0 (each in turn) and sizes that
// are multiples of nothing, beta 0 (C full of NaN: its old values must be ignored), 1 and
// -0.5, alpha 0 (A and B full of NaN: not read), offsets that differ per operand; gemv
// likewise; every element-wise operation in both precisions at n = 0, 1, 7, 1000, 65537
// and 2^20 + 3 (the split across cores), in place (y == a, y == b), with -0.0, +0.0 and
// negatives where sign, sgnbit and abs depend on them, log/sqrt/powx on their domains.
#include "conformance_math.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <tuple>
#include <utility>

#include "blobrt/plugin_abi.h"
#include "blobrt_kernels/bernoulli_mask.hpp"

namespace blobrt::conformance {
namespace {

constexpr std::int64_t kGuard = 4;  // elements after each operand that must stay untouched

// What the list (blobrt/elementwise_operations.h) says of each element-wise code: the
// operands it reads, and its formula, the reference value (computed in double).
struct EwCode {
  bool a, b, y;
};
#define BLOBRT_CONF_EW_CODE_(CODE, Cxx, name, number, A, B, Y, ...) {A != 0, B != 0, Y != 0},
constexpr EwCode kEwCodes[] = {BLOBRT_ELEMENTWISE_OPS(BLOBRT_CONF_EW_CODE_)};
#undef BLOBRT_CONF_EW_CODE_
static_assert(sizeof kEwCodes / sizeof kEwCodes[0] == BLOBRT_EW_OP_COUNT, "every code");
const EwCode& ew_code(ElementwiseOp op) { return kEwCodes[static_cast<int>(op)]; }

double ew_formula(ElementwiseOp op, double a, double b, double y, double alpha, double beta) {
  using std::exp, std::fabs, std::log, std::pow, std::signbit, std::sqrt;
  switch (static_cast<int>(op)) {
#define BLOBRT_CONF_EW_FORMULA_(CODE, Cxx, name, number, A, B, Y, ALPHA, BETA, HEAVY, FORM, CAFFE, FORMULA) \
  case BLOBRT_EW_##CODE: return static_cast<double>(FORMULA);
    BLOBRT_ELEMENTWISE_OPS(BLOBRT_CONF_EW_FORMULA_)
#undef BLOBRT_CONF_EW_FORMULA_
  }
  (void)a, (void)b, (void)y, (void)alpha, (void)beta;
  return std::numeric_limits<double>::quiet_NaN();
}

std::string number(double v) {
  std::ostringstream s;
  s << v;
  std::string t = s.str();
  for (char& ch : t) {
    if (ch == '-') ch = 'm';
    if (ch == '.') ch = '_';
  }
  return t;
}

// Offsets per operand, all different when the case has one (a mixed-up offset shows).
struct Offsets {
  std::int64_t a, b, y;
};
Offsets offsets_of(const Case& c) {
  Offsets o{c.offset, 2 * c.offset, 3 * c.offset};
  if (c.op == Operation::kElementwise) {
    o = {c.offset, c.offset + 2, c.offset + 1};
    if (c.alias == Alias::kYIsA) o.y = o.a;
    if (c.alias == Alias::kYIsB) o.y = o.b;
  }
  return o;
}

// A device buffer released on every path out, with its host image.
template <typename T>
class Operand {
 public:
  Operand(Device& device, std::vector<T> values) : device_(device), values_(std::move(values)) {
    handle_ = device.allocate(bytes());
    device.copy_to_device(values_.data(), handle_, 0, bytes());
  }
  ~Operand() { device_.release(handle_); }
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;
  DeviceBuffer get() const { return handle_; }
  const std::vector<T>& before() const { return values_; }
  std::vector<T> after() const {
    std::vector<T> out(values_.size());
    device_.copy_to_host(handle_, 0, out.data(), bytes());
    return out;
  }

 private:
  std::size_t bytes() const { return values_.size() * sizeof(T); }
  Device& device_;
  std::vector<T> values_;
  DeviceBuffer handle_ = nullptr;
};

template <typename T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T>
class MathChecker {
 public:
  MathChecker(Device& device, const Case& c) : device_(device), c_(c), offsets_(offsets_of(c)) {}

  Result run() {
    switch (c_.op) {
      case Operation::kGemm: return gemm();
      case Operation::kGemv: return gemv();
      case Operation::kIm2col: return im2col();
      case Operation::kCol2im: return col2im();
      case Operation::kMaxPool:
      case Operation::kAvePool: return pool_forward();
      case Operation::kMaxPoolBackward:
      case Operation::kAvePoolBackward: return pool_backward();
      case Operation::kSoftmax: return softmax();
      case Operation::kSoftmaxBackward: return softmax_backward();
      case Operation::kSoftmaxLoss:
      case Operation::kSoftmaxLossBackward: return softmax_loss();
      case Operation::kCopyRows: return copy_rows();
      case Operation::kLrnScale:
      case Operation::kLrnBackward: return lrn();
      case Operation::kChannelAffine: return channel_affine();
      case Operation::kGatherRows:
      case Operation::kScatterAddRows: return gather_rows();
      case Operation::kTopKHits: return top_k_hits();
      case Operation::kBernoulliMask: return bernoulli_mask();
      case Operation::kRoiMaxPool:
      case Operation::kRoiMaxPoolBackward: return roi_max_pool();
      case Operation::kIm2col3d:
      case Operation::kCol2im3d: return conv_3d();
      default: return elementwise();
    }
  }

 private:
  static constexpr double eps = std::numeric_limits<T>::epsilon();
  static constexpr blobrt::Precision precision =
      sizeof(T) == 8 ? blobrt::Precision::kFloat64 : blobrt::Precision::kFloat32;

  template <typename... Parts>
  Result fail(const Parts&... parts) {
    std::ostringstream s;
    s.precision(17);
    (s << ... << parts);
    return {false, false, s.str()};
  }

  // `count` values in [low, high] after `offset` poison elements, then kGuard more.
  std::vector<T> values(std::int64_t offset, std::int64_t count, double low, double high, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<double> distribution(low, high);
    std::vector<T> v(static_cast<std::size_t>(offset + count + kGuard), static_cast<T>(-777.25));
    for (std::int64_t i = 0; i < count; ++i) v[offset + i] = static_cast<T>(distribution(generator));
    return v;
  }
  std::vector<T> filled(std::int64_t offset, std::int64_t count, T value) {
    std::vector<T> v(static_cast<std::size_t>(offset + count + kGuard), static_cast<T>(-777.25));
    for (std::int64_t i = 0; i < count; ++i) v[offset + i] = value;
    return v;
  }

  // Everything outside [offset, offset + count) must be as it was.
  Result untouched_outside(const std::vector<T>& got, const std::vector<T>& before, std::int64_t offset,
                           std::int64_t count, const char* what) {
    for (std::size_t i = 0; i < got.size(); ++i) {
      const bool inside = static_cast<std::int64_t>(i) >= offset && static_cast<std::int64_t>(i) < offset + count;
      if (!inside && !same_bits(got[i], before[i])) {
        return fail(what, ": element ", i, " outside the range [", offset, ", ", offset + count, ") changed from ",
                    before[i], " to ", got[i]);
      }
    }
    return {true, false, ""};
  }

  Result gemm() {
    const std::int64_t m = c_.m, n = c_.n, k = c_.k;
    const bool nan_inputs = c_.alpha == 0;  // BLAS does not read A and B then
    const T nan = std::numeric_limits<T>::quiet_NaN();
    Operand<T> a(device_, nan_inputs ? filled(offsets_.a, m * k, nan) : values(offsets_.a, m * k, -1, 1, 11));
    Operand<T> b(device_, nan_inputs ? filled(offsets_.b, k * n, nan) : values(offsets_.b, k * n, -1, 1, 12));
    Operand<T> cm(device_, c_.beta == 0 ? filled(offsets_.y, m * n, nan) : values(offsets_.y, m * n, -1, 1, 13));
    device_.gemm(precision, c_.trans_a ? Transpose::kYes : Transpose::kNo,
                 c_.trans_b ? Transpose::kYes : Transpose::kNo, m, n, k, c_.alpha, a.get(), offsets_.a, b.get(),
                 offsets_.b, c_.beta, cm.get(), offsets_.y);
    const std::vector<T> got = cm.after();
    const T* av = a.before().data() + offsets_.a;
    const T* bv = b.before().data() + offsets_.b;
    const T* cv = cm.before().data() + offsets_.y;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        if (c_.alpha != 0) {
          for (std::int64_t p = 0; p < k; ++p) {
            const double x = c_.trans_a ? av[p * m + i] : av[i * k + p];
            const double y = c_.trans_b ? bv[j * k + p] : bv[p * n + j];
            sum += x * y;
            magnitude += std::fabs(x * y);
          }
        }
        double ref = c_.alpha * sum, bound = std::fabs(c_.alpha) * magnitude;
        if (c_.beta != 0) {
          ref += c_.beta * static_cast<double>(cv[i * n + j]);
          bound += std::fabs(c_.beta * static_cast<double>(cv[i * n + j]));
        }
        const double tol = eps * (8 + std::sqrt(static_cast<double>(k))) * bound;
        const double g = got[offsets_.y + i * n + j];
        if (!(std::fabs(g - ref) <= tol)) {
          return fail("gemm: C[", i, "][", j, "] is ", g, ", expected ", ref, " ± ", tol);
        }
      }
    }
    return untouched_outside(got, cm.before(), offsets_.y, m * n, "gemm C");
  }

  Result gemv() {
    const std::int64_t m = c_.m, n = c_.n;
    const std::int64_t xs = c_.trans_a ? m : n, ys = c_.trans_a ? n : m;
    const bool nan_inputs = c_.alpha == 0;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    Operand<T> a(device_, nan_inputs ? filled(offsets_.a, m * n, nan) : values(offsets_.a, m * n, -1, 1, 21));
    Operand<T> x(device_, nan_inputs ? filled(offsets_.b, xs, nan) : values(offsets_.b, xs, -1, 1, 22));
    Operand<T> y(device_, c_.beta == 0 ? filled(offsets_.y, ys, nan) : values(offsets_.y, ys, -1, 1, 23));
    device_.gemv(precision, c_.trans_a ? Transpose::kYes : Transpose::kNo, m, n, c_.alpha, a.get(), offsets_.a,
                 x.get(), offsets_.b, c_.beta, y.get(), offsets_.y);
    const std::vector<T> got = y.after();
    const T* av = a.before().data() + offsets_.a;
    const T* xv = x.before().data() + offsets_.b;
    const T* yv = y.before().data() + offsets_.y;
    for (std::int64_t i = 0; i < ys; ++i) {
      double sum = 0, magnitude = 0;
      if (c_.alpha != 0) {
        for (std::int64_t p = 0; p < xs; ++p) {
          const double term = static_cast<double>(c_.trans_a ? av[p * n + i] : av[i * n + p]) * xv[p];
          sum += term;
          magnitude += std::fabs(term);
        }
      }
      double ref = c_.alpha * sum, bound = std::fabs(c_.alpha) * magnitude;
      if (c_.beta != 0) {
        ref += c_.beta * static_cast<double>(yv[i]);
        bound += std::fabs(c_.beta * static_cast<double>(yv[i]));
      }
      const double tol = eps * (8 + std::sqrt(static_cast<double>(xs))) * bound;
      const double g = got[offsets_.y + i];
      if (!(std::fabs(g - ref) <= tol)) return fail("gemv: y[", i, "] is ", g, ", expected ", ref, " ± ", tol);
    }
    return untouched_outside(got, y.before(), offsets_.y, ys, "gemv y");
  }

  // Caffe's output extent, written out here apart from the kernels' (C's division; none
  // when the kernel outgrows the padded image).
  static std::int64_t extent(std::int64_t size, std::int64_t pad, std::int64_t kernel, std::int64_t stride,
                             std::int64_t dilation) {
    const std::int64_t out = (size + 2 * pad - (dilation * (kernel - 1) + 1)) / stride + 1;
    return out > 0 ? out : 0;
  }
  // For each column element in order, the image element it copies, or -1 for padding.
  std::vector<std::int64_t> column_sources() const {
    const ConvShape& s = c_.conv;
    const std::int64_t oh = extent(s.height, s.pad_h, s.kernel_h, s.stride_h, s.dilation_h);
    const std::int64_t ow = extent(s.width, s.pad_w, s.kernel_w, s.stride_w, s.dilation_w);
    std::vector<std::int64_t> sources;
    sources.reserve(static_cast<std::size_t>(s.channels * s.kernel_h * s.kernel_w * oh * ow));
    for (std::int64_t ch = 0; ch < s.channels; ++ch) {
      for (std::int64_t ki = 0; ki < s.kernel_h; ++ki) {
        for (std::int64_t kj = 0; kj < s.kernel_w; ++kj) {
          for (std::int64_t y = 0; y < oh; ++y) {
            for (std::int64_t x = 0; x < ow; ++x) {
              const std::int64_t r = y * s.stride_h - s.pad_h + ki * s.dilation_h;
              const std::int64_t q = x * s.stride_w - s.pad_w + kj * s.dilation_w;
              const bool inside = r >= 0 && r < s.height && q >= 0 && q < s.width;
              sources.push_back(inside ? (ch * s.height + r) * s.width + q : -1);
            }
          }
        }
      }
    }
    return sources;
  }
  void conv_call(Operation op, DeviceBuffer in, std::int64_t in_offset, DeviceBuffer out, std::int64_t out_offset) {
    const ConvShape& s = c_.conv;
    if (op == Operation::kIm2col) {
      device_.im2col(precision, s.channels, s.height, s.width, s.kernel_h, s.kernel_w, s.pad_h, s.pad_w, s.stride_h,
                     s.stride_w, s.dilation_h, s.dilation_w, in, in_offset, out, out_offset);
    } else {
      device_.col2im(precision, s.channels, s.height, s.width, s.kernel_h, s.kernel_w, s.pad_h, s.pad_w, s.stride_h,
                     s.stride_w, s.dilation_h, s.dilation_w, in, in_offset, out, out_offset);
    }
  }

  // Every column element exactly its image element, +0 in the padding; col full of NaN
  // before (each element written).
  Result im2col() {
    const ConvShape& s = c_.conv;
    const std::vector<std::int64_t> sources = column_sources();
    const auto columns = static_cast<std::int64_t>(sources.size());
    Operand<T> im(device_, values(offsets_.a, s.channels * s.height * s.width, -1, 1, 31));
    Operand<T> col(device_, filled(offsets_.y, columns, std::numeric_limits<T>::quiet_NaN()));
    conv_call(Operation::kIm2col, im.get(), offsets_.a, col.get(), offsets_.y);
    const std::vector<T> got = col.after();
    const T* image = im.before().data() + offsets_.a;
    for (std::int64_t i = 0; i < columns; ++i) {
      const T want = sources[i] >= 0 ? image[sources[i]] : T(0);
      if (!same_bits(got[offsets_.y + i], want)) {
        return fail("im2col: col[", i, "] is ", got[offsets_.y + i], ", expected ", want,
                    sources[i] >= 0 ? " (image element " + std::to_string(sources[i]) + ")" : " (padding)");
      }
    }
    return untouched_outside(got, col.before(), offsets_.y, columns, "im2col col");
  }

  // Every image element the sum of the column elements copied from it (0 for none); im
  // full of NaN before (written over, not added to).
  Result col2im() {
    const ConvShape& s = c_.conv;
    const std::vector<std::int64_t> sources = column_sources();
    const std::int64_t pixels = s.channels * s.height * s.width;
    Operand<T> col(device_, values(offsets_.a, static_cast<std::int64_t>(sources.size()), -1, 1, 32));
    Operand<T> im(device_, filled(offsets_.y, pixels, std::numeric_limits<T>::quiet_NaN()));
    conv_call(Operation::kCol2im, col.get(), offsets_.a, im.get(), offsets_.y);
    const std::vector<T> got = im.after();
    const T* cv = col.before().data() + offsets_.a;
    std::vector<double> sum(static_cast<std::size_t>(pixels)), magnitude(sum.size()), terms(sum.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (sources[i] < 0) continue;
      sum[sources[i]] += cv[i];
      magnitude[sources[i]] += std::fabs(static_cast<double>(cv[i]));
      terms[sources[i]] += 1;
    }
    for (std::int64_t p = 0; p < pixels; ++p) {
      const double tol = eps * (8 + std::sqrt(terms[p])) * magnitude[p];
      const double g = got[offsets_.y + p];
      if (!(std::fabs(g - sum[p]) <= tol)) return fail("col2im: im[", p, "] is ", g, ", expected ", sum[p], " ± ", tol);
    }
    return untouched_outside(got, im.before(), offsets_.y, pixels, "col2im im");
  }

  // im2col_3d and col2im_3d against the n-d layout written out here: for each column element
  // in order (row: channel, then kernel offset in row order; column: output position in row
  // order), the image element it copies, or -1 outside the image. im2col_3d exact (+0
  // outside); col2im_3d each image element the sum of its column elements in column order,
  // exact too (NaN before: written over, not added to).
  Result conv_3d() {
    const Conv3dShape& g = c_.conv3d;
    std::vector<std::int64_t> sources;
    for (std::int64_t ch = 0; ch < g.channels; ++ch) {
      for (std::int64_t i = 0; i < g.kernel[0]; ++i) {
        for (std::int64_t j = 0; j < g.kernel[1]; ++j) {
          for (std::int64_t k = 0; k < g.kernel[2]; ++k) {
            for (std::int64_t z = 0; z < g.out[0]; ++z) {
              for (std::int64_t y = 0; y < g.out[1]; ++y) {
                for (std::int64_t x = 0; x < g.out[2]; ++x) {
                  const std::int64_t at[3] = {z * g.stride[0] - g.pad[0] + i * g.dilation[0],
                                              y * g.stride[1] - g.pad[1] + j * g.dilation[1],
                                              x * g.stride[2] - g.pad[2] + k * g.dilation[2]};
                  bool inside = true;
                  for (int a = 0; a < 3; ++a) inside = inside && at[a] >= 0 && at[a] < g.image[a];
                  sources.push_back(inside ? ((ch * g.image[0] + at[0]) * g.image[1] + at[1]) * g.image[2] + at[2]
                                           : -1);
                }
              }
            }
          }
        }
      }
    }
    const auto columns = static_cast<std::int64_t>(sources.size());
    const std::int64_t elements = g.channels * g.image[0] * g.image[1] * g.image[2];
    const auto call = [&](DeviceBuffer in, DeviceBuffer out) {
      if (c_.op == Operation::kIm2col3d) {
        device_.im2col_3d(precision, g.channels, g.image[0], g.image[1], g.image[2], g.out[0], g.out[1], g.out[2],
                          g.kernel[0], g.kernel[1], g.kernel[2], g.pad[0], g.pad[1], g.pad[2], g.stride[0],
                          g.stride[1], g.stride[2], g.dilation[0], g.dilation[1], g.dilation[2], in, offsets_.a, out,
                          offsets_.y);
      } else {
        device_.col2im_3d(precision, g.channels, g.image[0], g.image[1], g.image[2], g.out[0], g.out[1], g.out[2],
                          g.kernel[0], g.kernel[1], g.kernel[2], g.pad[0], g.pad[1], g.pad[2], g.stride[0],
                          g.stride[1], g.stride[2], g.dilation[0], g.dilation[1], g.dilation[2], in, offsets_.a, out,
                          offsets_.y);
      }
    };
    if (c_.op == Operation::kIm2col3d) {
      Operand<T> im(device_, values(offsets_.a, elements, -1, 1, 33));
      Operand<T> col(device_, filled(offsets_.y, columns, std::numeric_limits<T>::quiet_NaN()));
      call(im.get(), col.get());
      const std::vector<T> got = col.after();
      const T* image = im.before().data() + offsets_.a;
      for (std::int64_t i = 0; i < columns; ++i) {
        const T want = sources[i] >= 0 ? image[sources[i]] : T(0);
        if (!same_bits(got[offsets_.y + i], want)) {
          return fail("im2col_3d: col[", i, "] is ", got[offsets_.y + i], ", expected ", want,
                      sources[i] >= 0 ? " (image element " + std::to_string(sources[i]) + ")" : " (outside)");
        }
      }
      return untouched_outside(got, col.before(), offsets_.y, columns, "im2col_3d col");
    }
    Operand<T> col(device_, values(offsets_.a, columns, -1, 1, 34));
    Operand<T> im(device_, filled(offsets_.y, elements, std::numeric_limits<T>::quiet_NaN()));
    call(col.get(), im.get());
    const std::vector<T> got = im.after();
    const T* cv = col.before().data() + offsets_.a;
    // Each element's terms added in T from +0 in column order: the host kernel's sum, and the
    // device kernels' (each gathers one term per kernel offset, in row order), bit for bit.
    std::vector<T> sum(static_cast<std::size_t>(elements), T(0));
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (sources[i] >= 0) sum[sources[i]] += cv[i];
    }
    for (std::int64_t e = 0; e < elements; ++e) {
      if (!same_bits(got[offsets_.y + e], sum[e])) {
        return fail("col2im_3d: im[", e, "] is ", got[offsets_.y + e], ", expected ", sum[e], " (in column order)");
      }
    }
    return untouched_outside(got, im.before(), offsets_.y, elements, "col2im_3d im");
  }

  // Pooling, checked against a reference written here from Caffe's pooling_layer.cpp (its
  // CPU code: windows over the padded image, a mask of the first maximum, the backward as a
  // scatter over windows). Inputs are multiples of 0.5 in [-2, 2]: many ties, which the
  // first-maximum rule decides.
  struct PoolWindow {
    std::vector<std::int64_t> elements;  // indices in the plane, row order
    std::int64_t padded_size = 0;
  };
  std::vector<PoolWindow> pool_windows() const {
    const PoolShape& s = c_.pool;
    std::vector<PoolWindow> windows;
    for (std::int64_t ph = 0; ph < s.pooled_h(); ++ph) {
      for (std::int64_t pw = 0; pw < s.pooled_w(); ++pw) {
        PoolWindow w;
        const std::int64_t h0 = ph * s.stride_h - s.pad_h, w0 = pw * s.stride_w - s.pad_w;
        const std::int64_t h1 = std::min(h0 + s.kernel_h, s.height + s.pad_h);
        const std::int64_t w1 = std::min(w0 + s.kernel_w, s.width + s.pad_w);
        w.padded_size = (h1 - h0) * (w1 - w0);
        for (std::int64_t r = h0; r < h1; ++r) {
          for (std::int64_t q = w0; q < w1; ++q) {
            if (r >= 0 && r < s.height && q >= 0 && q < s.width) w.elements.push_back(r * s.width + q);
          }
        }
        windows.push_back(w);
      }
    }
    return windows;
  }
  std::vector<T> pool_input(std::int64_t offset, std::int64_t count, unsigned seed) {
    std::vector<T> v = values(offset, count, -2, 2, seed);
    for (std::int64_t i = 0; i < count; ++i) v[offset + i] = std::round(v[offset + i] * 2) / 2;
    return v;
  }
  // The index of the window's first maximum in its plane (-1: none above -FLT_MAX).
  static std::int64_t first_max(const PoolWindow& w, const T* plane) {
    std::int64_t at = -1;
    T best = T(-FLT_MAX);
    for (std::int64_t e : w.elements) {
      if (plane[e] > best) best = plane[e], at = e;
    }
    return at;
  }
  void pool_call(DeviceBuffer bottom, DeviceBuffer top_diff, DeviceBuffer out) {
    const PoolShape& s = c_.pool;
#define BLOBRT_CONF_POOL_GEOMETRY_                                                                                \
  precision, s.planes, s.height, s.width, s.pooled_h(), s.pooled_w(), s.kernel_h, s.kernel_w, s.stride_h, s.stride_w, \
      s.pad_h, s.pad_w
    switch (c_.op) {
      case Operation::kMaxPool: device_.max_pool(BLOBRT_CONF_POOL_GEOMETRY_, bottom, offsets_.a, out, offsets_.y); break;
      case Operation::kAvePool: device_.ave_pool(BLOBRT_CONF_POOL_GEOMETRY_, bottom, offsets_.a, out, offsets_.y); break;
      case Operation::kMaxPoolBackward:
        device_.max_pool_backward(BLOBRT_CONF_POOL_GEOMETRY_, bottom, offsets_.a, top_diff, offsets_.b, out, offsets_.y);
        break;
      default:
        device_.ave_pool_backward(BLOBRT_CONF_POOL_GEOMETRY_, top_diff, offsets_.b, out, offsets_.y);
        break;
    }
#undef BLOBRT_CONF_POOL_GEOMETRY_
  }

  // top: each window's first maximum exactly, or its average within the sum's rounding; top
  // full of NaN before (each element written).
  Result pool_forward() {
    const PoolShape& s = c_.pool;
    const std::vector<PoolWindow> windows = pool_windows();
    const std::int64_t plane = s.height * s.width, pooled = static_cast<std::int64_t>(windows.size());
    Operand<T> bottom(device_, pool_input(offsets_.a, s.planes * plane, 41));
    Operand<T> top(device_, filled(offsets_.y, s.planes * pooled, std::numeric_limits<T>::quiet_NaN()));
    pool_call(bottom.get(), nullptr, top.get());
    const std::vector<T> got = top.after();
    for (std::int64_t p = 0; p < s.planes; ++p) {
      const T* in = bottom.before().data() + offsets_.a + p * plane;
      for (std::int64_t i = 0; i < pooled; ++i) {
        const PoolWindow& w = windows[i];
        const T g = got[offsets_.y + p * pooled + i];
        if (c_.op == Operation::kMaxPool) {
          const std::int64_t at = first_max(w, in);
          const T want = at >= 0 ? in[at] : T(-FLT_MAX);
          if (!same_bits(g, want)) return fail("max_pool: plane ", p, " top[", i, "] is ", g, ", expected ", want);
        } else {
          double sum = 0, magnitude = 0;
          for (std::int64_t e : w.elements) sum += in[e], magnitude += std::fabs(static_cast<double>(in[e]));
          // A window with no image element and no padding (size 0): Caffe's 0 / 0.
          const double want = sum / static_cast<double>(w.padded_size);
          const double tol = eps * (8 + std::sqrt(static_cast<double>(w.elements.size()))) * magnitude;
          if (std::isnan(want) ? !std::isnan(g) : !(std::fabs(g - want) <= tol)) {
            return fail("ave_pool: plane ", p, " top[", i, "] is ", g, ", expected ", want, " ± ", tol);
          }
        }
      }
    }
    return untouched_outside(got, top.before(), offsets_.y, s.planes * pooled, (to_string(c_.op) + std::string(" top")).c_str());
  }

  // bottom_diff: Caffe's scatter of each window's top_diff (to its first maximum, or divided
  // by its size over its elements), within the sum's rounding; full of NaN before (written
  // over, not added to).
  Result pool_backward() {
    const PoolShape& s = c_.pool;
    const std::vector<PoolWindow> windows = pool_windows();
    const std::int64_t plane = s.height * s.width, pooled = static_cast<std::int64_t>(windows.size());
    Operand<T> bottom(device_, pool_input(offsets_.a, s.planes * plane, 42));
    Operand<T> top_diff(device_, values(offsets_.b, s.planes * pooled, -1, 1, 43));
    Operand<T> bottom_diff(device_, filled(offsets_.y, s.planes * plane, std::numeric_limits<T>::quiet_NaN()));
    pool_call(bottom.get(), top_diff.get(), bottom_diff.get());
    const std::vector<T> got = bottom_diff.after();
    const bool max = c_.op == Operation::kMaxPoolBackward;
    for (std::int64_t p = 0; p < s.planes; ++p) {
      const T* in = bottom.before().data() + offsets_.a + p * plane;
      const T* diff = top_diff.before().data() + offsets_.b + p * pooled;
      std::vector<double> sum(static_cast<std::size_t>(plane)), magnitude(sum.size()), terms(sum.size());
      for (std::int64_t i = 0; i < pooled; ++i) {
        const PoolWindow& w = windows[i];
        std::vector<std::int64_t> to = w.elements;
        if (max) to = first_max(w, in) >= 0 ? std::vector<std::int64_t>{first_max(w, in)} : std::vector<std::int64_t>{};
        const double term = max ? static_cast<double>(diff[i]) : static_cast<double>(diff[i]) / w.padded_size;
        for (std::int64_t e : to) sum[e] += term, magnitude[e] += std::fabs(term), terms[e] += 1;
      }
      for (std::int64_t e = 0; e < plane; ++e) {
        const double g = got[offsets_.y + p * plane + e];
        const double tol = eps * (8 + std::sqrt(terms[e])) * magnitude[e];
        if (!(std::fabs(g - sum[e]) <= tol)) {
          return fail(to_string(c_.op), ": plane ", p, " bottom_diff[", e, "] is ", g, ", expected ", sum[e], " ± ", tol);
        }
      }
    }
    return untouched_outside(got, bottom_diff.before(), offsets_.y, s.planes * plane,
                             (to_string(c_.op) + std::string(" bottom_diff")).c_str());
  }

  // Softmax against the formula in double: inputs in [-20, 20] (exp(x) alone would lose the
  // small ones: the maximum must be subtracted first); top full of NaN before.
  Result softmax() {
    const SoftmaxShape& s = c_.softmax;
    const std::int64_t n = s.outer * s.channels * s.inner;
    Operand<T> bottom(device_, values(offsets_.a, n, -20, 20, 51));
    Operand<T> top(device_, filled(offsets_.y, n, std::numeric_limits<T>::quiet_NaN()));
    device_.softmax(precision, s.outer, s.channels, s.inner, bottom.get(), offsets_.a, top.get(), offsets_.y);
    const std::vector<T> got = top.after();
    const T* x = bottom.before().data() + offsets_.a;
    for (std::int64_t o = 0; o < s.outer; ++o) {
      for (std::int64_t i = 0; i < s.inner; ++i) {
        const std::int64_t first = o * s.channels * s.inner + i;
        double max = x[first], sum = 0;
        for (std::int64_t c = 1; c < s.channels; ++c) max = std::max(max, static_cast<double>(x[first + c * s.inner]));
        for (std::int64_t c = 0; c < s.channels; ++c) sum += std::exp(x[first + c * s.inner] - max);
        for (std::int64_t c = 0; c < s.channels; ++c) {
          const std::int64_t e = first + c * s.inner;
          const double want = std::exp(x[e] - max) / sum;
          // x - max rounds by up to eps (|x| + |max|), which exp makes relative.
          const double tol = (8 + 2 * std::sqrt(static_cast<double>(s.channels)) + std::fabs(x[e]) + std::fabs(max)) *
                                 eps * want +
                             std::numeric_limits<T>::min();
          const double g = got[offsets_.y + e];
          if (!(std::fabs(g - want) <= tol)) return fail("softmax: top[", e, "] is ", g, ", expected ", want, " ± ", tol);
        }
      }
    }
    return untouched_outside(got, top.before(), offsets_.y, n, "softmax top");
  }

  // Its backward against (dy - Σ dy·y) · y in double, y a softmax's output (positive, each
  // position's summing to 1); bottom_diff full of NaN before.
  Result softmax_backward() {
    const SoftmaxShape& s = c_.softmax;
    const std::int64_t n = s.outer * s.channels * s.inner;
    std::vector<T> y_values = values(offsets_.a, n, 0, 1, 52);
    for (std::int64_t o = 0; o < s.outer; ++o) {
      for (std::int64_t i = 0; i < s.inner; ++i) {
        T sum = T(0);
        for (std::int64_t c = 0; c < s.channels; ++c) sum += y_values[offsets_.a + (o * s.channels + c) * s.inner + i];
        for (std::int64_t c = 0; c < s.channels; ++c) y_values[offsets_.a + (o * s.channels + c) * s.inner + i] /= sum;
      }
    }
    Operand<T> top(device_, y_values);
    Operand<T> top_diff(device_, values(offsets_.b, n, -1, 1, 53));
    Operand<T> bottom_diff(device_, filled(offsets_.y, n, std::numeric_limits<T>::quiet_NaN()));
    device_.softmax_backward(precision, s.outer, s.channels, s.inner, top.get(), offsets_.a, top_diff.get(), offsets_.b,
                             bottom_diff.get(), offsets_.y);
    const std::vector<T> got = bottom_diff.after();
    const T* y = top.before().data() + offsets_.a;
    const T* dy = top_diff.before().data() + offsets_.b;
    for (std::int64_t o = 0; o < s.outer; ++o) {
      for (std::int64_t i = 0; i < s.inner; ++i) {
        const std::int64_t first = o * s.channels * s.inner + i;
        double dot = 0, magnitude = 0;
        for (std::int64_t c = 0; c < s.channels; ++c) {
          dot += static_cast<double>(dy[first + c * s.inner]) * y[first + c * s.inner];
          magnitude += std::fabs(static_cast<double>(dy[first + c * s.inner]) * y[first + c * s.inner]);
        }
        for (std::int64_t c = 0; c < s.channels; ++c) {
          const std::int64_t e = first + c * s.inner;
          const double want = (dy[e] - dot) * y[e];
          const double tol = (4 + std::sqrt(static_cast<double>(s.channels))) * eps *
                                 (std::fabs(static_cast<double>(dy[e])) + magnitude) * y[e] +
                             std::numeric_limits<T>::min();
          const double g = got[offsets_.y + e];
          if (!(std::fabs(g - want) <= tol)) {
            return fail("softmax_backward: bottom_diff[", e, "] is ", g, ", expected ", want, " ± ", tol);
          }
        }
      }
    }
    return untouched_outside(got, bottom_diff.before(), offsets_.y, n, "softmax_backward bottom_diff");
  }

  // The softmax loss and its gradient against Caffe's formulas in double. prob: each
  // position's channels positive and summing to 1, one of them 1e-40 in places (below
  // FLT_MIN: the loss is then -log(FLT_MIN)), the label's NaN in others (fmax: -log(FLT_MIN)
  // too, NaN gradients); labels: mostly channels, also a fraction (read toward zero), -0.5
  // (class 0), 255 and -2^31 (ignored where the case has that ignore label, else outside:
  // NaN), `channels`, NaN and 3e9 (outside). The output full of NaN before.
  Result softmax_loss() {
    const SoftmaxShape& s = c_.softmax;
    const bool backward = c_.op == Operation::kSoftmaxLossBackward;
    const std::int64_t n = s.outer * s.channels * s.inner, positions = n == 0 ? 0 : s.outer * s.inner;
    std::vector<T> prob_values = values(offsets_.a, n, 0.01, 1, 54);
    std::vector<T> label_values = filled(offsets_.b, positions, T(0));
    for (std::int64_t o = 0; o < s.outer; ++o) {
      for (std::int64_t i = 0; i < s.inner; ++i) {
        const std::int64_t q = o * s.inner + i;
        T* p = prob_values.data() + offsets_.a + o * s.channels * s.inner + i;
        if (q % 13 == 4) p[(q % s.channels) * s.inner] = static_cast<T>(1e-40);
        T sum = T(0);
        for (std::int64_t c = 0; c < s.channels; ++c) sum += p[c * s.inner];
        for (std::int64_t c = 0; c < s.channels; ++c) p[c * s.inner] /= sum;
        const T special[] = {static_cast<T>(s.channels - 1) + T(0.75),
                             T(-0.5),
                             T(255),
                             static_cast<T>(s.channels),
                             std::numeric_limits<T>::quiet_NaN(),
                             T(3e9),
                             T(-2147483648.0)};
        const T l = q % 11 < 7 ? special[q % 11] : static_cast<T>(q % s.channels);
        label_values[offsets_.b + q] = l;
        if (q % 13 == 9 && l >= 0 && l < T(s.channels)) p[static_cast<std::int64_t>(l) * s.inner] = std::numeric_limits<T>::quiet_NaN();
      }
    }
    Operand<T> prob(device_, prob_values);
    Operand<T> label(device_, label_values);
    const std::int64_t out_count = backward ? n : positions;
    Operand<T> out(device_, filled(offsets_.y, out_count, std::numeric_limits<T>::quiet_NaN()));
    const double scale = -0.375;
    if (backward) {
      device_.softmax_loss_backward(precision, s.outer, s.channels, s.inner, prob.get(), offsets_.a, label.get(),
                                    offsets_.b, c_.ignore_label, scale, out.get(), offsets_.y);
    } else {
      device_.softmax_loss(precision, s.outer, s.channels, s.inner, prob.get(), offsets_.a, label.get(), offsets_.b,
                           c_.ignore_label, out.get(), offsets_.y);
    }
    const std::vector<T> got = out.after();
    for (std::int64_t o = 0; o < s.outer; ++o) {
      for (std::int64_t i = 0; i < s.inner; ++i) {
        const std::int64_t q = o * s.inner + i, first = o * s.channels * s.inner + i;
        const double l = std::trunc(static_cast<double>(label_values[offsets_.b + q]));
        const bool ignored = l == c_.ignore_label, outside = !ignored && !(l >= 0 && l < s.channels);
        const T* p = prob_values.data() + offsets_.a + first;
        for (std::int64_t c = 0; c < (backward ? s.channels : 1); ++c) {
          double want = 0;
          if (outside) {
            want = std::numeric_limits<double>::quiet_NaN();
          } else if (!ignored && backward) {
            want = (static_cast<double>(p[c * s.inner]) - (c == l ? 1 : 0)) * scale;
          } else if (!ignored) {
            want = -std::log(std::fmax(static_cast<double>(p[static_cast<std::int64_t>(l) * s.inner]),
                                       static_cast<double>(FLT_MIN)));
          }
          const std::int64_t e = backward ? first + c * s.inner : q;
          const double g = got[offsets_.y + e];
          // The smallest normal as well: a device that flushes the denormal prob to zero.
          const double tol = (backward ? 2 * eps * std::fabs(want) : 4 * eps * (1 + std::fabs(want))) +
                             std::numeric_limits<T>::min();
          const bool ok = std::isnan(want) ? std::isnan(g) : std::fabs(g - want) <= tol;
          if (!ok) return fail(to_string(c_.op), ": element ", e, " (label ", label_values[offsets_.b + q], ") is ", g,
                               ", expected ", want, " ± ", tol);
        }
      }
    }
    return untouched_outside(got, out.before(), offsets_.y, out_count, to_string(c_.op));
  }

  // LRN across channels against Caffe's formulas in double, each window summed directly (the
  // kernels' running sum adds and subtracts: its rounding is bounded by its largest partial
  // sum). bottom in [-2, 2]; the backward's top and scale are the formulas' (rounded to T).
  Result lrn() {
    const SoftmaxShape& s = c_.softmax;
    const bool backward = c_.op == Operation::kLrnBackward;
    const std::int64_t n = s.outer * s.channels * s.inner, size = c_.lrn_size, half = (size - 1) / 2;
    const double alpha = 0.75, beta = 0.6, k = 1.5;
    const double alpha_over_size = alpha / static_cast<double>(size), cache_ratio = 2 * alpha * beta / size;
    Operand<T> bottom(device_, values(offsets_.a, n, -2, 2, 57));
    const T* x = bottom.before().data() + offsets_.a;
    // fn(element) over the window of the element at (o, c, i).
    const auto window = [&](std::int64_t o, std::int64_t c, std::int64_t i, auto&& fn) {
      for (std::int64_t w = std::max<std::int64_t>(0, c - half); w <= std::min(s.channels - 1, c + half); ++w) {
        fn((o * s.channels + w) * s.inner + i);
      }
    };
    const auto for_each = [&](auto&& fn) {
      for (std::int64_t o = 0; o < s.outer; ++o) {
        for (std::int64_t c = 0; c < s.channels; ++c) {
          for (std::int64_t i = 0; i < s.inner; ++i) fn(o, c, i, (o * s.channels + c) * s.inner + i);
        }
      }
    };
    std::vector<T> scale_values = filled(offsets_.b, n, T(0)), top_values = filled(offsets_.b, n, T(0));
    for_each([&](std::int64_t o, std::int64_t c, std::int64_t i, std::int64_t e) {
      double sum = 0;
      window(o, c, i, [&](std::int64_t f) { sum += static_cast<double>(x[f]) * x[f]; });
      scale_values[offsets_.b + e] = static_cast<T>(k + alpha_over_size * sum);
      top_values[offsets_.b + e] = static_cast<T>(x[e] * std::pow(k + alpha_over_size * sum, -beta));
    });
    const double running = eps * (4 + 2 * static_cast<double>(s.channels));  // per unit of partial sum
    Operand<T> out(device_, filled(offsets_.y, n, std::numeric_limits<T>::quiet_NaN()));
    std::vector<double> want(static_cast<std::size_t>(n)), tolerance(want.size());
    if (!backward) {
      device_.lrn_scale(precision, s.outer, s.channels, s.inner, size, alpha_over_size, k, bottom.get(), offsets_.a,
                        out.get(), offsets_.y);
      for_each([&](std::int64_t o, std::int64_t c, std::int64_t i, std::int64_t e) {
        double sum = 0;
        window(o, c, i, [&](std::int64_t f) { sum += static_cast<double>(x[f]) * x[f]; });
        want[e] = k + alpha_over_size * sum;
        tolerance[e] = 2 * eps * want[e] + running * alpha_over_size * 4 * static_cast<double>(size);
      });
    } else {
      Operand<T> top(device_, top_values), scale(device_, scale_values);
      Operand<T> top_diff(device_, values(offsets_.b, n, -1, 1, 58));
      const T* y = top_values.data() + offsets_.b;
      const T* sc = scale_values.data() + offsets_.b;
      const T* dy = top_diff.before().data() + offsets_.b;
      device_.lrn_backward(precision, s.outer, s.channels, s.inner, size, -beta, cache_ratio, bottom.get(), offsets_.a,
                           top.get(), offsets_.b, scale.get(), offsets_.b, top_diff.get(), offsets_.b, out.get(),
                           offsets_.y);
      // The largest window sum of |dy y / scale|: the running sum's partial sums are below it.
      double largest = 0;
      for_each([&](std::int64_t o, std::int64_t c, std::int64_t i, std::int64_t) {
        double terms = 0;
        window(o, c, i, [&](std::int64_t f) { terms += std::fabs(static_cast<double>(dy[f]) * y[f] / sc[f]); });
        largest = std::max(largest, terms);
      });
      for_each([&](std::int64_t o, std::int64_t c, std::int64_t i, std::int64_t e) {
        double sum = 0;
        window(o, c, i, [&](std::int64_t f) { sum += static_cast<double>(dy[f]) * y[f] / sc[f]; });
        const double first = dy[e] * std::pow(static_cast<double>(sc[e]), -beta);
        want[e] = first - cache_ratio * x[e] * sum;
        tolerance[e] = 16 * eps * std::fabs(first) +
                       cache_ratio * std::fabs(static_cast<double>(x[e])) * (running * largest + 4 * eps * std::fabs(sum));
      });
    }
    const std::vector<T> got = out.after();
    for (std::size_t e = 0; e < want.size(); ++e) {
      const double g = got[offsets_.y + e];
      if (!(std::fabs(g - want[e]) <= tolerance[e] + std::numeric_limits<T>::min())) {
        return fail(to_string(c_.op), ": element ", e, " is ", g, ", expected ", want[e], " ± ", tolerance[e]);
      }
    }
    return untouched_outside(got, out.before(), offsets_.y, n, to_string(c_.op));
  }

  // channel_affine with the case's factors (absent ones passed as null), out of place or in
  // place (top = bottom), against the formula in double.
  Result channel_affine() {
    const SoftmaxShape& s = c_.softmax;
    const std::int64_t n = s.outer * s.channels * s.inner;
    const bool in_place = c_.alias == Alias::kYIsA;
    std::vector<T> x_values = values(offsets_.a, n, -2, 2, 59);
    Operand<T> bottom(device_, x_values);
    Operand<T> scale(device_, values(offsets_.b, s.channels, -1.5, 1.5, 60));
    Operand<T> bias(device_, values(offsets_.b, s.channels, -1, 1, 61));
    Operand<T> separate(device_, filled(offsets_.y, n, std::numeric_limits<T>::quiet_NaN()));
    Operand<T>& top = in_place ? bottom : separate;
    const std::int64_t y_offset = in_place ? offsets_.a : offsets_.y;
    device_.channel_affine(precision, s.outer, s.channels, s.inner, bottom.get(), offsets_.a,
                           c_.with_scale ? scale.get() : nullptr, offsets_.b, c_.with_bias ? bias.get() : nullptr,
                           offsets_.b, top.get(), y_offset);
    const std::vector<T> got = top.after();
    for (std::int64_t e = 0; e < n; ++e) {
      const std::int64_t c = e / s.inner % s.channels;
      const double x = x_values[offsets_.a + e];
      const double sc = c_.with_scale ? static_cast<double>(scale.before()[offsets_.b + c]) : 1;
      const double b = c_.with_bias ? static_cast<double>(bias.before()[offsets_.b + c]) : 0;
      const double want = x * sc + b, g = got[y_offset + e];
      if (!(std::fabs(g - want) <= 2 * eps * (std::fabs(x * sc) + std::fabs(b)))) {
        return fail("channel_affine: top[", e, "] is ", g, ", expected ", want);
      }
    }
    return untouched_outside(got, top.before(), y_offset, n, "channel_affine top");
  }

  // An index array for `rows` picks from a table of table_rows rows, read as Caffe reads it
  // (toward zero): whole rows, row (5r + 3) mod table_rows for pick r (so rows repeat where
  // there are more picks than rows), fractions (2.75 is row 2, -0.5 row 0), and, every
  // seventh, one that names no row (table_rows, -1, NaN, 2^31, -inf in turn).
  std::vector<T> row_indices(std::int64_t offset, const GatherShape& g) {
    std::vector<T> v = filled(offset, g.rows, T(0));
    const T outside[] = {T(g.table_rows), T(-1), std::numeric_limits<T>::quiet_NaN(), T(2147483648.0),
                         -std::numeric_limits<T>::infinity()};
    for (std::int64_t r = 0; r < g.rows; ++r) {
      const std::int64_t row = g.table_rows == 0 ? 0 : (r * 5 + 3) % g.table_rows;
      T& x = v[offset + r];
      if (r % 7 == 6 || g.table_rows == 0) x = outside[(r / 7) % 5];
      else if (r % 3 == 1) x = T(row) + T(0.75);
      else if (r % 3 == 2 && row == 0) x = T(-0.5);
      else x = T(row);
    }
    return v;
  }
  static std::int64_t row_of(T index, std::int64_t table_rows) {
    if (!(index >= T(-2147483648.0) && index < T(2147483648.0))) return -1;
    const auto row = static_cast<std::int64_t>(index);
    return row >= 0 && row < table_rows ? row : -1;
  }

  // gather_rows: dst's rows the table's named ones, bitwise (NaN payloads, -0, denormals: a
  // copy), a row of NaN where the index names none. scatter_add_rows: the table plus the rows
  // added in index order, computed in T in that order, so exact.
  Result gather_rows() {
    const GatherShape& g = c_.gather;
    const bool gather = c_.op == Operation::kGatherRows;
    const std::int64_t picked = g.rows * g.columns, table_n = g.table_rows * g.columns;
    const std::vector<T> index = row_indices(offsets_.a, g);
    std::vector<T> table_values = values(offsets_.b, table_n, -1, 1, 62);
    if (table_n > 2) {
      table_values[offsets_.b] = T(-0.0);
      table_values[offsets_.b + 1] = std::numeric_limits<T>::denorm_min();
    }
    Operand<T> idx(device_, index);
    Operand<T> table(device_, table_values);
    Operand<T> rows(device_, gather ? filled(offsets_.y, picked, T(-3.5)) : values(offsets_.y, picked, -1, 1, 63));
    if (gather) {
      device_.gather_rows(precision, g.rows, g.columns, g.table_rows, idx.get(), offsets_.a, table.get(), offsets_.b,
                          rows.get(), offsets_.y);
    } else {
      device_.scatter_add_rows(precision, g.rows, g.columns, g.table_rows, idx.get(), offsets_.a, rows.get(),
                               offsets_.y, table.get(), offsets_.b);
    }
    const Operand<T>& out = gather ? rows : table;
    std::vector<T> want = out.before();
    const std::int64_t out_offset = gather ? offsets_.y : offsets_.b;
    for (std::int64_t r = 0; r < g.rows; ++r) {
      const std::int64_t row = row_of(index[offsets_.a + r], g.table_rows);
      for (std::int64_t c = 0; c < g.columns; ++c) {
        if (gather) {
          want[offsets_.y + r * g.columns + c] =
              row < 0 ? std::numeric_limits<T>::quiet_NaN() : table_values[offsets_.b + row * g.columns + c];
        } else if (row >= 0) {
          want[offsets_.b + row * g.columns + c] += rows.before()[offsets_.y + r * g.columns + c];
        }
      }
    }
    const std::vector<T> got = out.after();
    for (std::size_t i = 0; i < got.size(); ++i) {
      const bool both_nan = std::isnan(got[i]) && std::isnan(want[i]);
      if (!same_bits(got[i], want[i]) && !(gather && both_nan)) {
        return fail(to_string(c_.op), ": element ", static_cast<std::int64_t>(i) - out_offset, " is ", got[i],
                    ", expected ", want[i]);
      }
    }
    // The inputs as they were: index, and the table (gather) or the rows (scatter).
    Result r = untouched_outside(idx.after(), index, 0, 0, "index");
    if (r.passed) r = untouched_outside(gather ? table.after() : rows.after(), gather ? table_values : rows.before(), 0,
                                        0, gather ? "table" : "src");
    return r;
  }

  // top_k_hits: scores in eighths (ties with the label's score, which count against it), a NaN
  // score now and then, labels as softmax_loss's cases have them (fractions, ignored,
  // outside, NaN); each position's hit against a count of the channels scoring at least the
  // label's, exact.
  Result top_k_hits() {
    const SoftmaxShape& s = c_.softmax;
    const std::int64_t n = s.outer * s.channels * s.inner, positions = n == 0 ? 0 : s.outer * s.inner;
    std::vector<T> scores = values(offsets_.a, n, -1, 1, 64);
    for (std::int64_t e = 0; e < n; ++e) {
      T& x = scores[offsets_.a + e];
      x = e % 17 == 5 ? std::numeric_limits<T>::quiet_NaN() : std::round(x * T(8)) / T(8);
    }
    std::vector<T> labels = filled(offsets_.b, positions, T(0));
    const T special[] = {static_cast<T>(s.channels - 1) + T(0.75), T(-0.5), T(255), static_cast<T>(s.channels),
                         std::numeric_limits<T>::quiet_NaN(), T(255.5), T(2.25)};
    for (std::int64_t q = 0; q < positions; ++q) {
      labels[offsets_.b + q] = q % 11 < 7 ? special[q % 11] : static_cast<T>((q * 7) % s.channels);
    }
    Operand<T> score(device_, scores);
    Operand<T> label(device_, labels);
    Operand<T> hits(device_, filled(offsets_.y, positions, T(-3.5)));
    device_.top_k_hits(precision, s.outer, s.channels, s.inner, score.get(), offsets_.a, label.get(), offsets_.b,
                       c_.ignore_label, c_.top_k, hits.get(), offsets_.y);
    const std::vector<T> got = hits.after();
    for (std::int64_t q = 0; q < positions; ++q) {
      const double l = std::trunc(static_cast<double>(labels[offsets_.b + q]));
      const bool ignored = l == c_.ignore_label, outside = !ignored && !(l >= 0 && l < s.channels);
      double want = 0;
      if (outside) {
        want = std::numeric_limits<double>::quiet_NaN();
      } else if (!ignored) {
        const T* p = scores.data() + offsets_.a + q / s.inner * s.channels * s.inner + q % s.inner;
        const T truth = p[static_cast<std::int64_t>(l) * s.inner];
        std::int64_t at_least = 0;
        for (std::int64_t c = 0; c < s.channels; ++c) at_least += p[c * s.inner] >= truth ? 1 : 0;
        want = at_least - 1 < c_.top_k ? 1 : 0;  // the label's own channel is one of them
      }
      const double g = got[offsets_.y + q];
      if (!(g == want || (std::isnan(g) && std::isnan(want)))) {
        return fail("top_k_hits: position ", q, " is ", g, ", expected ", want, " (label ", labels[offsets_.b + q], ")");
      }
    }
    return untouched_outside(got, hits.before(), offsets_.y, positions, "top_k_hits hits");
  }

  // bernoulli_mask: each element against the stream's word from blobrt_kernels' generator
  // (the host kernel's, which tests/core hold to Random123's known answers), exact; and, over
  // many elements, the share kept within 5 standard deviations of its probability (a kernel
  // that drew from the wrong words of a good stream fails the first check, not this one).
  Result bernoulli_mask() {
    using blobrt_kernels::Philox4x32;
    const RandomDraw& d = c_.draw;
    Operand<T> mask(device_, filled(offsets_.y, c_.n, T(-3.5)));
    device_.bernoulli_mask(precision, c_.n, d.seed, d.counter, d.threshold, mask.get(), offsets_.y);
    const std::vector<T> got = mask.after();
    std::int64_t kept = 0;
    for (std::int64_t i = 0; i < c_.n; ++i) {
      const auto w = static_cast<std::uint64_t>(d.counter + i);
      const std::uint32_t word = Philox4x32::words(static_cast<std::uint64_t>(d.seed), w >> 2)[w & 3];
      const T want = word > static_cast<std::uint32_t>(d.threshold) ? T(1) : T(0);
      const T g = got[offsets_.y + i];
      if (!same_bits(g, want)) {
        return fail("bernoulli_mask: element ", i, " (word ", w, ", ", word, " against ", d.threshold, ") is ", g,
                    ", expected ", want);
      }
      kept += want == T(1);
    }
    if (c_.n >= 1000) {
      const double p = (4294967295.0 - static_cast<double>(d.threshold)) / 4294967296.0;
      const double mean = p * static_cast<double>(c_.n), spread = 5 * std::sqrt(mean * (1 - p)) + 1;
      if (std::fabs(static_cast<double>(kept) - mean) > spread) {
        return fail("bernoulli_mask: ", kept, " of ", c_.n, " kept, expected ", mean, " +- ", spread);
      }
    }
    return untouched_outside(got, mask.before(), offsets_.y, c_.n, "bernoulli_mask mask");
  }

  // roi_max_pool and its backward, against a reference written here from py-faster-rcnn's
  // roi_pooling_layer.cu: ROIPoolForward's bins and argmax, then ROIPoolBackward's own loop
  // (per cell, over the regions and the bins it derives, adding where the argmax is the cell),
  // in T, in its order: both exact. The regions (image index, x1, y1, x2, y2 in input
  // coordinates) are a fixed list: inside, at and past the map's edges, 1 x 1, the whole
  // image, malformed (x2 < x1), an index toward zero from -0.5, and the ones the operation
  // defines where the kernel would read outside (an image past the batch, a negative one,
  // NaN and huge corners). Inputs are multiples of 0.5 (ties for the first-maximum rule).
  static std::vector<std::array<double, 5>> roi_boxes(const RoiShape& s) {
    const double h = static_cast<double>(s.height) / s.spatial_scale, w = static_cast<double>(s.width) / s.spatial_scale;
    const double last = static_cast<double>(s.batch - 1), nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<std::array<double, 5>> boxes = {
        {0, 0.1 * w, 0.2 * h, 0.7 * w, 0.9 * h},  {last, 0, 0, w - 1, h - 1},
        {0, -0.3 * w, -0.2 * h, 0.4 * w, 0.3 * h}, {last, 0.5 * w, 0.6 * h, 1.4 * w, 1.2 * h},
        {0, 0.3 * w, 0.3 * h, 0.3 * w, 0.3 * h},  {last, 0.6 * w, 0.5 * h, 0.2 * w, 0.1 * h},
        {-0.5, 0.25 * w, 0.1 * h, 0.55 * w, 0.8 * h}, {0.9, 0, 0.45 * h, 0.95 * w, 0.55 * h},
        {static_cast<double>(s.batch), 1, 1, 2, 2}, {-1, 1, 1, 2, 2},
        {0, nan, 1, 2, 2},                         {0, 1, 1, 1e9, 2},
        {last, 0.05 * w, 0.05 * h, 0.35 * w, 0.95 * h}};
    boxes.resize(static_cast<std::size_t>(std::min<std::int64_t>(s.rois, static_cast<std::int64_t>(boxes.size()))));
    while (static_cast<std::int64_t>(boxes.size()) < s.rois) {  // more: the list again, shifted
      std::array<double, 5> b = boxes[boxes.size() % 8];
      for (int i = 1; i < 5; ++i) b[i] += static_cast<double>(boxes.size());
      boxes.push_back(b);
    }
    return boxes;
  }
  // ROIPoolForward's region in T; false where the operation defines NaN bins.
  struct RoiRef {
    std::int64_t image;
    int x1, y1, x2, y2;
    T bin_h, bin_w;
  };
  static bool roi_ref(const RoiShape& s, const T* box, RoiRef* r) {
    if (!(std::trunc(box[0]) >= T(0) && std::trunc(box[0]) < static_cast<T>(s.batch))) return false;
    const T scale = static_cast<T>(s.spatial_scale);
    int corner[4];
    for (int i = 0; i < 4; ++i) {
      const T v = box[1 + i] * scale;
      if (!(std::fabs(v) <= T(16777216))) return false;
      corner[i] = static_cast<int>(std::round(v));
    }
    r->image = static_cast<std::int64_t>(box[0]);
    r->x1 = corner[0], r->y1 = corner[1], r->x2 = corner[2], r->y2 = corner[3];
    r->bin_h = static_cast<T>(std::max(r->y2 - r->y1 + 1, 1)) / static_cast<T>(s.pooled_h);
    r->bin_w = static_cast<T>(std::max(r->x2 - r->x1 + 1, 1)) / static_cast<T>(s.pooled_w);
    return true;
  }
  Result roi_max_pool() {
    const RoiShape& s = c_.roi;
    const std::int64_t plane = s.height * s.width, bins = s.pooled_h * s.pooled_w;
    const std::int64_t bottom_count = s.batch * s.channels * plane, top_count = s.rois * s.channels * bins;
    std::vector<T> box_values = filled(offsets_.b, s.rois * 5, T(0));
    const auto boxes = roi_boxes(s);
    for (std::size_t r = 0; r < boxes.size(); ++r) {
      for (int i = 0; i < 5; ++i) box_values[offsets_.b + r * 5 + i] = static_cast<T>(boxes[r][i]);
    }
    Operand<T> bottom(device_, pool_input(offsets_.a, bottom_count, 61));
    Operand<T> rois(device_, box_values);
    const T* in = bottom.before().data() + offsets_.a;
    const T* box = rois.before().data() + offsets_.b;
    // The reference forward: each bin's value and argmax (-1: none).
    std::vector<T> top_ref(static_cast<std::size_t>(top_count));
    std::vector<std::int64_t> argmax(top_ref.size(), -1);
    std::vector<RoiRef> regions(static_cast<std::size_t>(s.rois));
    std::vector<bool> valid(regions.size());
    for (std::int64_t r = 0; r < s.rois; ++r) {
      valid[r] = roi_ref(s, box + r * 5, &regions[r]);
      const RoiRef& g = regions[r];
      for (std::int64_t c = 0; c < s.channels; ++c) {
        for (std::int64_t ph = 0; ph < s.pooled_h; ++ph) {
          for (std::int64_t pw = 0; pw < s.pooled_w; ++pw) {
            const std::int64_t i = ((r * s.channels + c) * s.pooled_h + ph) * s.pooled_w + pw;
            if (!valid[r]) {
              top_ref[i] = std::numeric_limits<T>::quiet_NaN();
              continue;
            }
            auto clip = [](int v, std::int64_t hi) { return std::min(std::max(v, 0), static_cast<int>(hi)); };
            const int h0 = clip(static_cast<int>(std::floor(static_cast<T>(ph) * g.bin_h)) + g.y1, s.height);
            const int h1 = clip(static_cast<int>(std::ceil(static_cast<T>(ph + 1) * g.bin_h)) + g.y1, s.height);
            const int w0 = clip(static_cast<int>(std::floor(static_cast<T>(pw) * g.bin_w)) + g.x1, s.width);
            const int w1 = clip(static_cast<int>(std::ceil(static_cast<T>(pw + 1) * g.bin_w)) + g.x1, s.width);
            T best = (h1 <= h0 || w1 <= w0) ? T(0) : T(-FLT_MAX);
            const T* p = in + (g.image * s.channels + c) * plane;
            for (int y = h0; y < h1; ++y) {
              for (int x = w0; x < w1; ++x) {
                if (p[y * s.width + x] > best) best = p[y * s.width + x], argmax[i] = y * s.width + x;
              }
            }
            top_ref[i] = best;
          }
        }
      }
    }
    if (c_.op == Operation::kRoiMaxPool) {
      Operand<T> top(device_, filled(offsets_.y, top_count, T(-3.5)));
      device_.roi_max_pool(precision, s.batch, s.channels, s.height, s.width, s.rois, s.pooled_h, s.pooled_w,
                           s.spatial_scale, bottom.get(), offsets_.a, rois.get(), offsets_.b, top.get(), offsets_.y);
      const std::vector<T> got = top.after();
      for (std::int64_t i = 0; i < top_count; ++i) {
        const T g = got[offsets_.y + i];
        if (std::isnan(top_ref[i]) ? !std::isnan(g) : !same_bits(g, top_ref[i])) {
          return fail("roi_max_pool: top[", i, "] (region ", i / (s.channels * bins), ") is ", g, ", expected ",
                      top_ref[i]);
        }
      }
      return untouched_outside(got, top.before(), offsets_.y, top_count, "roi_max_pool top");
    }
    Operand<T> top_diff(device_, values(offsets_.y, top_count, -1, 1, 62));
    Operand<T> bottom_diff(device_, filled(offsets_.y, bottom_count, std::numeric_limits<T>::quiet_NaN()));
    device_.roi_max_pool_backward(precision, s.batch, s.channels, s.height, s.width, s.rois, s.pooled_h, s.pooled_w,
                                  s.spatial_scale, bottom.get(), offsets_.a, rois.get(), offsets_.b, top_diff.get(),
                                  offsets_.y, bottom_diff.get(), offsets_.y);
    const std::vector<T> got = bottom_diff.after();
    const T* diff = top_diff.before().data() + offsets_.y;
    // ROIPoolBackward, per cell (n, c, h, w).
    for (std::int64_t e = 0; e < bottom_count; ++e) {
      const int w = static_cast<int>(e % s.width), h = static_cast<int>(e / s.width % s.height);
      const std::int64_t c = e / plane % s.channels, n = e / plane / s.channels;
      T gradient = T(0);
      for (std::int64_t r = 0; r < s.rois; ++r) {
        const RoiRef& g = regions[r];
        if (!valid[r] || g.image != n) continue;
        if (!(w >= g.x1 && w <= g.x2 && h >= g.y1 && h <= g.y2)) continue;
        auto edge = [](T v, bool up, std::int64_t hi) {
          const int i = static_cast<int>(up ? std::ceil(v) : std::floor(v));
          return std::min(std::max(i, 0), static_cast<int>(hi));
        };
        const int ph0 = edge(static_cast<T>(h - g.y1) / g.bin_h, false, s.pooled_h);
        const int ph1 = edge(static_cast<T>(h - g.y1 + 1) / g.bin_h, true, s.pooled_h);
        const int pw0 = edge(static_cast<T>(w - g.x1) / g.bin_w, false, s.pooled_w);
        const int pw1 = edge(static_cast<T>(w - g.x1 + 1) / g.bin_w, true, s.pooled_w);
        for (int ph = ph0; ph < ph1; ++ph) {
          for (int pw = pw0; pw < pw1; ++pw) {
            const std::int64_t i = (r * s.channels + c) * bins + ph * s.pooled_w + pw;
            if (argmax[i] == h * s.width + w) gradient += diff[i];
          }
        }
      }
      const T g = got[offsets_.y + e];
      if (!same_bits(g, gradient)) {
        return fail("roi_max_pool_backward: bottom_diff[", e, "] (image ", n, ", channel ", c, ", cell ", h, ", ", w,
                    ") is ", g, ", expected ", gradient);
      }
    }
    return untouched_outside(got, bottom_diff.before(), offsets_.y, bottom_count, "roi_max_pool_backward bottom_diff");
  }

  // copy_rows: every element of dst as it was but the rows copied, bitwise (NaN payloads,
  // -0 and denormals included: a copy, not arithmetic).
  Result copy_rows() {
    const RowsShape& g = c_.copy;
    const auto extent = [&](std::int64_t stride) {
      return g.rows == 0 || g.columns == 0 ? 0 : (g.rows - 1) * stride + g.columns;
    };
    std::vector<T> src_values = values(offsets_.a, extent(g.src_stride), -1, 1, 55);
    if (extent(g.src_stride) > 2) {
      src_values[offsets_.a] = T(-0.0);
      src_values[offsets_.a + 1] = std::numeric_limits<T>::denorm_min();
      src_values[offsets_.a + 2] = std::numeric_limits<T>::quiet_NaN();
    }
    Operand<T> src(device_, src_values);
    Operand<T> dst(device_, values(offsets_.y, extent(g.dst_stride), 2, 3, 56));
    device_.copy_rows(precision, g.rows, g.columns, src.get(), offsets_.a, g.src_stride, dst.get(), offsets_.y,
                      g.dst_stride);
    std::vector<T> want = dst.before();
    for (std::int64_t r = 0; r < g.rows; ++r) {
      for (std::int64_t c = 0; c < g.columns; ++c) {
        want[offsets_.y + r * g.dst_stride + c] = src_values[offsets_.a + r * g.src_stride + c];
      }
    }
    const std::vector<T> got = dst.after();
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!same_bits(got[i], want[i])) return fail("copy_rows: dst[", i, "] is ", got[i], ", expected ", want[i]);
    }
    return {true, false, ""};
  }

  // The codes that compare and select (exact, bit for bit, on inputs with ties).
  bool selects() const {
    switch (c_.elementwise) {
      case ElementwiseOp::kThreshold:
      case ElementwiseOp::kClip:
      case ElementwiseOp::kClipBackward:
      case ElementwiseOp::kMaxStep:
      case ElementwiseOp::kArgmaxStep:
      case ElementwiseOp::kMaskSelect:
      case ElementwiseOp::kPositiveSelect:
      case ElementwiseOp::kZeroWhereLabel: return true;
      default: return false;
    }
  }

  // Inputs on the operation's domain; sign, sgnbit and abs also get -0.0, +0.0 and
  // negatives at fixed places.
  std::vector<T> elementwise_input(std::int64_t offset, std::int64_t n, unsigned seed) {
    switch (c_.elementwise) {
      case ElementwiseOp::kLog:
      case ElementwiseOp::kSqrt: return values(offset, n, 0.05, 4, seed);
      case ElementwiseOp::kPowx:
        // Integral exponents are defined on negative bases too (Caffe's PowerLayer).
        return c_.alpha == std::floor(c_.alpha) ? values(offset, n, -2, 2, seed) : values(offset, n, 0.05, 4, seed);
      case ElementwiseOp::kExp: return values(offset, n, -4, 4, seed);
      case ElementwiseOp::kMaskSelect: {
        // A mask: bottom indices 0 to 3, so that alpha (1) picks some.
        std::vector<T> v = values(offset, n, -0.49, 3.49, seed);
        for (std::int64_t i = 0; i < n; ++i) v[offset + i] = std::round(v[offset + i]);
        return v;
      }
      default: break;
    }
    std::vector<T> v = values(offset, n, -2, 2, seed);
    const T specials[] = {T(-0.0), T(0.0), T(-1), T(1), T(-1e-30), T(3.5)};
    for (std::int64_t i = 0; i < n && i < 6; ++i) v[offset + i * 3 % n] = specials[i];
    if (c_.elementwise == ElementwiseOp::kSigmoidCrossEntropy) {
      // Inputs whose exp overflows in float and double: the .cu's stable form must hold there.
      const T large[] = {T(100), T(-100), T(1e4), T(-1e4)};
      for (std::int64_t i = 0; i < 4 && 6 + i < n; ++i) v[offset + (6 + i) * 5 % n] = large[i];
    }
    if (selects()) {
      // Quarters: ties between a and b, values on Clip's bounds and Threshold's, -0 from -1e-30.
      for (std::int64_t i = 0; i < n; ++i) v[offset + i] = std::round(v[offset + i] * 4) / 4;
    }
    return v;
  }

  // The value Caffe's CPU code computes, in double (the list's formula); and its
  // tolerance: exact, a few ulps for the ones libm or a divider rounds, else one rounding.
  void reference(double a, double b, double y, double* ref, double* tol) {
    const double al = static_cast<T>(c_.alpha), be = static_cast<T>(c_.beta);
    *ref = ew_formula(c_.elementwise, a, b, y, al, be);
    if (selects()) {  // comparisons and a selection: exact
      *tol = 0;
      return;
    }
    switch (c_.elementwise) {
      case ElementwiseOp::kSet:
      case ElementwiseOp::kAbs:
      case ElementwiseOp::kSign:
      case ElementwiseOp::kSgnbit: *tol = 0; return;
      case ElementwiseOp::kAxpby: *tol = 2 * eps * (std::fabs(al * a) + std::fabs(be * y)); return;
      case ElementwiseOp::kPowx: *tol = 16 * eps * std::fabs(*ref); return;
      case ElementwiseOp::kDiv:
      case ElementwiseOp::kSqrt:
      case ElementwiseOp::kExp:
      case ElementwiseOp::kLog: *tol = 4 * eps * std::fabs(*ref); return;
      // tanh: OpenCL allows 5 ulp; sigmoid is 0.5 tanh(a / 2) + 0.5, Caffe's form (in double
      // for float too where the device has fp64), whose tanh error is absolute (it cancels
      // where the sigmoid is near 0).
      case ElementwiseOp::kTanh: *tol = 8 * eps * std::fabs(*ref) + std::numeric_limits<T>::min(); return;
      case ElementwiseOp::kSigmoid: *tol = 4 * eps + 2 * eps * std::fabs(*ref); return;
      // b a (1 - a) and b (1 - a a): three roundings, each relative to its own term's size.
      case ElementwiseOp::kSigmoidBackward:
        *tol = 3 * eps * std::fabs(b * a) * (1 + std::fabs(a)) + std::numeric_limits<T>::min();
        return;
      case ElementwiseOp::kTanhBackward:
        *tol = 3 * eps * std::fabs(b) * (1 + a * a) + std::numeric_limits<T>::min();
        return;
      // ELU: exp's ulps, absolute in exp(a) - 1 (it cancels near 0), and the product; its
      // backward b (a + alpha): two roundings.
      case ElementwiseOp::kElu:
        *tol = a > 0 ? 0 : 8 * eps * std::fabs(al) * (std::exp(a) + 1) + std::numeric_limits<T>::min();
        return;
      case ElementwiseOp::kEluBackward:
        *tol = 2 * eps * std::fabs(b) * (std::fabs(a) + std::fabs(al)) + std::numeric_limits<T>::min();
        return;
      // BNLL: log(1 + u) of a rounded 1 + u, absolute; its backward exp's ulps and a division.
      case ElementwiseOp::kBnll: *tol = 4 * eps * (1 + std::fabs(*ref)); return;
      case ElementwiseOp::kBnllBackward: *tol = 6 * eps * std::fabs(*ref) + std::numeric_limits<T>::min(); return;
      // The sigmoid cross-entropy: a (b - s) in two roundings, and log(1 + exp(-|a|)) with
      // exp's and log's ulps and the rounded 1 + u (absolute: the term is at most log 2).
      case ElementwiseOp::kSigmoidCrossEntropy:
        *tol = 8 * eps * (1 + std::fabs(*ref)) + 3 * eps * std::fabs(a) * (std::fabs(b) + 1);
        return;
      // SmoothL1: the quadratic piece in three roundings, the linear one |a| - 0.5 / alpha
      // absolute in |a| (it cancels near the bound, where the two pieces meet, so a device
      // that rounds the bound otherwise picks a piece whose value differs by ulps only); its
      // derivative alpha a in one rounding, or the sign.
      case ElementwiseOp::kSmoothL1:
        *tol = 4 * eps * (std::fabs(*ref) + std::fabs(a)) + std::numeric_limits<T>::min();
        return;
      case ElementwiseOp::kSmoothL1Backward: *tol = 2 * eps * std::fabs(*ref) + std::numeric_limits<T>::min(); return;
      default: break;
    }
    // One correctly rounded operation; results below the smallest normal number may be
    // flushed to zero (GPUs, OpenCL devices without denormals).
    *tol = eps * std::fabs(*ref) + std::numeric_limits<T>::min();
  }

  Result elementwise() {
    const bool uses_a = ew_code(c_.elementwise).a, uses_b = ew_code(c_.elementwise).b;
    const std::int64_t n = c_.n;
    // Divisors away from zero; y starts as NaN where the operation does not read it.
    std::vector<T> a_values = elementwise_input(offsets_.a, n, 31);
    std::vector<T> b_values = c_.elementwise == ElementwiseOp::kDiv ? values(offsets_.b, n, 0.5, 2, 32)
                                                                     : elementwise_input(offsets_.b, n, 32);
    if (c_.elementwise == ElementwiseOp::kDiv) {
      for (std::int64_t i = 1; i < n; i += 2) b_values[offsets_.b + i] = -b_values[offsets_.b + i];
    }
    const bool reads_y = ew_code(c_.elementwise).y;
    std::vector<T> y_values = reads_y ? (selects() ? elementwise_input(offsets_.y, n, 33) : values(offsets_.y, n, -2, 2, 33))
                                      : filled(offsets_.y, n, std::numeric_limits<T>::quiet_NaN());
    std::unique_ptr<Operand<T>> a, b, y;
    if (c_.alias == Alias::kYIsA) {
      y = std::make_unique<Operand<T>>(device_, a_values);
    } else if (c_.alias == Alias::kYIsB) {
      y = std::make_unique<Operand<T>>(device_, b_values);
    } else {
      y = std::make_unique<Operand<T>>(device_, y_values);
    }
    if (uses_a && c_.alias != Alias::kYIsA) a = std::make_unique<Operand<T>>(device_, a_values);
    if (uses_b && c_.alias != Alias::kYIsB) b = std::make_unique<Operand<T>>(device_, b_values);
    auto handle = [&](const std::unique_ptr<Operand<T>>& operand, bool used, Alias self) -> ConstDeviceBuffer {
      if (!used) return nullptr;  // operands an operation does not name are NULL (plugin_abi.h)
      return c_.alias == self ? y->get() : operand->get();
    };
    device_.elementwise(precision, c_.elementwise, n, c_.alpha, c_.beta, handle(a, uses_a, Alias::kYIsA),
                        offsets_.a, handle(b, uses_b, Alias::kYIsB), offsets_.b, y->get(), offsets_.y);
    const std::vector<T> got = y->after();
    const std::vector<T>& y_before = y->before();
    for (std::int64_t i = 0; i < n; ++i) {
      double ref = 0, tol = 0;
      reference(a_values[offsets_.a + i], b_values[offsets_.b + i], y_before[offsets_.y + i], &ref, &tol);
      const T g = got[offsets_.y + i];
      const bool exact_bits = c_.elementwise == ElementwiseOp::kSet || c_.elementwise == ElementwiseOp::kAbs ||
                              c_.elementwise == ElementwiseOp::kSgnbit || selects();
      const bool ok = exact_bits ? same_bits(g, static_cast<T>(ref)) : std::fabs(g - ref) <= tol;
      if (!ok) {
        return fail(to_string(c_.elementwise), ": y[", i, "] is ", g, std::signbit(g) ? " (sign bit set)" : "",
                    ", expected ", ref, exact_bits ? " exactly" : " ± ", tol, " (a=",
                    a_values[offsets_.a + i], ", b=", b_values[offsets_.b + i], ", y=", y_before[offsets_.y + i],
                    ")");
      }
    }
    return untouched_outside(got, y_before, offsets_.y, n, "element-wise y");
  }

  Device& device_;
  Case c_;
  Offsets offsets_;
};

}  // namespace

std::string math_case_name(const Case& c) {
  std::ostringstream s;
  if (c.op == Operation::kElementwise) {
    s << "ew_" << to_string(c.elementwise) << "_" << to_string(c.precision) << "_n" << c.n << "_off" << c.offset;
    if (c.elementwise == ElementwiseOp::kPowx || c.elementwise == ElementwiseOp::kAxpby ||
        c.elementwise == ElementwiseOp::kElu || c.elementwise == ElementwiseOp::kEluBackward ||
        c.elementwise == ElementwiseOp::kThreshold || c.elementwise == ElementwiseOp::kClip ||
        c.elementwise == ElementwiseOp::kClipBackward || c.elementwise == ElementwiseOp::kMaskSelect ||
        c.elementwise == ElementwiseOp::kArgmaxStep || c.elementwise == ElementwiseOp::kZeroWhereLabel ||
        c.elementwise == ElementwiseOp::kSmoothL1 || c.elementwise == ElementwiseOp::kSmoothL1Backward) {
      s << "_a" << number(c.alpha);  // the codes run with more than one alpha
    }
    if (c.alias == Alias::kYIsA) s << "_inplace_a";
    if (c.alias == Alias::kYIsB) s << "_inplace_b";
    return s.str();
  }
  if (c.op == Operation::kIm2col || c.op == Operation::kCol2im) {
    const ConvShape& g = c.conv;
    s << to_string(c.op) << "_" << to_string(c.precision) << "_c" << g.channels << "h" << g.height << "w" << g.width
      << "_k" << g.kernel_h << "x" << g.kernel_w << "_p" << g.pad_h << "x" << g.pad_w << "_s" << g.stride_h << "x"
      << g.stride_w << "_d" << g.dilation_h << "x" << g.dilation_w << "_off" << c.offset;
    return s.str();
  }
  if (c.op == Operation::kSoftmax || c.op == Operation::kSoftmaxBackward || c.op == Operation::kSoftmaxLoss ||
      c.op == Operation::kSoftmaxLossBackward) {
    s << to_string(c.op) << "_" << to_string(c.precision) << "_" << c.softmax.outer << "x" << c.softmax.channels << "x"
      << c.softmax.inner << "_off" << c.offset;
    if (c.op == Operation::kSoftmaxLoss || c.op == Operation::kSoftmaxLossBackward) {
      if (std::isnan(c.ignore_label)) {
        s << "_noignore";
      } else {
        s << "_ignore" << number(c.ignore_label);
      }
    }
    return s.str();
  }
  if (c.op == Operation::kLrnScale || c.op == Operation::kLrnBackward) {
    s << to_string(c.op) << "_" << to_string(c.precision) << "_" << c.softmax.outer << "x" << c.softmax.channels << "x"
      << c.softmax.inner << "_size" << c.lrn_size << "_off" << c.offset;
    return s.str();
  }
  if (c.op == Operation::kChannelAffine) {
    s << "channel_affine_" << to_string(c.precision) << "_" << c.softmax.outer << "x" << c.softmax.channels << "x"
      << c.softmax.inner << (c.with_scale ? "_scale" : "") << (c.with_bias ? "_bias" : "")
      << (c.alias == Alias::kYIsA ? "_inplace" : "") << "_off" << c.offset;
    return s.str();
  }
  if (c.op == Operation::kBernoulliMask) {
    s << "bernoulli_mask_" << to_string(c.precision) << "_n" << c.n << "_seed" << c.draw.seed << "_from"
      << c.draw.counter << "_t" << c.draw.threshold << "_off" << c.offset;
    return s.str();
  }
  if (c.op == Operation::kIm2col3d || c.op == Operation::kCol2im3d) {
    const Conv3dShape& g = c.conv3d;
    const auto axes = [&s](const char* tag, const std::int64_t (&v)[3]) { s << tag << v[0] << "x" << v[1] << "x" << v[2]; };
    s << to_string(c.op) << "_" << to_string(c.precision) << "_c" << g.channels;
    axes("_i", g.image);
    axes("_o", g.out);
    axes("_k", g.kernel);
    axes("_p", g.pad);
    axes("_s", g.stride);
    axes("_d", g.dilation);
    s << "_off" << c.offset;
    return s.str();
  }
  if (c.op == Operation::kRoiMaxPool || c.op == Operation::kRoiMaxPoolBackward) {
    const RoiShape& g = c.roi;
    s << to_string(c.op) << "_" << to_string(c.precision) << "_b" << g.batch << "c" << g.channels << "h" << g.height
      << "w" << g.width << "_r" << g.rois << "_p" << g.pooled_h << "x" << g.pooled_w << "_s"
      << number(g.spatial_scale) << "_off" << c.offset;
    return s.str();
  }
  if (c.op == Operation::kTopKHits) {
    s << "top_k_hits_" << to_string(c.precision) << "_" << c.softmax.outer << "x" << c.softmax.channels << "x"
      << c.softmax.inner << "_k" << c.top_k << (std::isnan(c.ignore_label) ? "" : "_ignore") << "_off" << c.offset;
    return s.str();
  }
  if (c.op == Operation::kGatherRows || c.op == Operation::kScatterAddRows) {
    s << to_string(c.op) << "_" << to_string(c.precision) << "_r" << c.gather.rows << "c" << c.gather.columns << "_t"
      << c.gather.table_rows << "_off" << c.offset;
    return s.str();
  }
  if (c.op == Operation::kCopyRows) {
    s << "copy_rows_" << to_string(c.precision) << "_r" << c.copy.rows << "c" << c.copy.columns << "_src"
      << c.copy.src_stride << "_dst" << c.copy.dst_stride << "_off" << c.offset;
    return s.str();
  }
  if (c.op == Operation::kMaxPool || c.op == Operation::kMaxPoolBackward || c.op == Operation::kAvePool ||
      c.op == Operation::kAvePoolBackward) {
    const PoolShape& g = c.pool;
    s << to_string(c.op) << "_" << to_string(c.precision) << "_c" << g.planes << "h" << g.height << "w" << g.width
      << "_k" << g.kernel_h << "x" << g.kernel_w << "_s" << g.stride_h << "x" << g.stride_w << "_p" << g.pad_h << "x"
      << g.pad_w << "_off" << c.offset;
    return s.str();
  }
  s << to_string(c.op) << "_" << to_string(c.precision) << "_" << (c.trans_a ? "T" : "N");
  if (c.op == Operation::kGemm) s << (c.trans_b ? "T" : "N");
  s << "_m" << c.m << "n" << c.n;
  if (c.op == Operation::kGemm) s << "k" << c.k;
  s << "_a" << number(c.alpha) << "_b" << number(c.beta) << "_off" << c.offset;
  return s.str();
}

std::vector<Case> math_cases() {
  std::vector<Case> cases;
  const double betas[] = {0, 1, -0.5};
  for (Precision p : {Precision::kFloat32, Precision::kFloat64}) {
    // gemm: (m, n, k)
    // {150, 131, 120} and {64, 500, 81} are large enough for a device to split them (BLIS: by rows, then by
    // columns of C across blobrt's team; the BLIS plugin hands them to BLIS's own threads).
    const std::int64_t shapes[][3] = {{1, 1, 1},    {0, 3, 2},    {3, 0, 2},        {3, 2, 0},
                                      {7, 13, 5},   {37, 29, 67}, {150, 131, 120}, {64, 500, 81},
                                      {64, 500, 1}};  // an outer product (Caffe's bias), k = 1
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        int variant = 0;
        for (const auto& shape : shapes) {
          for (double beta : betas) {
            Case c{Operation::kGemm, p, shape[1], (variant++ % 2) ? 3 : 0};
            c.m = shape[0];
            c.k = shape[2];
            c.trans_a = ta;
            c.trans_b = tb;
            c.beta = beta;
            cases.push_back(c);
          }
        }
        Case zero{Operation::kGemm, p, 13, 3};  // alpha = 0: C = beta * C, A and B unread
        zero.m = 7;
        zero.k = 5;
        zero.trans_a = ta;
        zero.trans_b = tb;
        zero.alpha = 0;
        zero.beta = -0.5;
        cases.push_back(zero);
        Case large{Operation::kGemm, p, 200, 3};  // past the host kernel's cache blocks
        large.m = 129;
        large.k = 300;
        large.trans_a = ta;
        large.trans_b = tb;
        large.beta = 1;
        cases.push_back(large);
      }
    }
    // gemv: A is (m, n)
    const std::int64_t gemv_shapes[][2] = {{1, 1}, {0, 3}, {3, 0}, {7, 13}, {65, 33}, {300, 257}};
    for (bool ta : {false, true}) {
      int variant = 0;
      for (const auto& shape : gemv_shapes) {
        for (double beta : betas) {
          Case c{Operation::kGemv, p, shape[1], (variant++ % 2) ? 3 : 0};
          c.m = shape[0];
          c.trans_a = ta;
          c.beta = beta;
          cases.push_back(c);
        }
      }
      Case zero{Operation::kGemv, p, 13, 3};
      zero.m = 7;
      zero.trans_a = ta;
      zero.alpha = 0;
      zero.beta = -0.5;
      cases.push_back(zero);
    }
    // im2col and col2im: (channels, height, width, kernel h x w, pad, stride, dilation) as
    // conv layers use them: 1x1, 3x3 same-size, rectangular with stride and dilation per
    // dimension, a strided 5x5 with dilation 2, a kernel that outgrows the padded image
    // (an output extent of 0: col2im writes zeros), one that outgrows it by less than the
    // stride (Caffe's C division still gives one output, reaching past the image: zeros),
    // and 64 channels of 28 x 28.
    const ConvShape shapes_conv[] = {
        {1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},      {3, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1},
        {2, 8, 5, 3, 2, 1, 0, 2, 1, 1, 2},      {4, 13, 11, 5, 5, 2, 2, 2, 2, 2, 2},
        {1, 2, 2, 3, 3, 0, 0, 1, 1, 1, 1},      {1, 2, 2, 3, 3, 0, 0, 2, 2, 1, 1},
        {64, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1}};
    for (Operation op : {Operation::kIm2col, Operation::kCol2im}) {
      for (const ConvShape& shape : shapes_conv) {
        for (std::int64_t offset : {0, 3}) {
          Case c{op, p, 0, offset};
          c.conv = shape;
          cases.push_back(c);
        }
      }
    }
    // Pooling: (planes, height, width, kernel h x w, stride, pad): LeNet's 2 x 2 / 2 over 40
    // planes, CaffeNet's overlapping 3 x 3 / 2, padded with a window cut by the image's end,
    // rectangular with per-dimension stride and padding, global (kernel = image), 1 x 1, no
    // plane, 64 planes of 56 x 56 (ResNet's first pooling), and a stride past the kernel
    // without padding, whose last windows start past the image (Caffe keeps them).
    const PoolShape shapes_pool[] = {{40, 24, 24, 2, 2, 2, 2, 0, 0}, {3, 13, 13, 3, 3, 2, 2, 0, 0},
                                     {2, 7, 9, 3, 3, 2, 2, 1, 1},    {2, 8, 5, 3, 2, 1, 2, 1, 0},
                                     {5, 6, 7, 6, 7, 1, 1, 0, 0},    {1, 4, 4, 1, 1, 1, 1, 0, 0},
                                     {0, 4, 4, 2, 2, 2, 2, 0, 0},    {64, 56, 56, 3, 3, 2, 2, 1, 1},
                                     {2, 4, 4, 1, 1, 2, 2, 0, 0}};
    for (Operation op :
         {Operation::kMaxPool, Operation::kMaxPoolBackward, Operation::kAvePool, Operation::kAvePoolBackward}) {
      for (const PoolShape& shape : shapes_pool) {
        for (std::int64_t offset : {0, 3}) {
          Case c{op, p, 0, offset};
          c.pool = shape;
          cases.push_back(c);
        }
      }
    }
    // Softmax (outer x channels x inner): LeNet's loss (64 x 10), the axis in the middle,
    // one channel (all ones), ImageNet's 1000 classes, SSD's 21 classes over many positions,
    // nothing.
    const SoftmaxShape shapes_softmax[] = {{64, 10, 1}, {2, 5, 7}, {3, 1, 4}, {1, 1000, 1}, {2, 21, 500}, {0, 4, 4}};
    for (Operation op : {Operation::kSoftmax, Operation::kSoftmaxBackward}) {
      for (const SoftmaxShape& shape : shapes_softmax) {
        for (std::int64_t offset : {0, 3}) {
          Case c{op, p, 0, offset};
          c.softmax = shape;
          cases.push_back(c);
        }
      }
    }
    // The softmax loss and its gradient, the same shapes, without an ignore label and with
    // 255 (segmentation nets' void class).
    for (Operation op : {Operation::kSoftmaxLoss, Operation::kSoftmaxLossBackward}) {
      for (const SoftmaxShape& shape : shapes_softmax) {
        for (double ignore : {std::numeric_limits<double>::quiet_NaN(), 255.0, -2147483648.0}) {
          for (std::int64_t offset : {0, 3}) {
            Case c{op, p, 0, offset};
            c.softmax = shape;
            c.ignore_label = ignore;
            cases.push_back(c);
          }
        }
      }
    }
    // copy_rows (rows, columns, src stride, dst stride): a Concat's bottom into its place
    // (LeNet-sized: 64 images, 20 x 576 of 70 x 576), a Slice's top out of it, one row, rows
    // read overlapping (src stride below the columns), dst rows touching, nothing.
    const RowsShape shapes_rows[] = {{64, 11520, 11520, 40320}, {4, 12, 30, 12}, {1, 1000, 1000, 1000},
                                     {5, 7, 3, 9},            {6, 5, 5, 5},     {0, 4, 4, 4}, {3, 0, 2, 2}};
    for (const RowsShape& shape : shapes_rows) {
      for (std::int64_t offset : {0, 3}) {
        Case c{Operation::kCopyRows, p, 0, offset};
        c.copy = shape;
        cases.push_back(c);
      }
    }
    // LRN across channels (outer x channels x inner, window): CaffeNet's norm1 (96 channels of
    // 27 x 27, two images), a window past the channels at both ends, fewer channels than the
    // window, a window of 1, GoogLeNet's 3-wide none, nothing.
    const std::pair<SoftmaxShape, std::int64_t> shapes_lrn[] = {
        {{2, 96, 729}, 5}, {{2, 7, 12}, 5}, {{3, 2, 5}, 5}, {{2, 6, 4}, 1}, {{1, 16, 9}, 3}, {{0, 4, 4}, 5}};
    for (Operation op : {Operation::kLrnScale, Operation::kLrnBackward}) {
      for (const auto& [shape, size] : shapes_lrn) {
        for (std::int64_t offset : {0, 3}) {
          Case c{op, p, 0, offset};
          c.softmax = shape;
          c.lrn_size = size;
          cases.push_back(c);
        }
      }
    }
    // channel_affine (outer x channels x inner): ResNet's Scale after BatchNorm (64 channels of
    // 56 x 56, two images), one channel, one element per channel, nothing; every form of
    // factors, out of place and in place.
    const SoftmaxShape shapes_affine[] = {{2, 64, 3136}, {3, 1, 7}, {5, 9, 1}, {0, 4, 4}};
    for (const SoftmaxShape& shape : shapes_affine) {
      for (int form = 0; form < 4; ++form) {
        for (Alias alias : {Alias::kNone, Alias::kYIsA}) {
          Case c{Operation::kChannelAffine, p, 0, 3};
          c.softmax = shape;
          c.with_scale = (form & 1) != 0;
          c.with_bias = (form & 2) != 0;
          c.alias = alias;
          cases.push_back(c);
        }
      }
    }
    // gather_rows and scatter_add_rows (rows, columns, table rows): an LSTM's Embed (a batch of
    // 20 sequences of 16 words, 256-wide, a vocabulary of 1000: rows repeat, so the gradient
    // adds several into one), BatchReindex's permutation of 8 images of 3 x 5 x 5, one column,
    // more picks than rows, an empty table (every index outside), nothing.
    const GatherShape shapes_gather[] = {{320, 256, 1000}, {8, 75, 8}, {40, 1, 9}, {30, 3, 4}, {7, 4, 0}, {0, 5, 3}};
    for (Operation op : {Operation::kGatherRows, Operation::kScatterAddRows}) {
      for (const GatherShape& shape : shapes_gather) {
        for (std::int64_t offset : {0, 3}) {
          Case c{op, p, 0, offset};
          c.gather = shape;
          cases.push_back(c);
        }
      }
    }
    // top_k_hits (outer x channels x inner, k, ignore label): CaffeNet's accuracy (10 images of
    // 1000 classes, top 1 and top 5), a segmentation net's per pixel (21 classes of 6 x 6,
    // void class 255: 255.5 is ignored too), k past the channels, a class ignored, k of 0,
    // nothing.
    const std::tuple<SoftmaxShape, std::int64_t, double> shapes_hits[] = {
        {{10, 1000, 1}, 1, std::numeric_limits<double>::quiet_NaN()},
        {{10, 1000, 1}, 5, std::numeric_limits<double>::quiet_NaN()},
        {{2, 21, 36}, 1, 255.0},
        {{3, 4, 5}, 7, 255.0},
        {{3, 4, 5}, 2, 2.0},
        {{3, 4, 5}, 0, std::numeric_limits<double>::quiet_NaN()},
        {{0, 4, 4}, 1, std::numeric_limits<double>::quiet_NaN()}};
    for (const auto& [shape, k, ignore] : shapes_hits) {
      for (std::int64_t offset : {0, 3}) {
        Case c{Operation::kTopKHits, p, 0, offset};
        c.softmax = shape;
        c.top_k = k;
        c.ignore_label = ignore;
        cases.push_back(c);
      }
    }
    // bernoulli_mask: n as the element-wise codes' (blocks of four words split at either end,
    // the split across cores), from word 0 and from word 3; then a counter whose block crosses
    // 2^32 (the counter's second word), a key above 2^32 (the key's second word), and the
    // thresholds that keep nothing (2^32 - 1), everything but zero words (0) and CaffeNet's
    // dropout_ratio 0.5.
    for (std::int64_t n : {0, 1, 7, 1000, 65537, (1 << 20) + 3}) {
      for (std::int64_t counter : {0, 3}) {
        Case c{Operation::kBernoulliMask, p, n, counter == 0 ? 0 : 5};
        c.draw.counter = counter;
        cases.push_back(c);
      }
    }
    const RandomDraw draws[] = {{1703, (std::int64_t{1} << 34) - 6, 2147483647},
                                {(std::int64_t{1} << 40) + 5, 12, 2147483647},
                                {0, 0, 4294967295},
                                {0, 0, 0},
                                {42, 1000003, 3006477107}};  // about UINT_MAX * 0.7 (Caffe's uint_thres_ for 0.7)
    for (const RandomDraw& draw : draws) {
      Case c{Operation::kBernoulliMask, p, 4099, 2};
      c.draw = draw;
      cases.push_back(c);
    }
    // roi_max_pool and its backward: Fast R-CNN's 7 x 7 bins of a 1/16 map (VGG16's conv5,
    // so bins of under a cell: empty and overlapping ones), ZF's 6 x 6, a 2 x 3 and a 1 x 1
    // pooling at scale 1 (bins of many cells), and no region, no channel, no image (every
    // region then names none: NaN bins, nothing read from the empty map).
    const RoiShape shapes_roi[] = {{2, 3, 14, 19, 13, 7, 7, 0.0625}, {1, 4, 13, 13, 8, 6, 6, 0.0625},
                                   {2, 2, 11, 9, 13, 2, 3, 1},       {3, 5, 6, 5, 20, 1, 1, 1},
                                   {2, 3, 5, 5, 0, 7, 7, 0.0625},     {2, 0, 5, 5, 4, 2, 2, 1},
                                   {0, 2, 5, 5, 3, 2, 2, 1}};
    for (Operation op : {Operation::kRoiMaxPool, Operation::kRoiMaxPoolBackward}) {
      for (const RoiShape& shape : shapes_roi) {
        for (std::int64_t offset : {0, 3}) {
          Case c{op, p, 0, offset};
          c.roi = shape;
          cases.push_back(c);
        }
      }
    }
    // im2col_3d and col2im_3d: C3D's 3 x 3 x 3 same-size convolution, one strided and dilated
    // differently per axis, a 1-d convolution as three axes with leading extents of 1, output
    // extents past Caffe's formula (the caller's col_shape: every position beyond the image
    // reads zeros), an output extent of 0 (col2im_3d writes zeros), and 16 channels of
    // 8 x 14 x 14 (a video net's middle layer).
    const auto conv3d = [](std::int64_t channels, std::array<std::int64_t, 3> image, std::array<std::int64_t, 3> kernel,
                           std::array<std::int64_t, 3> pad, std::array<std::int64_t, 3> stride,
                           std::array<std::int64_t, 3> dilation, std::int64_t extra_out) {
      Conv3dShape g;
      g.channels = channels;
      for (int a = 0; a < 3; ++a) {
        g.image[a] = image[a];
        g.kernel[a] = kernel[a];
        g.pad[a] = pad[a];
        g.stride[a] = stride[a];
        g.dilation[a] = dilation[a];
        const std::int64_t out = (image[a] + 2 * pad[a] - (dilation[a] * (kernel[a] - 1) + 1)) / stride[a] + 1;
        g.out[a] = (out > 0 ? out : 0) + extra_out;
      }
      return g;
    };
    const Conv3dShape shapes_conv3d[] = {
        conv3d(2, {4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0),
        conv3d(2, {5, 7, 6}, {2, 3, 2}, {1, 0, 1}, {2, 1, 2}, {1, 2, 2}, 0),
        conv3d(3, {1, 1, 17}, {1, 1, 5}, {0, 0, 2}, {1, 1, 3}, {1, 1, 1}, 0),
        conv3d(1, {3, 4, 5}, {2, 2, 2}, {0, 1, 0}, {1, 2, 1}, {1, 1, 2}, 1),
        conv3d(2, {2, 2, 2}, {3, 3, 3}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 0),
        conv3d(16, {8, 14, 14}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0)};
    for (Operation op : {Operation::kIm2col3d, Operation::kCol2im3d}) {
      for (const Conv3dShape& shape : shapes_conv3d) {
        for (std::int64_t offset : {0, 3}) {
          Case c{op, p, 0, offset};
          c.conv3d = shape;
          cases.push_back(c);
        }
      }
    }
    // element-wise: every code of the list (blobrt/elementwise_operations.h)
    for (int code = 0; code < BLOBRT_EW_OP_COUNT; ++code) {
      const auto op = static_cast<ElementwiseOp>(code);
      std::vector<double> alphas{1.5};
      if (op == ElementwiseOp::kPowx) alphas = {1.5, 2, -0.75};
      if (op == ElementwiseOp::kAxpby) alphas = {1.5, 0};
      if (op == ElementwiseOp::kElu || op == ElementwiseOp::kEluBackward) alphas = {1.5, 0.25};
      if (op == ElementwiseOp::kThreshold) alphas = {1.5, 0};
      if (op == ElementwiseOp::kMaskSelect || op == ElementwiseOp::kArgmaxStep) alphas = {1};
      // Labels from -2 to 2 in quarters: each alpha names the ones truncated to it.
      if (op == ElementwiseOp::kZeroWhereLabel) alphas = {1, -1};
      // SmoothL1's sigma^2: Fast R-CNN's sigma 1 and the RPN's sigma 3 (bounds 1 and 1/9).
      if (op == ElementwiseOp::kSmoothL1 || op == ElementwiseOp::kSmoothL1Backward) alphas = {1, 9};
      // Clip's alpha and beta are its minimum and maximum.
      const bool clip = op == ElementwiseOp::kClip || op == ElementwiseOp::kClipBackward;
      if (clip) alphas = {-0.5, 1};
      const double beta = clip ? 1.25 : -0.25;
      for (double alpha : alphas) {
        for (std::int64_t n : {0, 1, 7, 1000, 65537, (1 << 20) + 3}) {
          for (std::int64_t offset : {0, 5}) {
            if (n == (1 << 20) + 3 && offset == 0) continue;
            Case c{Operation::kElementwise, p, n, offset};
            c.elementwise = op;
            c.alpha = alpha;
            c.beta = beta;
            cases.push_back(c);
          }
        }
        // In place, as Caffe calls them: caffe_sqr(n, x, x), caffe_mul(n, a, y, y).
        const bool reads_a = ew_code(op).a, reads_b = ew_code(op).b;
        for (Alias alias : {Alias::kYIsA, Alias::kYIsB}) {
          if ((alias == Alias::kYIsA && !reads_a) || (alias == Alias::kYIsB && !reads_b)) continue;
          for (std::int64_t n : {7, 65537}) {
            Case c{Operation::kElementwise, p, n, 5};
            c.elementwise = op;
            c.alpha = alpha;
            c.beta = beta;
            c.alias = alias;
            cases.push_back(c);
          }
        }
      }
    }
  }
  return cases;
}

Result run_math_case(Device& device, const Case& c) {
  if (c.precision == Precision::kFloat32) return MathChecker<float>(device, c).run();
  return MathChecker<double>(device, c).run();
}

}  // namespace blobrt::conformance
