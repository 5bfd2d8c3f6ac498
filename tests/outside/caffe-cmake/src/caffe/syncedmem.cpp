// Stands for Caffe's src/caffe/syncedmem.cpp, which blobrt replaces: caffe-on-blobrt.cmake leaves it out.
#error "src/caffe/syncedmem.cpp was compiled: caffe-on-blobrt.cmake should have left it out of target caffe"
