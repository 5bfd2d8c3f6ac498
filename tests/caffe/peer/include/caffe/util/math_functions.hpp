// Shim for Caffe's caffe/util/math_functions.hpp: Caffe's generated messages, glog (as Caffe's headers bring
// it), and blobrt's Caffe compatibility layer, which provides what that header declared.
#pragma once
#include <glog/logging.h>

#include "caffe/proto/caffe.pb.h"
#include "blobrt/caffe_compat.hpp"
