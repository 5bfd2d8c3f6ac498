// Stands for Caffe's src/caffe/common.cpp, which blobrt replaces: caffe-on-blobrt.cmake leaves it out.
#error "src/caffe/common.cpp was compiled: caffe-on-blobrt.cmake should have left it out of target caffe"
