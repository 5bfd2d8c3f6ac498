// TileLayer's GPU methods in blobrt's operations, as tile_layer.cu computes them: forward the
// bottom's blocks of inner_dim_ elements (the tiled axis and those after it) repeated tiles_
// times in the top (copy_rows, one call per tile: each copies every outer index's block into
// its place in the top); backward each bottom element's gradient the sum of its tiles' in
// tile order, from 0 (TileBackward's sum; scatter_add_rows with the top's rows of inner_dim_
// naming the outer index they came from, an index array made on the host at each call).
// A float index is exact below 2^24: more outer indices run the CPU code.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_TILE_LAYER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_TILE_LAYER_HPP

#include <cstdint>
#include <limits>
#include <vector>

#include <blobrt/caffe/portable/layers/layer_glue.hpp>
#include <blobrt/syncedmem.hpp>

namespace blobrt_caffe_portable::layers {

template <typename Dtype>
struct TileMethods : caffe::TileLayer<Dtype> {  // never made: it names the layer's protected members
  using Layer = caffe::TileLayer<Dtype>;
  using Self = TileMethods;

  static bool forward(void* layer, const void* bottom_erased, const void* top_erased) {
    const Layer& l = layer_as<Layer, Dtype>(layer);
    const std::int64_t outer = l.*(&Self::outer_dim_), inner = l.*(&Self::inner_dim_), tiles = l.*(&Self::tiles_);
    caffe::Blob<Dtype>& top = *blobs<Dtype>(top_erased)[0];
    if (top.count() == 0) return true;
    const Dtype* bottom = blobs<Dtype>(bottom_erased)[0]->gpu_data();
    Dtype* out = top.mutable_gpu_data();
    for (std::int64_t t = 0; t < tiles; ++t) {
      device().copy_rows(precision_of<Dtype>(), outer, inner, bottom, 0, inner, out, t * inner, tiles * inner);
    }
    return true;
  }

  static bool backward(void* layer, const void* top_erased, const std::vector<bool>& propagate_down,
                       const void* bottom_erased) {
    if (propagate_down.empty() || !propagate_down[0]) return true;
    const Layer& l = layer_as<Layer, Dtype>(layer);
    const std::int64_t outer = l.*(&Self::outer_dim_), inner = l.*(&Self::inner_dim_), tiles = l.*(&Self::tiles_);
    if (outer > (std::int64_t{1} << std::numeric_limits<Dtype>::digits)) return false;  // an index not exact
    caffe::Blob<Dtype>& bottom = *blobs<Dtype>(bottom_erased)[0];
    Dtype* diff = bottom.mutable_gpu_diff();
    fill(bottom.count(), 0, diff);
    const std::int64_t rows = outer * tiles;
    if (rows == 0 || inner == 0) return true;
    // Row r of the top (outer index r / tiles, tile r % tiles) adds into bottom row r / tiles.
    blobrt::SyncedMemory index(rows * sizeof(Dtype));
    Dtype* names = static_cast<Dtype*>(index.mutable_cpu_data());
    for (std::int64_t r = 0; r < rows; ++r) names[r] = static_cast<Dtype>(r / tiles);
    device().scatter_add_rows(precision_of<Dtype>(), rows, inner, outer, index.gpu_data(), 0,
                              blobs<Dtype>(top_erased)[0]->gpu_diff(), 0, diff, 0);
    return true;
  }
};

namespace {
const bool tile_layer_registered = register_both<TileMethods>("TileLayer");
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_TILE_LAYER_HPP
