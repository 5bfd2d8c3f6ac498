// Every operation of blobrt/math_operations.h's list with its semantics and host kernel
// (its MathSemantics<Op>, math_operation.hpp): what the core's checks and host path and
// the plugin kit's host-memory devices include, so that a new operation's kernel header is
// named once, here.
#ifndef BLOBRT_KERNELS_MATH_KERNELS_HPP
#define BLOBRT_KERNELS_MATH_KERNELS_HPP

#include "blobrt_kernels/bernoulli_mask.hpp"  // bernoulli_mask
#include "blobrt_kernels/channel_affine.hpp"  // channel_affine
#include "blobrt_kernels/copy_rows.hpp"    // copy_rows
#include "blobrt_kernels/elementwise.hpp"  // elementwise
#include "blobrt_kernels/gather_rows.hpp"  // gather_rows, scatter_add_rows
#include "blobrt_kernels/gemm.hpp"         // gemm, gemv
#include "blobrt_kernels/im2col.hpp"       // im2col, col2im
#include "blobrt_kernels/im2col_3d.hpp"    // im2col_3d, col2im_3d
#include "blobrt_kernels/lrn.hpp"          // lrn_scale, lrn_backward
#include "blobrt_kernels/pooling.hpp"      // max_pool, ave_pool and their backward
#include "blobrt_kernels/roi_pooling.hpp"  // roi_max_pool and its backward
#include "blobrt_kernels/softmax.hpp"      // softmax, softmax_backward
#include "blobrt_kernels/softmax_loss.hpp"  // softmax_loss and its backward
#include "blobrt_kernels/top_k_hits.hpp"    // top_k_hits
#include "blobrt_kernels/math_operation.hpp"

#endif
