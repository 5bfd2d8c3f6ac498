// Stands for Caffe's src/caffe/util/math_functions.cpp, which blobrt replaces: caffe-on-blobrt.cmake leaves it out.
#error "src/caffe/util/math_functions.cpp was compiled: caffe-on-blobrt.cmake should have left it out of target caffe"
