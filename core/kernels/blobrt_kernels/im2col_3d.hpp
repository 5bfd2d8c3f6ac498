// Caffe's n-d im2col and col2im (src/caffe/util/im2col.cpp: im2col_nd_cpu, col2im_nd_cpu) over
// up to three spatial axes: the host kernels and their MathSemantics
// (blobrt_kernels/math_operation.hpp). The image is channels x depth x height x width; the
// columns (channels kernel_d kernel_h kernel_w) rows of (out_depth out_height out_width)
// elements, the output extents the caller's (Caffe hands im2col_nd its col_shape rather than
// computing it), so every read is checked against the image: any extent is safe.
#ifndef BLOBRT_KERNELS_IM2COL_3D_HPP
#define BLOBRT_KERNELS_IM2COL_3D_HPP

#include <array>
#include <cstdint>
#include <ostream>

#include "blobrt_kernels/im2col.hpp"  // im2col, col2im: the copy and the sums, over either geometry
#include "blobrt_kernels/math_operation.hpp"

namespace blobrt_kernels {

// The geometry, axis by axis (0 depth, 1 height, 2 width), whichever operation carries it.
struct Conv3dGeometry {
  std::int64_t channels;
  std::array<std::int64_t, 3> image, out, kernel, pad, stride, dilation;

  template <class Args>
  static Conv3dGeometry of(const Args& a) {
    return {a.channels,
            {{a.depth, a.height, a.width}},
            {{a.out_depth, a.out_height, a.out_width}},
            {{a.kernel_d, a.kernel_h, a.kernel_w}},
            {{a.pad_d, a.pad_h, a.pad_w}},
            {{a.stride_d, a.stride_h, a.stride_w}},
            {{a.dilation_d, a.dilation_h, a.dilation_w}}};
  }
  std::int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
  std::int64_t positions() const { return out[0] * out[1] * out[2]; }
  std::int64_t image_count() const { return channels * image[0] * image[1] * image[2]; }
  std::int64_t column_count() const { return channels * kernel_size() * positions(); }

  // nullptr when the geometry is one the kernels compute with; else why not. The sizes are
  // the caller's (never negative: the core checked): every product, and every coordinate a
  // kernel forms (the last position times the stride plus the last offset times the
  // dilation, plus the padding; an image coordinate plus the padding, col2im's gather), must
  // fit in 64 bits before any is computed.
  const char* invalid() const {
    for (int i = 0; i < 3; ++i) {
      if (kernel[i] < 1) return "the kernel must be at least 1 x 1 x 1";
      if (stride[i] < 1) return "the stride must be at least 1";
      if (dilation[i] < 1) return "the dilation must be at least 1";
    }
    if (!fits()) return "the geometry's sizes overflow 64 bits";
    return nullptr;
  }

 private:
  bool fits() const {
    std::int64_t im = channels, col = channels, reach = 0, last = 0;
    for (int i = 0; i < 3; ++i) {
      if (__builtin_mul_overflow(im, image[i], &im) || __builtin_mul_overflow(col, kernel[i], &col)) return false;
      if (__builtin_mul_overflow(kernel[i] - 1, dilation[i], &reach) ||
          __builtin_mul_overflow(out[i] > 0 ? out[i] - 1 : 0, stride[i], &last) ||
          __builtin_add_overflow(last, reach, &last) || __builtin_add_overflow(last, pad[i], &last) ||
          __builtin_add_overflow(image[i], pad[i], &last)) {
        return false;
      }
    }
    for (int i = 0; i < 3; ++i) {
      if (__builtin_mul_overflow(col, out[i], &col)) return false;
    }
    return true;
  }
};

// Calls f(column_index, image_index) for every column element in column order (row by row,
// each row's positions in order), image_index -1 where the element lies outside the image.
template <class F>
void for_each_column_element(const Conv3dGeometry& g, F&& f) {
  const std::int64_t kernel_size = g.kernel_size(), rows = g.channels * kernel_size;
  std::int64_t column = 0;
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t c = row / kernel_size, k = row % kernel_size;
    const std::int64_t offset[3] = {k / (g.kernel[1] * g.kernel[2]), k / g.kernel[2] % g.kernel[1], k % g.kernel[2]};
    for (std::int64_t z = 0; z < g.out[0]; ++z) {
      const std::int64_t d = z * g.stride[0] - g.pad[0] + offset[0] * g.dilation[0];
      for (std::int64_t y = 0; y < g.out[1]; ++y) {
        const std::int64_t h = y * g.stride[1] - g.pad[1] + offset[1] * g.dilation[1];
        for (std::int64_t x = 0; x < g.out[2]; ++x, ++column) {
          const std::int64_t w = x * g.stride[2] - g.pad[2] + offset[2] * g.dilation[2];
          const bool inside = d >= 0 && d < g.image[0] && h >= 0 && h < g.image[1] && w >= 0 && w < g.image[2];
          f(column, inside ? ((c * g.image[0] + d) * g.image[1] + h) * g.image[2] + w : -1);
        }
      }
    }
  }
}

template <>
struct MathSemantics<MathOp::im2col_3d> {
  using Args = MathArgs<MathOp::im2col_3d>;
  static std::array<Operand, 2> operands(const Args& a) {
    const Conv3dGeometry g = Conv3dGeometry::of(a);
    const std::int64_t columns = g.invalid() ? 0 : g.column_count();
    return {{{"im", a.im, a.im_offset, columns ? g.image_count() : 0, true, false},
             {"col", a.col, a.col_offset, columns, false, true}}};
  }
  static const char* invalid(const Args& a) { return Conv3dGeometry::of(a).invalid(); }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    im2col<T>(Conv3dGeometry::of(a), p[0], p[1]);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "im2col_3d";
  }
};

template <>
struct MathSemantics<MathOp::col2im_3d> {
  using Args = MathArgs<MathOp::col2im_3d>;
  static std::array<Operand, 2> operands(const Args& a) {
    const Conv3dGeometry g = Conv3dGeometry::of(a);
    const bool valid = !g.invalid();
    return {{{"col", a.col, a.col_offset, valid ? g.column_count() : 0, true, false},
             {"im", a.im, a.im_offset, valid ? g.image_count() : 0, false, true}}};
  }
  static const char* invalid(const Args& a) { return Conv3dGeometry::of(a).invalid(); }
  // No column element (an output extent or a channel count of 0): the image is zeros.
  static bool only_scales(const Args& a, double* beta) {
    *beta = 0;
    return Conv3dGeometry::of(a).column_count() == 0;
  }
  // The image zeroed, then each column element added to the element it came from.
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    col2im<T>(Conv3dGeometry::of(a), p[0], p[1]);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) {
    s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "col2im_3d";
  }
};

}  // namespace blobrt_kernels

#endif  // BLOBRT_KERNELS_IM2COL_3D_HPP
