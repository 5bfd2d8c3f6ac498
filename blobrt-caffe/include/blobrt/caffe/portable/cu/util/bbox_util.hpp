// SSD's src/caffe/util/bbox_util.cu (weiliu89/caffe, branch ssd) in the portable build: the
// GPU functions its header declares and its .cpp files call (bbox_util.cpp's
// ComputeConfLossGPU, detection_output_layer.cu's DecodeBBoxesGPU and PermuteDataGPU, the
// tests' all), with the values of the .cu's kernels. SoftMaxGPU is blobrt's softmax
// operation on the device. The others are small per-box loops over a few thousand priors
// whose results Caffe's own callers read back on the host right after (DetectionOutput
// decodes, permutes, then reads both with cpu_data()): they run on host copies of their
// operands, as the n-d im2col does (im2col.hpp), not as device kernels of their own. A
// pointer that is none of the device's buffers is read as host memory, as CUDA reads
// Caffe's pinned host memory (SSD's tests hand cpu_data() to DecodeBBoxesGPU).
#ifndef BLOBRT_CAFFE_PORTABLE_CU_BBOX_UTIL_HPP
#define BLOBRT_CAFFE_PORTABLE_CU_BBOX_UTIL_HPP

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <map>
#include <vector>

#include <blobrt/caffe/portable/cu/host_copies.hpp>
#include <blobrt/caffe/portable/gpu_methods.hpp>
#include <blobrt/runtime.hpp>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/util/bbox_util.hpp"

namespace caffe {

template <typename Dtype>
Dtype BBoxSizeGPU(const Dtype* bbox, const bool normalized) {
  if (bbox[2] < bbox[0] || bbox[3] < bbox[1]) return Dtype(0);  // an invalid box has no area
  const Dtype width = bbox[2] - bbox[0], height = bbox[3] - bbox[1];
  return normalized ? width * height : (width + 1) * (height + 1);  // pixels count both ends
}

template <typename Dtype>
Dtype JaccardOverlapGPU(const Dtype* bbox1, const Dtype* bbox2) {
  if (bbox2[0] > bbox1[2] || bbox2[2] < bbox1[0] || bbox2[1] > bbox1[3] || bbox2[3] < bbox1[1]) return Dtype(0);
  // CUDA's min and max of floating point are fmin and fmax (a NaN loses).
  const Dtype inter_width = std::fmin(bbox1[2], bbox2[2]) - std::fmax(bbox1[0], bbox2[0]);
  const Dtype inter_height = std::fmin(bbox1[3], bbox2[3]) - std::fmax(bbox1[1], bbox2[1]);
  const Dtype inter_size = inter_width * inter_height;
  return inter_size / (BBoxSizeGPU(bbox1, true) + BBoxSizeGPU(bbox2, true) - inter_size);
}

namespace blobrt_portable_bbox {

// Caffe's Blob<bool> arrays are copied as bytes.
static_assert(sizeof(bool) == sizeof(char), "a bool is one byte");

using blobrt_caffe_portable::to_device;
using blobrt_caffe_portable::to_host;

// The kernels' clamps: x < y ? x : y and x > y ? x : y (CUDA's fminf/fmaxf give the same
// for a NaN x: the bound), so a NaN coordinate is clipped to 1 and a NaN probability floored
// to FLT_MIN, as on the GPU.
template <typename Dtype>
Dtype smaller(Dtype x, Dtype y) {
  return x < y ? x : y;
}
template <typename Dtype>
Dtype larger(Dtype x, Dtype y) {
  return x > y ? x : y;
}
template <typename Dtype>
Dtype clip_unit(Dtype x) {
  return larger(smaller(x, Dtype(1)), Dtype(0));
}

// The box coordinate `i` (0 xmin, 1 ymin, 2 xmax, 3 ymax) of one prediction decoded against
// its prior (prior: the prior's 4 corners; variance: its 4 variances), by the .cu's formula
// for each code type; an unknown code type leaves the old value.
template <typename Dtype>
Dtype decode(CodeType code_type, bool variance_encoded_in_target, const Dtype* prior, const Dtype* variance,
             const Dtype* loc, int i, Dtype old) {
  const Dtype prior_width = prior[2] - prior[0], prior_height = prior[3] - prior[1];
  if (code_type == PriorBoxParameter_CodeType_CORNER) {
    return variance_encoded_in_target ? prior[i] + loc[i] : prior[i] + loc[i] * variance[i];
  }
  if (code_type == PriorBoxParameter_CodeType_CORNER_SIZE) {
    const Dtype size = i % 2 == 0 ? prior_width : prior_height;
    return variance_encoded_in_target ? prior[i] + loc[i] * size : prior[i] + loc[i] * variance[i] * size;
  }
  if (code_type != PriorBoxParameter_CodeType_CENTER_SIZE) return old;
  const Dtype center_x = (prior[0] + prior[2]) / 2., center_y = (prior[1] + prior[3]) / 2.;
  Dtype x, y, width, height;
  if (variance_encoded_in_target) {
    x = loc[0] * prior_width + center_x;
    y = loc[1] * prior_height + center_y;
    width = std::exp(loc[2]) * prior_width;
    height = std::exp(loc[3]) * prior_height;
  } else {
    x = variance[0] * loc[0] * prior_width + center_x;
    y = variance[1] * loc[1] * prior_height + center_y;
    width = std::exp(variance[2] * loc[2]) * prior_width;
    height = std::exp(variance[3] * loc[3]) * prior_height;
  }
  switch (i) {
    case 0: return x - width / 2.;
    case 1: return y - height / 2.;
    case 2: return x + width / 2.;
    default: return y + height / 2.;
  }
}

// The kernels' overlap test over `nthreads` pairs, one mark per pair as each thread writes
// it: pair index e is boxes (e / count) % count and e % count of group e / count^2
// (box(group, i) gives its 4 corners on the host); a pair of one box with itself, or
// overlapping by no more than the threshold, leaves its mark as it was.
template <typename Dtype, typename Box>
void mark_overlaps(int nthreads, int count, Box box, Dtype threshold, char* overlapped) {
  CHECK_GT(count, 0) << "overlaps of no boxes";
  for (int e = 0; e < nthreads; ++e) {
    const int j = e % count, i = (e / count) % count, group = e / count / count;
    if (i != j && JaccardOverlapGPU(box(group, i), box(group, j)) > threshold) overlapped[e] = true;
  }
}

// How many elements a device array indexed by `indices` (each naming `width` elements) holds
// at least; a negative index is refused (it would name host memory before the copy).
inline std::size_t extent_of(const std::vector<int>& indices, std::size_t width) {
  int most = -1;
  for (int i : indices) {
    CHECK_GE(i, 0) << "a box index";
    most = std::max(most, i);
  }
  return static_cast<std::size_t>(most + 1) * width;
}

}  // namespace blobrt_portable_bbox

template <typename Dtype>
void DecodeBBoxesGPU(const int nthreads, const Dtype* loc_data, const Dtype* prior_data, const CodeType code_type,
                     const bool variance_encoded_in_target, const int num_priors, const bool share_location,
                     const int num_loc_classes, const int background_label_id, const bool clip_bbox,
                     Dtype* bbox_data) {
  namespace b = blobrt_portable_bbox;
  if (nthreads <= 0) return;
  CHECK_GT(num_loc_classes, 0);
  CHECK_GT(num_priors, 0);
  CHECK_EQ(nthreads % 4, 0) << "a box has 4 coordinates";
  const std::vector<Dtype> loc = b::to_host(loc_data, nthreads), priors = b::to_host(prior_data, num_priors * 8);
  // The boxes the kernel leaves as they are (the background class's where locations are per
  // class, all of them for a code type it does not know) are read back first.
  const bool keeps_some = !share_location || (code_type != PriorBoxParameter_CodeType_CORNER &&
                                               code_type != PriorBoxParameter_CodeType_CENTER_SIZE &&
                                               code_type != PriorBoxParameter_CodeType_CORNER_SIZE);
  std::vector<Dtype> boxes = keeps_some ? b::to_host(bbox_data, nthreads) : std::vector<Dtype>(nthreads);
  for (int index = 0; index < nthreads; ++index) {
    const int i = index % 4, c = (index / 4) % num_loc_classes, d = (index / 4 / num_loc_classes) % num_priors;
    if (!share_location && c == background_label_id) continue;
    const Dtype value = b::decode(code_type, variance_encoded_in_target, &priors[d * 4],
                                  &priors[(num_priors + d) * 4], &loc[index - i], i, boxes[index]);
    boxes[index] = clip_bbox ? b::clip_unit(value) : value;
  }
  b::to_device(boxes, bbox_data);
}

template <typename Dtype>
void PermuteDataGPU(const int nthreads, const Dtype* data, const int num_classes, const int num_data,
                    const int num_dim, Dtype* new_data) {
  namespace b = blobrt_portable_bbox;
  if (nthreads <= 0) return;
  CHECK_GT(num_classes, 0);
  CHECK_GT(num_data, 0);
  CHECK_GT(num_dim, 0);
  CHECK_EQ(nthreads % (num_classes * num_data * num_dim), 0) << "whole items only: each is classes x data x dim";
  const std::vector<Dtype> in = b::to_host(data, nthreads);
  std::vector<Dtype> out(nthreads);
  // (n, d, c, i) -> (n, c, d, i): per item, its classes' rows gathered by class.
  for (int index = 0; index < nthreads; ++index) {
    const int i = index % num_dim, c = (index / num_dim) % num_classes, d = (index / num_dim / num_classes) % num_data;
    const int n = index / num_dim / num_classes / num_data;
    out[((n * num_classes + c) * num_data + d) * num_dim + i] = in[index];
  }
  b::to_device(out, new_data);
}

template <typename Dtype>
void SoftMaxGPU(const Dtype* data, const int outer_num, const int channels, const int inner_num, Dtype* prob) {
  blobrt::current_device()->softmax(blobrt_caffe_portable::precision_of<Dtype>(), outer_num, channels, inner_num, data,
                                    0, prob, 0);
}

template <typename Dtype>
void ComputeOverlappedGPU(const int nthreads, const Dtype* bbox_data, const int num_bboxes, const int num_classes,
                          const Dtype overlap_threshold, bool* overlapped_data) {
  namespace b = blobrt_portable_bbox;
  if (nthreads <= 0) return;
  CHECK_GT(num_bboxes, 0);
  CHECK_GT(num_classes, 0);
  const int per_class = num_bboxes * num_bboxes, num = (nthreads + per_class * num_classes - 1) / per_class / num_classes;
  const std::vector<Dtype> boxes = b::to_host(bbox_data, static_cast<std::size_t>(num) * num_bboxes * num_classes * 4);
  // bool's bytes (std::vector<bool> has no data()); the kernel only sets marks, so the others stay.
  std::vector<char> marks = b::to_host(reinterpret_cast<const char*>(overlapped_data), nthreads);
  // Pair group g is image g / num_classes, class g % num_classes.
  b::mark_overlaps(
      nthreads, num_bboxes,
      [&](int group, int i) {
        const int n = group / num_classes, c = group % num_classes;
        return &boxes[((n * num_bboxes + i) * num_classes + c) * 4];
      },
      overlap_threshold, marks.data());
  b::to_device(marks, reinterpret_cast<char*>(overlapped_data));
}

template <typename Dtype>
void ComputeOverlappedByIdxGPU(const int nthreads, const Dtype* bbox_data, const Dtype overlap_threshold,
                               const int* idx, const int num_idx, bool* overlapped_data) {
  namespace b = blobrt_portable_bbox;
  if (nthreads <= 0 || num_idx <= 0) return;
  const std::vector<int> indices = b::to_host(idx, num_idx);
  const std::vector<Dtype> boxes = b::to_host(bbox_data, b::extent_of(indices, 4));
  CHECK_LE(nthreads, num_idx * num_idx) << "pairs of " << num_idx << " indexed boxes";
  std::vector<char> marks = b::to_host(reinterpret_cast<const char*>(overlapped_data), nthreads);
  b::mark_overlaps(nthreads, num_idx, [&](int, int i) { return &boxes[indices[i] * 4]; }, overlap_threshold,
                   marks.data());
  b::to_device(marks, reinterpret_cast<char*>(overlapped_data));
}

// As the .cu: the boxes scoring above the threshold (conf_data is host memory there too),
// best first (ties in box order, as thrust's sort of the .cu's index-ordered keys leaves
// them), the best top_k kept, their overlaps, then bbox_util.cpp's greedy suppression.
template <typename Dtype>
void ApplyNMSGPU(const Dtype* bbox_data, const Dtype* conf_data, const int num_bboxes,
                 const float confidence_threshold, const int top_k, const float nms_threshold,
                 std::vector<int>* indices) {
  namespace b = blobrt_portable_bbox;
  std::vector<int> idx;
  for (int i = 0; i < num_bboxes; ++i) {
    if (conf_data[i] > confidence_threshold) idx.push_back(i);
  }
  if (idx.empty()) return;
  std::stable_sort(idx.begin(), idx.end(), [&](int x, int y) { return conf_data[x] > conf_data[y]; });
  if (top_k > -1 && top_k < static_cast<int>(idx.size())) idx.resize(top_k);
  const int num_remain = static_cast<int>(idx.size());
  const std::vector<Dtype> boxes = b::to_host(bbox_data, b::extent_of(idx, 4));
  std::vector<char> overlapped(static_cast<std::size_t>(num_remain) * num_remain, 0);
  b::mark_overlaps(num_remain * num_remain, num_remain, [&](int, int i) { return &boxes[idx[i] * 4]; },
                   static_cast<Dtype>(nms_threshold), overlapped.data());
  std::vector<int> selected;
  ApplyNMS(reinterpret_cast<const bool*>(overlapped.data()), num_remain, &selected);
  for (int s : selected) indices->push_back(idx[s]);
}

template <typename Dtype>
void GetDetectionsGPU(const Dtype* bbox_data, const Dtype* conf_data, const int image_id, const int label,
                      const std::vector<int>& indices, const bool clip_bbox, Blob<Dtype>* detection_blob) {
  namespace b = blobrt_portable_bbox;
  const int num_det = static_cast<int>(indices.size());
  if (num_det == 0) return;
  const std::vector<Dtype> boxes = b::to_host(bbox_data, b::extent_of(indices, 4));
  const std::vector<Dtype> scores = b::to_host(conf_data, b::extent_of(indices, 1));
  detection_blob->Reshape(1, 1, num_det, 7);
  Dtype* row = detection_blob->mutable_cpu_data();
  for (int d = 0; d < num_det; ++d, row += 7) {
    const int det = indices[d];
    row[0] = image_id;
    row[1] = label;
    row[2] = scores[det];
    for (int i = 0; i < 4; ++i) {
      const Dtype v = boxes[det * 4 + i];
      row[3 + i] = clip_bbox ? b::clip_unit(v) : v;
    }
  }
}

// Each prediction's label (the gt box it matched, else the background), then the .cu's
// per-prediction loss: -log(max(p, FLT_MIN)) of its label's softmax probability (blobrt's
// softmax on the device, read back), or the logistic loss summed over the classes.
template <typename Dtype>
void ComputeConfLossGPU(const Blob<Dtype>& conf_blob, const int num, const int num_preds_per_class,
                        const int num_classes, const int background_label_id, const ConfLossType loss_type,
                        const std::vector<std::map<int, std::vector<int> > >& all_match_indices,
                        const std::map<int, std::vector<NormalizedBBox> >& all_gt_bboxes,
                        std::vector<std::vector<float> >* all_conf_loss) {
  CHECK_LT(background_label_id, num_classes);
  std::vector<int> labels(static_cast<std::size_t>(num) * num_preds_per_class, background_label_id);
  for (int i = 0; i < num; ++i) {
    for (int p = 0; p < num_preds_per_class; ++p) {
      for (const auto& matched : all_match_indices[i]) {
        const std::vector<int>& match_index = matched.second;
        CHECK_EQ(match_index.size(), num_preds_per_class);
        if (match_index[p] <= -1) continue;
        const auto gt = all_gt_bboxes.find(i);
        CHECK(gt != all_gt_bboxes.end());
        CHECK_LT(match_index[p], gt->second.size());
        const int label = gt->second[match_index[p]].label();
        CHECK_GE(label, 0);
        CHECK_NE(label, background_label_id);
        CHECK_LT(label, num_classes);
        labels[i * num_preds_per_class + p] = label;
        break;  // a prior matches one gt box
      }
    }
  }
  Blob<Dtype> prob_blob;
  const Dtype* conf = nullptr;
  if (loss_type == MultiBoxLossParameter_ConfLossType_SOFTMAX) {
    prob_blob.ReshapeLike(conf_blob);
    SoftMaxGPU(conf_blob.gpu_data(), num * num_preds_per_class, num_classes, 1, prob_blob.mutable_gpu_data());
    conf = prob_blob.cpu_data();
  } else {
    conf = conf_blob.cpu_data();
  }
  all_conf_loss->clear();
  for (int i = 0; i < num; ++i) {
    std::vector<float> conf_loss(num_preds_per_class);
    for (int p = 0; p < num_preds_per_class; ++p) {
      const int label = labels[i * num_preds_per_class + p];
      const Dtype* scores = conf + (i * num_preds_per_class + p) * num_classes;
      Dtype loss = 0;
      if (loss_type == MultiBoxLossParameter_ConfLossType_SOFTMAX) {
        loss = -std::log(blobrt_portable_bbox::larger(scores[label], Dtype(FLT_MIN)));
      } else if (loss_type == MultiBoxLossParameter_ConfLossType_LOGISTIC) {
        for (int c = 0; c < num_classes; ++c) {
          const Dtype x = scores[c];
          const int target = c == label ? 1 : 0;
          loss -= x * (target - (x >= 0)) - std::log(1 + std::exp(x - 2 * x * (x >= 0)));
        }
      }
      conf_loss[p] = loss;
    }
    all_conf_loss->push_back(conf_loss);
  }
}

#define BLOBRT_PORTABLE_BBOX_UTIL_INSTANTIATE(Dtype)                                                                 \
  template Dtype BBoxSizeGPU<Dtype>(const Dtype*, const bool);                                                       \
  template Dtype JaccardOverlapGPU<Dtype>(const Dtype*, const Dtype*);                                               \
  template void DecodeBBoxesGPU<Dtype>(const int, const Dtype*, const Dtype*, const CodeType, const bool, const int, \
                                       const bool, const int, const int, const bool, Dtype*);                        \
  template void PermuteDataGPU<Dtype>(const int, const Dtype*, const int, const int, const int, Dtype*);             \
  template void SoftMaxGPU<Dtype>(const Dtype*, const int, const int, const int, Dtype*);                            \
  template void ComputeOverlappedGPU<Dtype>(const int, const Dtype*, const int, const int, const Dtype, bool*);      \
  template void ComputeOverlappedByIdxGPU<Dtype>(const int, const Dtype*, const Dtype, const int*, const int, bool*); \
  template void ApplyNMSGPU<Dtype>(const Dtype*, const Dtype*, const int, const float, const int, const float,       \
                                   std::vector<int>*);                                                                    \
  template void GetDetectionsGPU<Dtype>(const Dtype*, const Dtype*, const int, const int, const std::vector<int>&,        \
                                        const bool, Blob<Dtype>*);                                                   \
  template void ComputeConfLossGPU<Dtype>(const Blob<Dtype>&, const int, const int, const int, const int,            \
                                          const ConfLossType, const std::vector<std::map<int, std::vector<int> > >&,                \
                                          const std::map<int, std::vector<NormalizedBBox> >&, std::vector<std::vector<float> >*);
BLOBRT_PORTABLE_BBOX_UTIL_INSTANTIATE(float)
BLOBRT_PORTABLE_BBOX_UTIL_INSTANTIATE(double)
#undef BLOBRT_PORTABLE_BBOX_UTIL_INSTANTIATE

}  // namespace caffe

#endif  // BLOBRT_CAFFE_PORTABLE_CU_BBOX_UTIL_HPP
