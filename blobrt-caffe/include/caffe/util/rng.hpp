// caffe/util/rng.hpp for Caffe's own sources built on blobrt: rng_t (boost::mt19937),
// caffe_rng() and shuffle() are <blobrt/caffe/common.hpp>'s, so a seed gives Caffe's
// draws (installed by blobrt-caffe; docs/caffe-on-blobrt.md).
#ifndef CAFFE_RNG_CPP_HPP_
#define CAFFE_RNG_CPP_HPP_

#include <algorithm>
#include <iterator>

#include "boost/random/mersenne_twister.hpp"
#include "boost/random/uniform_int.hpp"

#include "caffe/common.hpp"

#endif  // CAFFE_RNG_CPP_HPP_
