// Stands for Caffe's src/caffe/blob.cpp, which blobrt replaces: caffe-on-blobrt.cmake leaves it out.
#error "src/caffe/blob.cpp was compiled: caffe-on-blobrt.cmake should have left it out of target caffe"
