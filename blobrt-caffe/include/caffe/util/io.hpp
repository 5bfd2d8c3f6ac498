// caffe/util/io.hpp for Caffe's own sources built on blobrt (installed by blobrt-caffe;
// docs/caffe-on-blobrt.md). In a Caffe tree, whose include/ comes after blobrt-caffe's, it
// is the tree's own io.hpp, taken with #include_next: each fork's own API (SSD's label-map
// and annotated-datum helpers, an older Caffe's), declared for that fork's own io.cpp,
// which a Caffe build keeps. Only with no Caffe tree behind it (Caffe-style code on
// blobrt-caffe alone) does it declare Caffe 1.0's io.hpp API itself, below. Either way:
//
// Caffe's io.cpp calls CodedInputStream::SetTotalBytesLimit(limit, warning_threshold),
// which protobuf 3.6 removed (the one-argument form stayed): BVLC Caffe's io.cpp does not
// compile against a current protobuf, with or without blobrt. Its one includer gets the
// call mapped to the one-argument form (the threshold only ever set a log message).
// BLOBRT_CAFFE_KEEP_PROTOBUF_API leaves protobuf's name alone.
//
// Because this header is in use, <blobrt/caffe_compat.hpp> does not bring blobrt's own
// proto helpers (blobrt/io.hpp) into namespace caffe: two declarations of
// ReadProtoFromTextFile there would conflict. blobrt::ReadProtoFromTextFile & co. stay
// available under their own namespace.
#ifndef BLOBRT_CAFFE_UTIL_IO_HPP
#define BLOBRT_CAFFE_UTIL_IO_HPP

#include <google/protobuf/io/coded_stream.h>
#if GOOGLE_PROTOBUF_VERSION >= 3006000 && !defined(BLOBRT_CAFFE_KEEP_PROTOBUF_API) && !defined(SetTotalBytesLimit)
#define SetTotalBytesLimit(limit, ...) SetTotalBytesLimit(limit)
#endif

#if __has_include_next(<caffe/util/io.hpp>)
#include_next <caffe/util/io.hpp>
#else
#ifndef CAFFE_UTIL_IO_H_
#define CAFFE_UTIL_IO_H_

#include <boost/filesystem.hpp>

#include <cstdint>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "google/protobuf/message.h"

#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"
// Caffe's io.hpp brings format.hpp (format_int) to the files that include it.
#if __has_include("caffe/util/format.hpp")
#include "caffe/util/format.hpp"
#endif


#ifndef CAFFE_TMP_DIR_RETRIES
#define CAFFE_TMP_DIR_RETRIES 100
#endif

namespace caffe {

using ::boost::filesystem::path;
using ::google::protobuf::Message;

// A new directory under the system's temporary directory (caffe_test.XXXX-XXXX).
inline void MakeTempDir(string* temp_dirname) {
  temp_dirname->clear();
  const path pattern = boost::filesystem::temp_directory_path() / "caffe_test.%%%%-%%%%";
  for (int attempt = 0; attempt < CAFFE_TMP_DIR_RETRIES; ++attempt) {
    const path dir = boost::filesystem::unique_path(pattern);
    if (boost::filesystem::create_directory(dir)) {
      *temp_dirname = dir.string();
      return;
    }
  }
  LOG(FATAL) << "Failed to create a temporary directory.";
}

// Files named 000000000, 000000001, ... in one temporary directory per process.
inline void MakeTempFilename(string* temp_filename) {
  static path temp_files_dir;
  static std::uint64_t next_temp_file = 0;
  temp_filename->clear();
  if (temp_files_dir.empty()) {
    string dir;
    MakeTempDir(&dir);
    temp_files_dir = dir;
  }
  std::ostringstream name;
  name << std::setw(9) << std::setfill('0') << next_temp_file++;
  *temp_filename = (temp_files_dir / name.str()).string();
}

bool ReadProtoFromTextFile(const char* filename, Message* proto);
inline bool ReadProtoFromTextFile(const string& filename, Message* proto) {
  return ReadProtoFromTextFile(filename.c_str(), proto);
}
inline void ReadProtoFromTextFileOrDie(const char* filename, Message* proto) {
  CHECK(ReadProtoFromTextFile(filename, proto));
}
inline void ReadProtoFromTextFileOrDie(const string& filename, Message* proto) {
  ReadProtoFromTextFileOrDie(filename.c_str(), proto);
}

void WriteProtoToTextFile(const Message& proto, const char* filename);
inline void WriteProtoToTextFile(const Message& proto, const string& filename) {
  WriteProtoToTextFile(proto, filename.c_str());
}

bool ReadProtoFromBinaryFile(const char* filename, Message* proto);
inline bool ReadProtoFromBinaryFile(const string& filename, Message* proto) {
  return ReadProtoFromBinaryFile(filename.c_str(), proto);
}
inline void ReadProtoFromBinaryFileOrDie(const char* filename, Message* proto) {
  CHECK(ReadProtoFromBinaryFile(filename, proto));
}
inline void ReadProtoFromBinaryFileOrDie(const string& filename, Message* proto) {
  ReadProtoFromBinaryFileOrDie(filename.c_str(), proto);
}

void WriteProtoToBinaryFile(const Message& proto, const char* filename);
inline void WriteProtoToBinaryFile(const Message& proto, const string& filename) {
  WriteProtoToBinaryFile(proto, filename.c_str());
}

// Datum helpers (Caffe's io.cpp): a file's bytes as an encoded Datum, an image decoded
// (OpenCV) to height x width, and an encoded Datum decoded in place.
bool ReadFileToDatum(const string& filename, const int label, Datum* datum);
inline bool ReadFileToDatum(const string& filename, Datum* datum) { return ReadFileToDatum(filename, -1, datum); }

bool ReadImageToDatum(const string& filename, const int label, const int height, const int width,
                      const bool is_color, const std::string& encoding, Datum* datum);
inline bool ReadImageToDatum(const string& filename, const int label, const int height, const int width,
                             const bool is_color, Datum* datum) {
  return ReadImageToDatum(filename, label, height, width, is_color, "", datum);
}
inline bool ReadImageToDatum(const string& filename, const int label, const int height, const int width,
                             Datum* datum) {
  return ReadImageToDatum(filename, label, height, width, true, datum);
}
inline bool ReadImageToDatum(const string& filename, const int label, const bool is_color, Datum* datum) {
  return ReadImageToDatum(filename, label, 0, 0, is_color, datum);
}
inline bool ReadImageToDatum(const string& filename, const int label, Datum* datum) {
  return ReadImageToDatum(filename, label, 0, 0, true, datum);
}
inline bool ReadImageToDatum(const string& filename, const int label, const std::string& encoding,
                             Datum* datum) {
  return ReadImageToDatum(filename, label, 0, 0, true, encoding, datum);
}

bool DecodeDatumNative(Datum* datum);
bool DecodeDatum(Datum* datum, bool is_color);

#ifdef USE_OPENCV
cv::Mat ReadImageToCVMat(const string& filename, const int height, const int width, const bool is_color);
cv::Mat ReadImageToCVMat(const string& filename, const int height, const int width);
cv::Mat ReadImageToCVMat(const string& filename, const bool is_color);
cv::Mat ReadImageToCVMat(const string& filename);
cv::Mat DecodeDatumToCVMatNative(const Datum& datum);
cv::Mat DecodeDatumToCVMat(const Datum& datum, bool is_color);
void CVMatToDatum(const cv::Mat& cv_img, Datum* datum);
#endif  // USE_OPENCV

}  // namespace caffe

#endif  // CAFFE_UTIL_IO_H_
#endif  // a Caffe tree's own io.hpp or this one

#endif  // BLOBRT_CAFFE_UTIL_IO_HPP
