// Stands for Caffe's include/caffe/blob.hpp: blobrt-caffe's must be found first.
#error "Caffe's include/caffe/blob.hpp was found ahead of blobrt-caffe's include directory"
