// ROIPoolingLayer's GPU methods (Fast R-CNN's region of interest max pooling, py-faster-rcnn's
// roi_pooling_layer.cu) in blobrt's roi_max_pool and roi_max_pool_backward operations (plugin
// ABI 1.11), which compute the .cu's bins in the element type. The fork's CPU code has a
// forward only (its Backward_cpu is NOT_IMPLEMENTED), so without these a Fast or Faster R-CNN
// net could not train in GPU mode off the cuda backend. The layer's int max_idx_ is not
// written: the backward finds each bin's maximum again in the bottom data (as blobrt's max
// pooling does), so nothing but the bottom, the regions and the gradients is read. Gradients
// go to the feature map only, as the .cu's (none to the regions).
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_ROI_POOLING_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_ROI_POOLING_LAYER_HPP

#include <blobrt/caffe/portable/layers/layer_glue.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct ROIPoolingMethods : caffe::ROIPoolingLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::ROIPoolingLayer<Dtype>;
  using Self = ROIPoolingMethods;

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    const Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    caffe::Blob<Dtype>* top = blobs<Dtype>(top_erased)[0];
    if (top->count() == 0) return true;
    device().roi_max_pool(precision_of<Dtype>(), bottom[0]->num(), l.*(&Self::channels_), l.*(&Self::height_),
                          l.*(&Self::width_), bottom[1]->num(), l.*(&Self::pooled_height_),
                          l.*(&Self::pooled_width_), static_cast<double>(l.*(&Self::spatial_scale_)),
                          bottom[0]->gpu_data(), 0, bottom[1]->gpu_data(), 0, top->mutable_gpu_data(), 0);
    return true;
  }
  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    if (propagate_down.empty() || !propagate_down[0]) return true;
    const Layer& l = layer_as<Layer, Dtype>(layer);
    const auto& bottom = blobs<Dtype>(bottom_erased);
    caffe::Blob<Dtype>* top = blobs<Dtype>(top_erased)[0];
    if (bottom[0]->count() == 0) return true;
    device().roi_max_pool_backward(precision_of<Dtype>(), bottom[0]->num(), l.*(&Self::channels_),
                                   l.*(&Self::height_), l.*(&Self::width_), bottom[1]->num(),
                                   l.*(&Self::pooled_height_), l.*(&Self::pooled_width_),
                                   static_cast<double>(l.*(&Self::spatial_scale_)), bottom[0]->gpu_data(), 0,
                                   bottom[1]->gpu_data(), 0, top->gpu_diff(), 0, bottom[0]->mutable_gpu_diff(), 0);
    return true;
  }
};

namespace {
const bool roi_pooling_layer_registered = register_both<ROIPoolingMethods>("ROIPoolingLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_ROI_POOLING_LAYER_HPP
