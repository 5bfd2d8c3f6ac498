// Caffe's im2col and col2im (src/caffe/util/im2col.cpp, the 2-d forms): the host kernels and
// their MathSemantics (blobrt_kernels/math_operation.hpp). A convolution's image is
// channels x height x width; its columns are (channels kernel_h kernel_w) rows of
// (out_h out_w) elements, row (c, i, j) holding the image element each output position's
// patch has at kernel offset (i, j), or 0 where that lies in the padding.
#ifndef BLOBRT_KERNELS_IM2COL_HPP
#define BLOBRT_KERNELS_IM2COL_HPP

#include <array>
#include <cstdint>
#include <ostream>

#include "blobrt_kernels/math_operation.hpp"

namespace blobrt_kernels {

// A convolution's geometry, whichever of the two operations carries it.
struct ConvGeometry {
  std::int64_t channels, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h,
      dilation_w;

  template <class Args>
  static ConvGeometry of(const Args& g) {
    return {g.channels, g.height,   g.width,    g.kernel_h,   g.kernel_w,  g.pad_h,
            g.pad_w,    g.stride_h, g.stride_w, g.dilation_h, g.dilation_w};
  }
  // Caffe's output extent, C's division included: 0 or less is no output (a kernel that
  // outgrows the padded image by less than the stride still gives 1, as in Caffe); only for
  // a geometry invalid() accepts.
  static std::int64_t extent(std::int64_t size, std::int64_t pad, std::int64_t kernel, std::int64_t stride,
                             std::int64_t dilation) {
    const std::int64_t out = (size + 2 * pad - (dilation * (kernel - 1) + 1)) / stride + 1;
    return out > 0 ? out : 0;
  }
  std::int64_t out_h() const { return extent(height, pad_h, kernel_h, stride_h, dilation_h); }
  std::int64_t out_w() const { return extent(width, pad_w, kernel_w, stride_w, dilation_w); }
  std::int64_t image_count() const { return channels * height * width; }
  std::int64_t column_count() const { return channels * kernel_h * kernel_w * out_h() * out_w(); }
  // nullptr when the geometry is one Caffe computes with; else why not. Sizes are the
  // caller's 64-bit values (never negative: the core checked): every product and sum
  // above must fit before any of them is computed.
  const char* invalid() const {
    if (kernel_h < 1 || kernel_w < 1) return "the kernel must be at least 1 x 1";
    if (stride_h < 1 || stride_w < 1) return "the stride must be at least 1";
    if (dilation_h < 1 || dilation_w < 1) return "the dilation must be at least 1";
    if (!fits()) return "the geometry's sizes overflow 64 bits";
    return nullptr;
  }

 private:
  static bool fits_extent(std::int64_t size, std::int64_t pad, std::int64_t kernel, std::int64_t dilation) {
    std::int64_t reach = 0, padded = 0;
    return !__builtin_mul_overflow(dilation, kernel - 1, &reach) && !__builtin_add_overflow(reach, 1, &reach) &&
           !__builtin_mul_overflow(pad, 2, &padded) && !__builtin_add_overflow(size, padded, &padded);
  }
  bool fits() const {
    if (!fits_extent(height, pad_h, kernel_h, dilation_h) || !fits_extent(width, pad_w, kernel_w, dilation_w)) {
      return false;
    }
    std::int64_t image = 0, columns = 0;
    return !__builtin_mul_overflow(channels, height, &image) && !__builtin_mul_overflow(image, width, &image) &&
           !__builtin_mul_overflow(channels, kernel_h, &columns) &&
           !__builtin_mul_overflow(columns, kernel_w, &columns) &&
           !__builtin_mul_overflow(columns, out_h(), &columns) && !__builtin_mul_overflow(columns, out_w(), &columns);
  }
};

// Calls f(column_index, image_index) for every column element, in column order, with
// image_index -1 where the patch lies in the padding.
template <class F>
void for_each_column_element(const ConvGeometry& g, F&& f) {
  const std::int64_t oh = g.out_h(), ow = g.out_w();
  std::int64_t column = 0;
  for (std::int64_t c = 0; c < g.channels; ++c) {
    const std::int64_t plane = c * g.height * g.width;
    for (std::int64_t i = 0; i < g.kernel_h; ++i) {
      for (std::int64_t j = 0; j < g.kernel_w; ++j) {
        for (std::int64_t y = 0; y < oh; ++y) {
          const std::int64_t row = y * g.stride_h - g.pad_h + i * g.dilation_h;
          const bool row_inside = row >= 0 && row < g.height;
          for (std::int64_t x = 0; x < ow; ++x, ++column) {
            const std::int64_t col = x * g.stride_w - g.pad_w + j * g.dilation_w;
            f(column, row_inside && col >= 0 && col < g.width ? plane + row * g.width + col : -1);
          }
        }
      }
    }
  }
}

// Both forms: Geometry is ConvGeometry here or Conv3dGeometry (im2col_3d.hpp), each with its
// for_each_column_element and image_count.
template <typename T, class Geometry>
void im2col(const Geometry& g, const T* image, T* columns) {
  for_each_column_element(g, [&](std::int64_t column, std::int64_t pixel) {
    columns[column] = pixel >= 0 ? image[pixel] : T(0);
  });
}

// Caffe's col2im: the image zeroed, then every column element added to the pixel it came from.
template <typename T, class Geometry>
void col2im(const Geometry& g, const T* columns, T* image) {
  for (std::int64_t p = 0; p < g.image_count(); ++p) image[p] = T(0);
  for_each_column_element(g, [&](std::int64_t column, std::int64_t pixel) {
    if (pixel >= 0) image[pixel] += columns[column];
  });
}

template <>
struct MathSemantics<MathOp::im2col> {
  using Args = MathArgs<MathOp::im2col>;
  static std::array<Operand, 2> operands(const Args& a) {
    const ConvGeometry g = ConvGeometry::of(a);
    const std::int64_t columns = g.invalid() ? 0 : g.column_count();
    return {{{"im", a.im, a.im_offset, columns ? g.image_count() : 0, true, false},
             {"col", a.col, a.col_offset, columns, false, true}}};
  }
  static const char* invalid(const Args& a) { return ConvGeometry::of(a).invalid(); }
  static bool only_scales(const Args&, double*) { return false; }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    im2col<T>(ConvGeometry::of(a), p[0], p[1]);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) { s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "im2col"; }
};

template <>
struct MathSemantics<MathOp::col2im> {
  using Args = MathArgs<MathOp::col2im>;
  static std::array<Operand, 2> operands(const Args& a) {
    const ConvGeometry g = ConvGeometry::of(a);
    const bool valid = !g.invalid();
    return {{{"col", a.col, a.col_offset, valid ? g.column_count() : 0, true, false},
             {"im", a.im, a.im_offset, valid ? g.image_count() : 0, false, true}}};
  }
  static const char* invalid(const Args& a) { return ConvGeometry::of(a).invalid(); }
  // No column element (an output extent of 0): the image is zeros.
  static bool only_scales(const Args& a, double* beta) {
    *beta = 0;
    return ConvGeometry::of(a).column_count() == 0;
  }
  template <typename T>
  static bool run(const Args& a, T* const* p) {
    col2im<T>(ConvGeometry::of(a), p[0], p[1]);
    return true;
  }
  static void routine(std::ostream& s, const Args& a) { s << (a.precision == BLOBRT_FLOAT64 ? "d" : "s") << "col2im"; }
};

}  // namespace blobrt_kernels

#endif
