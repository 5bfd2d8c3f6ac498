// The numerical checks every Device must pass, shared by the GoogleTest conformance
// program (conformance/, installed as blobrt-conformance) and `blobrt selftest`.
//
// Each check runs one operation on the device under test and compares with a plain
// double-precision loop on the host (not with another Device). Tolerances, with ε the
// machine epsilon of the element type:
//   copies, memset:   exact
//   axpy, scal:       |got − ref| ≤ 2ε·(|α·x| + |y|) per element
//   dot, asum:        |got − ref| ≤ ε·(8 + √n)·Σ|terms|
//   gemm, gemv:       the same per element of C or y, the sum over k (gemm) or the inner
//                     dimension (gemv), with |β·c| as one more term
//   element-wise:     set, abs, sgnbit exact (bitwise: abs(−0) is +0), sign exact by value;
//                     add_scalar, scale, add, sub, mul, sqr (one rounding) ε·|ref|;
//                     axpby 2ε·(|α·a| + |β·y|); div, sqrt, exp, log 4ε·|ref| (OpenCL allows
//                     2.5 to 3 ulp); powx 16ε·|ref| (OpenCL's pow: 16 ulp); relu and
//                     relu_backward ε·|ref|; tanh 8ε·|ref| (OpenCL: 5 ulp); sigmoid
//                     4ε + 2ε·|ref| (tanh's error is absolute there); sigmoid_backward
//                     3ε·|b a|·(1 + |a|), tanh_backward 3ε·|b|·(1 + a²); elu exact for
//                     a > 0, else 8ε·|α|(e^a + 1); elu_backward 2ε·|b|(|a| + |α|); bnll
//                     4ε·(1 + |ref|), bnll_backward 6ε·|ref|; threshold, clip,
//                     clip_backward, max_step, argmax_step, mask_select, positive_select,
//                     zero_where_label exact; sigmoid_cross_entropy 8ε·(1 + |ref|) +
//                     3ε·|a|(|b| + 1); smooth_l1 4ε·(|ref| + |a|), smooth_l1_backward
//                     2ε·|ref|
//   im2col:           exact (a copy, +0 in the padding); col2im as a sum of its terms;
//                     im2col_3d exact, col2im_3d exact against its terms added in column order
//   pooling:          max exact (the first maximum in row order); average and both
//                     backward operations as sums of their terms
//   softmax:          (8 + 2√channels + |x| + |max|)ε·|ref| (x − max's rounding, exp's
//                     ulps, the sum); backward
//                     (4 + √channels)ε·(|dy| + Σ|dy·y|)·|y|
//   copy_rows:        exact, the elements between dst's rows untouched too
//   channel_affine:   2ε·(|x·scale| + |bias|)
//   gather_rows:      exact (a copy; a row of NaN where the index names no row)
//   scatter_add_rows: exact (the rows added in index order, the reference's order too)
//   top_k_hits:       exact (1 or 0; 0 where ignored, NaN where the label is outside)
//   bernoulli_mask:   exact (each element is word counter + i of the Philox4x32-10 stream
//                     tested against the threshold; the stream is blobrt_kernels' generator,
//                     itself held to Random123's known answers), and the share kept near
//                     its probability
//   roi_max_pool:     exact (each bin's first maximum), and its backward exact too (a
//                     reference of ROIPoolBackward's own per-cell loop, summed in its order
//                     in the element type)
//   LRN:              the window sums' rounding in the kernels' running sum, (4 + 2 channels)ε
//                     times its largest partial sum; the gradient's pow 16ε·|its term|
//   softmax loss:     4ε·(1 + |ref|) (log's ulps); its backward 2ε·|ref| ((p − 1)·scale);
//                     each plus the smallest normal (a device that flushes denormals); NaN
//                     where the label is outside the channels, 0 where it is ignored
// Every element outside the operation's range (offsets, and guard elements after the end)
// must be untouched, bitwise.
#ifndef BLOBRT_CONFORMANCE_CHECKS_HPP
#define BLOBRT_CONFORMANCE_CHECKS_HPP

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "blobrt/device.hpp"

namespace blobrt::conformance {

enum class Operation {
  kMemset, kCopyRoundTrip, kCopyDevice, kAxpy, kDot, kAsum, kScal, kGemm, kGemv, kElementwise, kIm2col, kCol2im,
  kMaxPool, kMaxPoolBackward, kAvePool, kAvePoolBackward, kSoftmax, kSoftmaxBackward,
  kSoftmaxLoss, kSoftmaxLossBackward, kCopyRows, kLrnScale, kLrnBackward,
  kChannelAffine, kGatherRows, kScatterAddRows, kTopKHits, kBernoulliMask, kRoiMaxPool, kRoiMaxPoolBackward,
  kIm2col3d, kCol2im3d
};
const char* to_string(Operation op);
std::vector<Operation> all_operations();
// The operations of blobrt/math_operations.h's list (conformance_math.cpp checks them).
bool is_math(Operation op);

// A convolution's geometry (im2col, col2im), as Caffe's im2col_cpu takes it.
struct ConvShape {
  std::int64_t channels = 1, height = 1, width = 1, kernel_h = 1, kernel_w = 1, pad_h = 0, pad_w = 0,
               stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
};

// A convolution's geometry over three spatial axes (im2col_3d, col2im_3d; 0 depth, 1 height,
// 2 width), the output extents given as Caffe's layers give im2col_nd its col_shape.
struct Conv3dShape {
  std::int64_t channels = 1, image[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, pad[3] = {0, 0, 0},
               stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
};

// A pooling's geometry (the pooling operations); the pooled extents are Caffe's
// PoolingLayer's (pooled()).
struct PoolShape {
  std::int64_t planes = 1, height = 1, width = 1, kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0,
               pad_w = 0;
  std::int64_t pooled_h() const { return pooled(height, kernel_h, stride_h, pad_h); }
  std::int64_t pooled_w() const { return pooled(width, kernel_w, stride_w, pad_w); }
  // Caffe's: rounded up, less a last window that would start in the padding.
  static std::int64_t pooled(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t pad) {
    std::int64_t out = (size + 2 * pad - kernel + stride - 1) / stride + 1;
    if (pad > 0 && (out - 1) * stride >= size + pad) --out;
    return out;
  }
};

// A softmax's shape: outer x channels x inner, the softmax over channels.
struct SoftmaxShape {
  std::int64_t outer = 1, channels = 1, inner = 1;
};

// copy_rows's layout: rows of columns elements, src_stride and dst_stride apart.
struct RowsShape {
  std::int64_t rows = 1, columns = 1, src_stride = 1, dst_stride = 1;
};

// gather_rows's and scatter_add_rows's shape: rows picked from a table_rows x columns table.
struct GatherShape {
  std::int64_t rows = 1, columns = 1, table_rows = 1;
};

// roi_max_pool's geometry (its regions are the checker's fixed list, the first `rois`).
struct RoiShape {
  std::int64_t batch = 1, channels = 1, height = 1, width = 1, rois = 1, pooled_h = 1, pooled_w = 1;
  double spatial_scale = 1;
};

// bernoulli_mask's draw: the stream's key, its first word, the threshold.
struct RandomDraw {
  std::int64_t seed = 1703, counter = 0, threshold = 2147483647;  // Dropout's ratio 0.5: UINT_MAX * 0.5
};

// The core's precision (blobrt::Precision, device.hpp) is the one enum; its name in a case
// is "float" or "double".
const char* to_string(Precision p);

// Which operand an element-wise case writes over (Caffe's in-place calls).
enum class Alias { kNone, kYIsA, kYIsB };

struct Case {
  Operation op;
  Precision precision;
  std::int64_t n;
  std::int64_t offset;  // elements before the data in every buffer (math: a unit, below)
  // gemm: C is m x n, the inner dimension k; gemv: A is m x n. Caffe's row-major layout.
  std::int64_t m = 0;
  std::int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
  double alpha = 1.5;
  double beta = 0;
  ElementwiseOp elementwise = ElementwiseOp::kSet;
  Alias alias = Alias::kNone;
  ConvShape conv;  // im2col, col2im
  PoolShape pool;  // the pooling operations
  SoftmaxShape softmax;  // softmax, softmax_backward, softmax_loss, softmax_loss_backward
  double ignore_label = std::numeric_limits<double>::quiet_NaN();  // the softmax loss's; NaN: none
  RowsShape copy;  // copy_rows
  std::int64_t lrn_size = 5;  // lrn_scale, lrn_backward: the window (their shape is `softmax`)
  bool with_scale = true, with_bias = true;  // channel_affine's factors (its shape is `softmax`)
  GatherShape gather;  // gather_rows, scatter_add_rows
  std::int64_t top_k = 1;  // top_k_hits (its shape is `softmax`, its ignore label the loss's)
  RandomDraw draw;  // bernoulli_mask (n elements)
  RoiShape roi;  // roi_max_pool, roi_max_pool_backward
  Conv3dShape conv3d;  // im2col_3d, col2im_3d
  std::string name() const;
};
// How GoogleTest prints a case (the test name's parameter; else it dumps the struct's bytes,
// padding included, which valgrind reports as uninitialised).
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name(); }

// The whole GoogleTest name of case `c` on device `id`, the name --gtest_filter matches in
// GoogleTest mode and in --fleet mode alike: kTestPrefix, then the device and the case with
// every character but letters and digits made '_' ("blis_0_axpy_float_n1000_off0").
inline constexpr const char* kTestPrefix = "AllDevices/Conformance.MatchesHostReference/";
std::string param_name(const std::string& id, const Case& c);

struct Result {
  bool passed = false;
  bool skipped = false;  // e.g. double on a device without fp64
  std::string detail;    // what differed, or why skipped
};

// The standard cases: every level-1 operation × precision × n ∈ {0, 1, 7, 1000, 65537,
// 2^20+3} × offset ∈ {0, 5}, then math_cases().
std::vector<Case> standard_cases();
// Caffe's math beyond level 1 (conformance_math.cpp says which cases, and why).
std::vector<Case> math_cases();

// Runs one case; never throws (a blobrt::Error from the device is a failure with its message).
Result run_case(Device& device, const Case& c);

}  // namespace blobrt::conformance

#endif
