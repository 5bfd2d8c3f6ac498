// Caffe's per-thread context (blobrt/caffe/common.hpp's Caffe::Get), defined here, in
// libblobrt, rather than inline in the header: an inline function's thread_local has a
// copy in every library that calls it, and a library loaded library-local (pycaffe's
// _caffe.so, libcaffe under it) that loads another (a Caffe-layers plugin) would leave the
// plugin's copy unseen by libcaffe: it would say CPU mode while Caffe said GPU.
#include "blobrt/caffe/common.hpp"

#include <cstdint>
#include <limits>
#include <memory>

namespace caffe {

Caffe& Caffe::Get() {
  thread_local Caffe instance;
  return instance;
}

void Caffe::set_random_seed(const unsigned int seed) {
  Caffe& c = Get();
  c.random_generator_ = std::make_shared<RNG>(seed);
  c.device_seed_ = seed;
  c.device_counter_ = 0;
}

Caffe::DeviceWords Caffe::take_device_words(std::int64_t count) {
  Caffe& c = Get();
  if (c.device_seed_ < 0) c.device_seed_ = static_cast<std::int64_t>(static_cast<std::uint64_t>(cluster_seedgen()) >> 1);
  const std::int64_t words = (count + 3) / 4 * 4;
  if (c.device_counter_ > std::numeric_limits<std::int64_t>::max() - words) c.device_counter_ = 0;  // past 2^63 words
  const DeviceWords taken{c.device_seed_, c.device_counter_};
  c.device_counter_ += words;
  return taken;
}

}  // namespace caffe
