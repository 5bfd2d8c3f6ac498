/* Caffe's math beyond level 1, as the plugin ABI carries it: the ONE list every layer's code
 * for these operations is expanded from.
 *
 * From each entry come: the plugin table's field (plugin_abi.h), the kit's table builder and
 * its host-memory implementation (plugin_kit.hpp, plugin_kit_host.hpp), the C++ Device
 * virtual (device.hpp), the argument struct and the argument checks the core makes before
 * any device runs one (blobrt_kernels/math_operation.hpp, core/src/device/math_checks.hpp),
 * PluginDevice's forwarding, and the host path for a device that lacks the operation
 * (core/src/device). What is written by hand per operation is its semantics and kernels:
 * blobrt_kernels/<name>.hpp (operand extents, the host kernel; named in math_kernels.hpp) and
 * each backend's kernels.
 * docs/writing-a-plugin.md, "Adding a device operation", is the recipe.
 *
 * An entry: M(X, since, name, PARAMETERS), where since is the ABI version that added the
 * table field (1_2 for 1.2) and PARAMETERS(P) calls P(kind, name) once per parameter, in the
 * order of the C entry point (between its leading `void* context` and trailing
 * `blobrt_error* err`). The kinds, with their C and C++ types:
 *   PRECISION  int32_t   blobrt::Precision      BLOBRT_FLOAT32 / BLOBRT_FLOAT64
 *   TRANSPOSE  int32_t   blobrt::Transpose      BLOBRT_NO_TRANS / BLOBRT_TRANS
 *   EW_OP      int32_t   blobrt::ElementwiseOp  a blobrt_elementwise_op
 *   SIZE       int64_t   std::int64_t           an element count; never negative
 *   OFFSET     int64_t   std::int64_t           an element offset into the buffer before it
 *   SCALAR     double    double                 exact for float
 *   INPUT      const void*  ConstDeviceBuffer   a buffer the operation reads
 *   OUTPUT     void*        DeviceBuffer        the buffer it writes (may alias an input)
 * Every operation has one PRECISION parameter, named `precision` (the generic code reads
 * args.precision), one OUTPUT, and an OFFSET after each buffer. A new kind needs its C type
 * here, its C++ type in device.hpp (BLOBRT_DEVICE_TYPE_*), a ParameterKind in
 * blobrt_kernels/math_operation.hpp and, if it can be invalid, its check in
 * core/src/device/math_checks.hpp.
 *
 * The list is grouped by the minor that added each operation (BLOBRT_MATH_OPERATIONS_1_2):
 * the plugin table holds its fields in version order, after the other entries of earlier
 * minors (plugin_abi.h's BLOBRT_PLUGIN_V1_ENTRIES). A new operation goes into the group of
 * the next minor, with that minor as its `since`: a new group (BLOBRT_MATH_OPERATIONS_1_<m>)
 * appended to BLOBRT_MATH_OPERATIONS here, to the end of plugin_abi.h's list and to the end
 * of class Device (device.hpp: libblobrt.so.1's vtable only grows at its end); the
 * compile-time checks in plugin_abi.h refuse an entry placed inside an older version's size,
 * and tests/core/device/device_vtable_test.cpp a virtual placed between older ones. */
#ifndef BLOBRT_MATH_OPERATIONS_H
#define BLOBRT_MATH_OPERATIONS_H

#include <stdint.h>

#define BLOBRT_MATH_OPERATIONS(M, X) \
  BLOBRT_MATH_OPERATIONS_1_2(M, X) BLOBRT_MATH_OPERATIONS_1_4(M, X) BLOBRT_MATH_OPERATIONS_1_5(M, X) \
  BLOBRT_MATH_OPERATIONS_1_6(M, X) BLOBRT_MATH_OPERATIONS_1_8(M, X) BLOBRT_MATH_OPERATIONS_1_10(M, X) \
  BLOBRT_MATH_OPERATIONS_1_11(M, X) BLOBRT_MATH_OPERATIONS_1_12(M, X)
/* The operations ABI 1.2 added. */
#define BLOBRT_MATH_OPERATIONS_1_2(M, X)                    \
  M(X, 1_2, gemm, BLOBRT_MATH_GEMM_PARAMETERS)              \
  M(X, 1_2, gemv, BLOBRT_MATH_GEMV_PARAMETERS)              \
  M(X, 1_2, elementwise, BLOBRT_MATH_ELEMENTWISE_PARAMETERS)

/* The operations ABI 1.4 added: what Caffe's layers share (im2col.hpp). */
#define BLOBRT_MATH_OPERATIONS_1_4(M, X)                    \
  M(X, 1_4, im2col, BLOBRT_MATH_IM2COL_PARAMETERS)          \
  M(X, 1_4, col2im, BLOBRT_MATH_COL2IM_PARAMETERS)

/* The operations ABI 1.5 added: Caffe's max and average pooling (pooling_layer.cu's kernels) and
 * softmax along an axis (softmax_layer.cu's). */
#define BLOBRT_MATH_OPERATIONS_1_5(M, X)                              \
  M(X, 1_5, max_pool, BLOBRT_MATH_POOL_PARAMETERS)                    \
  M(X, 1_5, max_pool_backward, BLOBRT_MATH_MAX_POOL_BACKWARD_PARAMETERS) \
  M(X, 1_5, ave_pool, BLOBRT_MATH_POOL_PARAMETERS)                    \
  M(X, 1_5, ave_pool_backward, BLOBRT_MATH_AVE_POOL_BACKWARD_PARAMETERS) \
  M(X, 1_5, softmax, BLOBRT_MATH_SOFTMAX_PARAMETERS)                  \
  M(X, 1_5, softmax_backward, BLOBRT_MATH_SOFTMAX_BACKWARD_PARAMETERS)

/* The operations ABI 1.6 added: the multinomial logistic loss of softmax probabilities
 * (softmax_loss_layer.cu's kernels), a copy of rows between strided layouts (concat_layer.cu's
 * and slice_layer.cu's), local response normalization across channels (lrn_layer.cu's) and a
 * per-channel scale and bias (scale_layer.cu's and bias_layer.cu's). */
#define BLOBRT_MATH_OPERATIONS_1_6(M, X)                                       \
  M(X, 1_6, softmax_loss, BLOBRT_MATH_SOFTMAX_LOSS_PARAMETERS)                 \
  M(X, 1_6, softmax_loss_backward, BLOBRT_MATH_SOFTMAX_LOSS_BACKWARD_PARAMETERS) \
  M(X, 1_6, copy_rows, BLOBRT_MATH_COPY_ROWS_PARAMETERS)                       \
  M(X, 1_6, lrn_scale, BLOBRT_MATH_LRN_SCALE_PARAMETERS)                       \
  M(X, 1_6, lrn_backward, BLOBRT_MATH_LRN_BACKWARD_PARAMETERS)                 \
  M(X, 1_6, channel_affine, BLOBRT_MATH_CHANNEL_AFFINE_PARAMETERS)

/* The operations ABI 1.8 added (1.7 added element-wise codes only): rows of a table picked by
 * an index array and their gradient added back (embed_layer.cu's and batch_reindex_layer.cu's
 * kernels), and whether each label is among its top k scores (accuracy_layer.cu's). */
#define BLOBRT_MATH_OPERATIONS_1_8(M, X)                                       \
  M(X, 1_8, gather_rows, BLOBRT_MATH_GATHER_ROWS_PARAMETERS)                   \
  M(X, 1_8, scatter_add_rows, BLOBRT_MATH_SCATTER_ADD_ROWS_PARAMETERS)           \
  M(X, 1_8, top_k_hits, BLOBRT_MATH_TOP_K_HITS_PARAMETERS)

/* dst[r * columns + c] = table[index[r] * columns + c] for r < rows, c < columns: the rows of a
 * table_rows x columns table that an index array of `rows` numbers names (Caffe's Embed
 * forward, BatchReindex's). An index is read as Caffe reads it, converted to int toward zero;
 * one that is not a row of the table (NaN included) gives a row of NaN, where Caffe's GPU
 * kernel reads outside the table. dst may not overlap index or table. */
#define BLOBRT_MATH_GATHER_ROWS_PARAMETERS(P)                                                     \
  P(PRECISION, precision) P(SIZE, rows) P(SIZE, columns) P(SIZE, table_rows) P(INPUT, index)     \
  P(OFFSET, index_offset) P(INPUT, table) P(OFFSET, table_offset) P(OUTPUT, dst) P(OFFSET, dst_offset)
/* Its gradient: table[index[r] * columns + c] += src[r * columns + c], the rows added in index
 * order r = 0, 1, ... (Caffe's CPU order: the sums are the same on every device, where Caffe's
 * GPU kernel adds atomically in any order); a row whose index is not a row of the table is
 * skipped (its forward gave NaN). table may not overlap index or src. */
#define BLOBRT_MATH_SCATTER_ADD_ROWS_PARAMETERS(P)                                                \
  P(PRECISION, precision) P(SIZE, rows) P(SIZE, columns) P(SIZE, table_rows) P(INPUT, index)     \
  P(OFFSET, index_offset) P(INPUT, src) P(OFFSET, src_offset) P(OUTPUT, table) P(OFFSET, table_offset)

/* Caffe's top-k accuracy of `scores` (outer x channels x inner, as softmax's) against `label`
 * (outer x inner, read as softmax_loss reads it): at each position, hits = 1 when fewer than
 * top_k channels score at least the label's (the label's own not counted; a tie counts
 * against it), else 0; 0 where the label is ignore_label (NaN: none), NaN where it is outside
 * [0, channels) (Caffe's kernel reads outside the scores there). */
#define BLOBRT_MATH_TOP_K_HITS_PARAMETERS(P)                                                      \
  P(PRECISION, precision) P(SIZE, outer) P(SIZE, channels) P(SIZE, inner) P(INPUT, scores)       \
  P(OFFSET, scores_offset) P(INPUT, label) P(OFFSET, label_offset) P(SCALAR, ignore_label)       \
  P(SIZE, top_k) P(OUTPUT, hits) P(OFFSET, hits_offset)

/* The operation ABI 1.10 added: random draws made on the device (Caffe's GPU Dropout draws
 * its mask with cuRAND; without a generator on the device the mask crossed from the host at
 * every training step). */
#define BLOBRT_MATH_OPERATIONS_1_10(M, X) M(X, 1_10, bernoulli_mask, BLOBRT_MATH_BERNOULLI_MASK_PARAMETERS)

/* mask[i] = 1 where word counter + i of the random stream keyed by seed is above threshold,
 * else 0, for i < n (Caffe's Dropout: its mask's test `mask > uint_thres_`, keeping each
 * element with probability (2^32 - 1 - threshold) / 2^32). The stream is Philox4x32-10
 * (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011; Random123's known
 * answers): word w is lane w % 4 of the block philox4x32_10({w / 4 low 32 bits, high 32
 * bits, 0, 0}, {seed low 32 bits, high 32 bits}), so every device draws the same words from
 * the same seed and counter, and a caller that advances its counter by each call's n never
 * draws a word twice. threshold < 2^32; counter + n <= 2^63 - 1. */
#define BLOBRT_MATH_BERNOULLI_MASK_PARAMETERS(P)                                                  \
  P(PRECISION, precision) P(SIZE, n) P(SIZE, seed) P(SIZE, counter) P(SIZE, threshold)           \
  P(OUTPUT, mask) P(OFFSET, mask_offset)

/* The operations ABI 1.11 added (with element-wise codes 35 and 36, SmoothL1): Fast R-CNN's
 * region of interest max pooling (py-faster-rcnn's roi_pooling_layer.cu, whose backward has no
 * CPU code), the pooling of detection nets' region heads. */
#define BLOBRT_MATH_OPERATIONS_1_11(M, X)                                              \
  M(X, 1_11, roi_max_pool, BLOBRT_MATH_ROI_MAX_POOL_PARAMETERS)                         \
  M(X, 1_11, roi_max_pool_backward, BLOBRT_MATH_ROI_MAX_POOL_BACKWARD_PARAMETERS)

/* A region pooling's geometry: `batch` images of channels x height x width (bottom), `rois`
 * regions (boxes: rois x 5 numbers, an image index then x1, y1, x2, y2 in the input's
 * coordinates), each region's channels pooled to pooled_h x pooled_w (top: rois x channels x
 * pooled_h x pooled_w). The corners, times spatial_scale and rounded, are the region's corner
 * cells on the map; it is cut into bins as ROIPoolForward cuts it
 * (blobrt_kernels/roi_pooling.hpp says how, in the element type). */
#define BLOBRT_MATH_ROI_POOL_GEOMETRY_PARAMETERS(P)                                                \
  P(SIZE, batch) P(SIZE, channels) P(SIZE, height) P(SIZE, width) P(SIZE, rois) P(SIZE, pooled_h) \
  P(SIZE, pooled_w) P(SCALAR, spatial_scale)
/* Forward: each bin's maximum (the first in row order; 0 for an empty bin; -FLT_MAX where no
 * cell exceeds it). A region whose image index, toward zero, is not in [0, batch) (the .cu reads
 * outside the map there), or whose scaled corners are not finite within +-2^24 cells, gives NaN
 * bins. */
#define BLOBRT_MATH_ROI_MAX_POOL_PARAMETERS(P)                                                   \
  P(PRECISION, precision) BLOBRT_MATH_ROI_POOL_GEOMETRY_PARAMETERS(P) P(INPUT, bottom)           \
  P(OFFSET, bottom_offset) P(INPUT, boxes) P(OFFSET, boxes_offset) P(OUTPUT, top) P(OFFSET, top_offset)
/* Its gradient: bottom_diff (written over) = at each bin's maximum, found again in bottom as
 * roi_max_pool found it, the bins' top_diff added in region order, then bin row order, where
 * ROIPoolBackward adds it (the cell inside the region's rounded corners, the bin among those it
 * derives for the cell); 0 elsewhere; a region roi_max_pool gave NaN passes nothing back.
 * bottom_diff may not overlap the inputs. */
#define BLOBRT_MATH_ROI_MAX_POOL_BACKWARD_PARAMETERS(P)                                          \
  P(PRECISION, precision) BLOBRT_MATH_ROI_POOL_GEOMETRY_PARAMETERS(P) P(INPUT, bottom)           \
  P(OFFSET, bottom_offset) P(INPUT, boxes) P(OFFSET, boxes_offset) P(INPUT, top_diff)            \
  P(OFFSET, top_diff_offset) P(OUTPUT, bottom_diff) P(OFFSET, bottom_diff_offset)

/* The operations ABI 1.12 added: Caffe's n-d im2col and col2im (im2col_nd_cpu, col2im_nd_cpu:
 * the column layout of Convolution and Deconvolution over other than two spatial axes, 3-D
 * convolution's) for up to three spatial axes. */
#define BLOBRT_MATH_OPERATIONS_1_12(M, X)                        \
  M(X, 1_12, im2col_3d, BLOBRT_MATH_IM2COL_3D_PARAMETERS)         \
  M(X, 1_12, col2im_3d, BLOBRT_MATH_COL2IM_3D_PARAMETERS)

/* A convolution's geometry over three spatial axes (depth, height, width), as Caffe's
 * im2col_nd_cpu takes it: the image channels x depth x height x width; the output positions
 * out_depth x out_height x out_width (the caller's: Caffe's col_shape); the kernel, padding,
 * stride and dilation per axis. Fewer axes are three with leading extents of 1 (kernel 1,
 * padding 0, stride and dilation 1), which give the same layout. */
#define BLOBRT_MATH_CONV_3D_GEOMETRY_PARAMETERS(P)                                                 \
  P(SIZE, channels) P(SIZE, depth) P(SIZE, height) P(SIZE, width) P(SIZE, out_depth)             \
  P(SIZE, out_height) P(SIZE, out_width) P(SIZE, kernel_d) P(SIZE, kernel_h) P(SIZE, kernel_w)  \
  P(SIZE, pad_d) P(SIZE, pad_h) P(SIZE, pad_w) P(SIZE, stride_d) P(SIZE, stride_h)              \
  P(SIZE, stride_w) P(SIZE, dilation_d) P(SIZE, dilation_h) P(SIZE, dilation_w)
/* im2col_3d: the columns, (channels kernel_d kernel_h kernel_w) rows of (out_depth out_height
 * out_width) elements; row (c, i, j, k), column (z, y, x) holds image element (c, z stride_d -
 * pad_d + i dilation_d, ...), or 0 where that is outside the image. */
#define BLOBRT_MATH_IM2COL_3D_PARAMETERS(P)                                        \
  P(PRECISION, precision) BLOBRT_MATH_CONV_3D_GEOMETRY_PARAMETERS(P) P(INPUT, im) \
  P(OFFSET, im_offset) P(OUTPUT, col) P(OFFSET, col_offset)
/* col2im_3d: the image (written over) as the sum of the column elements copied from each of
 * its elements, added in column order (Caffe's CPU order). */
#define BLOBRT_MATH_COL2IM_3D_PARAMETERS(P)                                        \
  P(PRECISION, precision) BLOBRT_MATH_CONV_3D_GEOMETRY_PARAMETERS(P) P(INPUT, col) \
  P(OFFSET, col_offset) P(OUTPUT, im) P(OFFSET, im_offset)

/* C = alpha * op(A) * op(B) + beta * C (plugin_abi.h says the layout). */
#define BLOBRT_MATH_GEMM_PARAMETERS(P)                                                              \
  P(PRECISION, precision) P(TRANSPOSE, trans_a) P(TRANSPOSE, trans_b) P(SIZE, m) P(SIZE, n)        \
  P(SIZE, k) P(SCALAR, alpha) P(INPUT, a) P(OFFSET, a_offset) P(INPUT, b) P(OFFSET, b_offset)      \
  P(SCALAR, beta) P(OUTPUT, c) P(OFFSET, c_offset)
/* y = alpha * op(A) * x + beta * y. */
#define BLOBRT_MATH_GEMV_PARAMETERS(P)                                                              \
  P(PRECISION, precision) P(TRANSPOSE, trans_a) P(SIZE, m) P(SIZE, n) P(SCALAR, alpha) P(INPUT, a) \
  P(OFFSET, a_offset) P(INPUT, x) P(OFFSET, x_offset) P(SCALAR, beta) P(OUTPUT, y) P(OFFSET, y_offset)
/* y[i] = f(a[i], b[i]) for the operation `op`. */
#define BLOBRT_MATH_ELEMENTWISE_PARAMETERS(P)                                                       \
  P(PRECISION, precision) P(EW_OP, op) P(SIZE, n) P(SCALAR, alpha) P(SCALAR, beta) P(INPUT, a)     \
  P(OFFSET, a_offset) P(INPUT, b) P(OFFSET, b_offset) P(OUTPUT, y) P(OFFSET, y_offset)

/* A convolution's geometry, as Caffe's im2col_cpu takes it (channels, height, width of
 * the image; kernel, padding, stride and dilation in each dimension). */
#define BLOBRT_MATH_CONV_GEOMETRY_PARAMETERS(P)                                                      \
  P(SIZE, channels) P(SIZE, height) P(SIZE, width) P(SIZE, kernel_h) P(SIZE, kernel_w) P(SIZE, pad_h) \
  P(SIZE, pad_w) P(SIZE, stride_h) P(SIZE, stride_w) P(SIZE, dilation_h) P(SIZE, dilation_w)
/* Caffe's im2col: the image's patches as the columns of a (channels kernel_h kernel_w) x
 * (out_h out_w) matrix, zeros where a patch reaches into the padding. */
#define BLOBRT_MATH_IM2COL_PARAMETERS(P)                                          \
  P(PRECISION, precision) BLOBRT_MATH_CONV_GEOMETRY_PARAMETERS(P) P(INPUT, im)     \
  P(OFFSET, im_offset) P(OUTPUT, col) P(OFFSET, col_offset)
/* Caffe's col2im: the image as the sum of the columns' values at each pixel (written over,
 * not added to). */
#define BLOBRT_MATH_COL2IM_PARAMETERS(P)                                          \
  P(PRECISION, precision) BLOBRT_MATH_CONV_GEOMETRY_PARAMETERS(P) P(INPUT, col)    \
  P(OFFSET, col_offset) P(OUTPUT, im) P(OFFSET, im_offset)

/* A pooling's geometry, as Caffe's PoolingLayer holds it: `planes` images (num x channels) of
 * height x width, pooled to pooled_h x pooled_w (the caller's: Caffe rounds up and drops a
 * last window that starts in the padding), windows of kernel_h x kernel_w every stride_h,
 * stride_w from -pad_h, -pad_w. */
#define BLOBRT_MATH_POOL_GEOMETRY_PARAMETERS(P)                                                       \
  P(SIZE, planes) P(SIZE, height) P(SIZE, width) P(SIZE, pooled_h) P(SIZE, pooled_w) P(SIZE, kernel_h) \
  P(SIZE, kernel_w) P(SIZE, stride_h) P(SIZE, stride_w) P(SIZE, pad_h) P(SIZE, pad_w)
/* Pooling forward: top = each window's maximum (the first in row order; -FLT_MAX for a window
 * with no number above it) or its average (the sum over the window inside the image,
 * divided by the window's size counted into the padding). */
#define BLOBRT_MATH_POOL_PARAMETERS(P)                                            \
  P(PRECISION, precision) BLOBRT_MATH_POOL_GEOMETRY_PARAMETERS(P) P(INPUT, bottom) \
  P(OFFSET, bottom_offset) P(OUTPUT, top) P(OFFSET, top_offset)
/* Max pooling backward: bottom_diff (written over) = at each window's maximum, found again
 * in bottom as max_pool found it, the sum of the windows' top_diff; 0 elsewhere. */
#define BLOBRT_MATH_MAX_POOL_BACKWARD_PARAMETERS(P)                                  \
  P(PRECISION, precision) BLOBRT_MATH_POOL_GEOMETRY_PARAMETERS(P) P(INPUT, bottom)    \
  P(OFFSET, bottom_offset) P(INPUT, top_diff) P(OFFSET, top_diff_offset) P(OUTPUT, bottom_diff) \
  P(OFFSET, bottom_diff_offset)
/* Average pooling backward: bottom_diff (written over) = the sum, over the windows holding
 * the element, of top_diff divided by the window's size. */
#define BLOBRT_MATH_AVE_POOL_BACKWARD_PARAMETERS(P)                                    \
  P(PRECISION, precision) BLOBRT_MATH_POOL_GEOMETRY_PARAMETERS(P) P(INPUT, top_diff)    \
  P(OFFSET, top_diff_offset) P(OUTPUT, bottom_diff) P(OFFSET, bottom_diff_offset)

/* Softmax along the middle axis of an outer x channels x inner array (Caffe's SoftmaxLayer:
 * channels is the softmax axis's extent): at each (outer, inner) position, top = exp(bottom -
 * the channels' maximum), divided by its sum over the channels. */
#define BLOBRT_MATH_SOFTMAX_PARAMETERS(P)                                                        \
  P(PRECISION, precision) P(SIZE, outer) P(SIZE, channels) P(SIZE, inner) P(INPUT, bottom)       \
  P(OFFSET, bottom_offset) P(OUTPUT, top) P(OFFSET, top_offset)
/* Its backward: bottom_diff = (top_diff - the channels' sum of top_diff * top) * top. */
#define BLOBRT_MATH_SOFTMAX_BACKWARD_PARAMETERS(P)                                               \
  P(PRECISION, precision) P(SIZE, outer) P(SIZE, channels) P(SIZE, inner) P(INPUT, top)          \
  P(OFFSET, top_offset) P(INPUT, top_diff) P(OFFSET, top_diff_offset) P(OUTPUT, bottom_diff)     \
  P(OFFSET, bottom_diff_offset)

/* The loss of softmax probabilities `prob` (outer x channels x inner, as softmax's) against
 * `label` (outer x inner, one class index per position, read as Caffe reads it: converted to
 * int, toward zero): at each position, loss = -log(fmax(prob[label], FLT_MIN)) (a NaN
 * probability gives -log(FLT_MIN), as Caffe's GPU kernel); 0 where the label is ignore_label
 * (NaN: the layer has none). A label outside [0, channels) that is not ignored, or that int
 * cannot hold (NaN included), gives NaN (Caffe's GPU kernel reads outside prob there). */
#define BLOBRT_MATH_SOFTMAX_LOSS_PARAMETERS(P)                                                   \
  P(PRECISION, precision) P(SIZE, outer) P(SIZE, channels) P(SIZE, inner) P(INPUT, prob)         \
  P(OFFSET, prob_offset) P(INPUT, label) P(OFFSET, label_offset) P(SCALAR, ignore_label)         \
  P(OUTPUT, loss) P(OFFSET, loss_offset)
/* Its gradient: bottom_diff = scale * (prob - 1 at the label's channel, prob elsewhere), in
 * Caffe's order ((prob - 1) then the product with scale); every channel 0 at an ignored
 * position, NaN at a position whose label is outside [0, channels). bottom_diff may be prob. */
#define BLOBRT_MATH_SOFTMAX_LOSS_BACKWARD_PARAMETERS(P)                                          \
  P(PRECISION, precision) P(SIZE, outer) P(SIZE, channels) P(SIZE, inner) P(INPUT, prob)         \
  P(OFFSET, prob_offset) P(INPUT, label) P(OFFSET, label_offset) P(SCALAR, ignore_label)         \
  P(SCALAR, scale) P(OUTPUT, bottom_diff) P(OFFSET, bottom_diff_offset)

/* dst[r * dst_stride + c] = src[r * src_stride + c] for r < rows, c < columns: a block of
 * rows into its place in a wider layout and back (Caffe's Concat and Slice along an axis: rows
 * are the leading axes' count, columns a bottom's extent along the axis times the trailing
 * axes' count). Elements between dst's rows are untouched; rows of dst may not overlap
 * (columns <= dst_stride where rows > 1), and src and dst may not overlap. */
#define BLOBRT_MATH_COPY_ROWS_PARAMETERS(P)                                                       \
  P(PRECISION, precision) P(SIZE, rows) P(SIZE, columns) P(INPUT, src) P(OFFSET, src_offset)      \
  P(SIZE, src_stride) P(OUTPUT, dst) P(OFFSET, dst_offset) P(SIZE, dst_stride)

/* Local response normalization across channels (Caffe's LRNLayer, ACROSS_CHANNELS), over
 * softmax's outer x channels x inner layout with a window of `size` channels (odd) centred on
 * each: scale = k + alpha_over_size * the sum of bottom^2 over the window, in Caffe's GPU
 * kernel's order (a running sum: the entering channel added, the leaving one subtracted).
 * The layer's output is bottom * scale^-beta (element-wise powx and mul). */
#define BLOBRT_MATH_LRN_SCALE_PARAMETERS(P)                                                       \
  P(PRECISION, precision) P(SIZE, outer) P(SIZE, channels) P(SIZE, inner) P(SIZE, size)           \
  P(SCALAR, alpha_over_size) P(SCALAR, k) P(INPUT, bottom) P(OFFSET, bottom_offset)               \
  P(OUTPUT, scale) P(OFFSET, scale_offset)
/* Its gradient: bottom_diff = top_diff * scale^negative_beta - cache_ratio * bottom * the sum of
 * top_diff * top / scale over the window (Caffe passes -beta and 2 alpha beta / size), in
 * Caffe's GPU kernel's order. bottom_diff may not be any of the inputs. */
#define BLOBRT_MATH_LRN_BACKWARD_PARAMETERS(P)                                                    \
  P(PRECISION, precision) P(SIZE, outer) P(SIZE, channels) P(SIZE, inner) P(SIZE, size)           \
  P(SCALAR, negative_beta) P(SCALAR, cache_ratio) P(INPUT, bottom) P(OFFSET, bottom_offset)       \
  P(INPUT, top) P(OFFSET, top_offset) P(INPUT, scale) P(OFFSET, scale_offset) P(INPUT, top_diff)  \
  P(OFFSET, top_diff_offset) P(OUTPUT, bottom_diff) P(OFFSET, bottom_diff_offset)

/* top = bottom * scale[c] + bias[c] at every (outer, c, inner) of an outer x channels x inner
 * array (Caffe's Scale and Bias layers: channels is the factors' extent), scale and bias each
 * NULL when absent: bottom * scale[c], bottom + bias[c], or bottom copied. top may be bottom. */
#define BLOBRT_MATH_CHANNEL_AFFINE_PARAMETERS(P)                                                  \
  P(PRECISION, precision) P(SIZE, outer) P(SIZE, channels) P(SIZE, inner) P(INPUT, bottom)        \
  P(OFFSET, bottom_offset) P(INPUT, scale) P(OFFSET, scale_offset) P(INPUT, bias)                 \
  P(OFFSET, bias_offset) P(OUTPUT, top) P(OFFSET, top_offset)

/* Each kind's C type. */
#define BLOBRT_MATH_C_TYPE_PRECISION int32_t
#define BLOBRT_MATH_C_TYPE_TRANSPOSE int32_t
#define BLOBRT_MATH_C_TYPE_EW_OP int32_t
#define BLOBRT_MATH_C_TYPE_SIZE int64_t
#define BLOBRT_MATH_C_TYPE_OFFSET int64_t
#define BLOBRT_MATH_C_TYPE_SCALAR double
#define BLOBRT_MATH_C_TYPE_INPUT const void*
#define BLOBRT_MATH_C_TYPE_OUTPUT void*

/* `, type name` per parameter: what follows `void* context` in an entry point. */
#define BLOBRT_MATH_C_PARAMETER(kind, name) , BLOBRT_MATH_C_TYPE_##kind name
/* `, name` per parameter: the same parameters passed on. */
#define BLOBRT_MATH_FORWARD(kind, name) , name

/* A comma-separated list from one that starts with a comma: BLOBRT_MATH_LIST(PARAMETERS, P)
 * is PARAMETERS(P) without its leading comma. */
#define BLOBRT_MATH_DROP_FIRST_(first, ...) __VA_ARGS__
#define BLOBRT_MATH_APPLY_(macro, arguments) macro arguments
#define BLOBRT_MATH_LIST(parameters, P) BLOBRT_MATH_APPLY_(BLOBRT_MATH_DROP_FIRST_, (parameters(P)))

#endif /* BLOBRT_MATH_OPERATIONS_H */
