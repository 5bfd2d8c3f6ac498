// Stand-in for SSD's caffe/util/bbox_util.hpp (weiliu89/caffe, branch ssd): the GPU functions
// it declares, with its types and default, which blobrt-caffe's portable form of its
// bbox_util.cu defines (tests/caffe/peer/caffe_forks_test.cpp), and the one CPU function of
// bbox_util.cpp that form calls (ApplyNMS over an overlap table), which the test defines.
#pragma once
#include <map>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

typedef PriorBoxParameter_CodeType CodeType;
typedef MultiBoxLossParameter_ConfLossType ConfLossType;

void ApplyNMS(const bool* overlapped, const int num, std::vector<int>* indices);

template <typename Dtype>
Dtype BBoxSizeGPU(const Dtype* bbox, const bool normalized = true);
template <typename Dtype>
Dtype JaccardOverlapGPU(const Dtype* bbox1, const Dtype* bbox2);
template <typename Dtype>
void DecodeBBoxesGPU(const int nthreads, const Dtype* loc_data, const Dtype* prior_data, const CodeType code_type,
                     const bool variance_encoded_in_target, const int num_priors, const bool share_location,
                     const int num_loc_classes, const int background_label_id, const bool clip_bbox,
                     Dtype* bbox_data);
template <typename Dtype>
void PermuteDataGPU(const int nthreads, const Dtype* data, const int num_classes, const int num_data,
                    const int num_dim, Dtype* new_data);
template <typename Dtype>
void SoftMaxGPU(const Dtype* data, const int outer_num, const int channels, const int inner_num, Dtype* prob);
template <typename Dtype>
void ComputeOverlappedGPU(const int nthreads, const Dtype* bbox_data, const int num_bboxes, const int num_classes,
                          const Dtype overlap_threshold, bool* overlapped_data);
template <typename Dtype>
void ComputeOverlappedByIdxGPU(const int nthreads, const Dtype* bbox_data, const Dtype overlap_threshold,
                               const int* idx, const int num_idx, bool* overlapped_data);
template <typename Dtype>
void ApplyNMSGPU(const Dtype* bbox_data, const Dtype* conf_data, const int num_bboxes,
                 const float confidence_threshold, const int top_k, const float nms_threshold,
                 std::vector<int>* indices);
template <typename Dtype>
void GetDetectionsGPU(const Dtype* bbox_data, const Dtype* conf_data, const int image_id, const int label,
                      const std::vector<int>& indices, const bool clip_bbox, Blob<Dtype>* detection_blob);
template <typename Dtype>
void ComputeConfLossGPU(const Blob<Dtype>& conf_blob, const int num, const int num_preds_per_class,
                        const int num_classes, const int background_label_id, const ConfLossType loss_type,
                        const std::vector<std::map<int, std::vector<int> > >& all_match_indices,
                        const std::map<int, std::vector<NormalizedBBox> >& all_gt_bboxes,
                        std::vector<std::vector<float> >* all_conf_loss);

}  // namespace caffe
