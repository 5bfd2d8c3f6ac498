// blobrt-caffe's caffe/*.hpp headers as Caffe's own sources include them (net.cpp, solver.cpp,
// io.cpp, pycaffe's _caffe.cpp), with a protoc-generated caffe.pb.h: every header compiles
// together, declares what Caffe's does with Caffe's types, and what pycaffe and the solvers
// use of it works. GlobalInit and the fatal path run in caffe_global_init_probe
// (caffe_global_init_test.py): glog can be started once per process.
#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/syncedmem.hpp"
#include "caffe/util/device_alternate.hpp"
#include "caffe/util/io.hpp"
#include "caffe/util/math_functions.hpp"
#include "caffe/util/mkl_alternate.hpp"
#include "caffe/util/rng.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace caffe {

// What Caffe's io.cpp defines (a Caffe build keeps that file), forwarded to blobrt's helpers
// so that the header's inline ...OrDie wrappers can run here.
bool ReadProtoFromTextFile(const char* filename, Message* proto) { return blobrt::ReadProtoFromTextFile(filename, proto); }
void WriteProtoToTextFile(const Message& proto, const char* filename) { blobrt::WriteProtoToTextFile(proto, filename); }
bool ReadProtoFromBinaryFile(const char* filename, Message* proto) {
  return blobrt::ReadProtoFromBinaryFile(filename, proto);
}
void WriteProtoToBinaryFile(const Message& proto, const char* filename) {
  blobrt::WriteProtoToBinaryFile(proto, filename);
}

}  // namespace caffe

namespace {

using caffe::Blob;

// pycaffe binds these member pointers with Boost.Python, which calls them on a caffe::Blob
// only when their class is caffe::Blob (a base member's would not match).
template <typename Dtype>
void check_bindable_members() {
  static_assert(std::is_same<decltype(&Blob<Dtype>::num), int (Blob<Dtype>::*)() const>::value, "num");
  static_assert(std::is_same<decltype(&Blob<Dtype>::channels), int (Blob<Dtype>::*)() const>::value, "channels");
  static_assert(std::is_same<decltype(&Blob<Dtype>::height), int (Blob<Dtype>::*)() const>::value, "height");
  static_assert(std::is_same<decltype(&Blob<Dtype>::width), int (Blob<Dtype>::*)() const>::value, "width");
  static_assert(std::is_same<decltype(&Blob<Dtype>::mutable_cpu_data), Dtype* (Blob<Dtype>::*)()>::value, "data");
  static_assert(std::is_same<decltype(&Blob<Dtype>::mutable_cpu_diff), Dtype* (Blob<Dtype>::*)()>::value, "diff");
  static_assert(std::is_same<decltype(&Blob<Dtype>::mutable_gpu_data), Dtype* (Blob<Dtype>::*)()>::value, "gpu");
  using ShapeGetter = const std::vector<int>& (Blob<Dtype>::*)() const;
  static_assert(std::is_same<decltype(static_cast<ShapeGetter>(&Blob<Dtype>::shape)), ShapeGetter>::value, "shape");
}

TEST(CaffeHeaders, BlobMembersCallableThroughCaffeBlobPointers) {
  check_bindable_members<float>();
  check_bindable_members<double>();
  Blob<float> blob(2, 3, 4, 5);
  float* (Blob<float>::*data)() = &Blob<float>::mutable_cpu_data;
  int (Blob<float>::*channels)() const = &Blob<float>::channels;
  (blob.*data)()[7] = 1.5f;
  EXPECT_EQ((blob.*channels)(), 3);
  EXPECT_EQ(blob.cpu_data()[7], 1.5f);
  EXPECT_EQ(blob.shape(), (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(blob.shape(-1), 5);
}

// Layer code and pycaffe cast shared_ptrs with Boost's functions (pycaffe's _caffe.cpp:
// boost::dynamic_pointer_cast<MemoryDataLayer<Dtype> >(net->layers()[0])), on Caffe's
// boost::shared_ptr and, through boost/pointer_cast.hpp, on std::shared_ptr too.
struct Base {
  virtual ~Base() = default;
};
struct Derived : Base {
  int value = 42;
};
TEST(CaffeHeaders, SharedPtrIsCaffesBoostOneAndBoostCastsTakeStdOnesToo) {
  // Caffe's common.hpp: using boost::shared_ptr (tools/extract_features.cpp spells it out).
  static_assert(std::is_same<caffe::shared_ptr<int>, boost::shared_ptr<int>>::value, "caffe::shared_ptr");
  std::shared_ptr<Base> base(new Derived);
  std::shared_ptr<Derived> derived = boost::dynamic_pointer_cast<Derived>(base);
  ASSERT_TRUE(derived);
  EXPECT_EQ(derived->value, 42);
}

TEST(CaffeHeaders, BoostPointerCastsOnCaffeSharedPtr) {
  caffe::shared_ptr<Base> base(new Derived);
  caffe::shared_ptr<Derived> derived = boost::dynamic_pointer_cast<Derived>(base);
  ASSERT_TRUE(derived);
  EXPECT_EQ(derived->value, 42);
  caffe::shared_ptr<Base> plain(new Base);
  EXPECT_FALSE(boost::dynamic_pointer_cast<Derived>(plain));
  EXPECT_EQ(boost::static_pointer_cast<Derived>(base)->value, 42);
}

// Caffe's io.hpp, declared as Caffe declares it (the types below are Caffe's io.hpp's).
TEST(CaffeHeaders, IoDeclaresCaffesFunctions) {
  using caffe::Datum;
  using std::string;
  static_assert(std::is_same<decltype(static_cast<bool (*)(const string&, const int, Datum*)>(&caffe::ReadFileToDatum)),
                             bool (*)(const string&, const int, Datum*)>::value, "");
  static_assert(std::is_same<decltype(static_cast<bool (*)(const string&, const int, const int, const int, const bool,
                                                           const std::string&, Datum*)>(&caffe::ReadImageToDatum)),
                             bool (*)(const string&, int, int, int, bool, const std::string&, Datum*)>::value, "");
  static_assert(std::is_same<decltype(&caffe::DecodeDatumNative), bool (*)(Datum*)>::value, "");
  static_assert(std::is_same<decltype(&caffe::DecodeDatum), bool (*)(Datum*, bool)>::value, "");
  static_assert(std::is_same<decltype(static_cast<bool (*)(const char*, caffe::Message*)>(&caffe::ReadProtoFromTextFile)),
                             bool (*)(const char*, google::protobuf::Message*)>::value, "");
}

TEST(CaffeHeaders, ProtoHelpersAreCaffesAndUnambiguous) {
  std::string file;
  caffe::MakeTempFilename(&file);
  caffe::Datum datum;
  datum.set_channels(1);
  datum.set_height(2);
  datum.set_width(3);
  datum.set_data(std::string("abcdef"));
  datum.set_label(7);
  caffe::WriteProtoToBinaryFile(datum, file);  // string overloads, inline in the header
  caffe::Datum back;
  caffe::ReadProtoFromBinaryFileOrDie(file, &back);
  EXPECT_EQ(back.SerializeAsString(), datum.SerializeAsString());
  caffe::WriteProtoToTextFile(datum, file + ".txt");
  caffe::Datum text;
  EXPECT_TRUE(caffe::ReadProtoFromTextFile(file + ".txt", &text));
  EXPECT_EQ(text.label(), 7);
}

TEST(CaffeHeaders, TempDirsAndFilenamesAreFreshAndDistinct) {
  std::string a, b;
  caffe::MakeTempDir(&a);
  caffe::MakeTempDir(&b);
  EXPECT_NE(a, b);
  EXPECT_TRUE(boost::filesystem::is_directory(a));
  EXPECT_NE(a.find("caffe_test."), std::string::npos) << a;
  std::set<std::string> names;
  for (int i = 0; i < 3; ++i) {
    std::string name;
    caffe::MakeTempFilename(&name);
    names.insert(name);
    EXPECT_EQ(boost::filesystem::path(name).filename().string().size(), 9u) << name;
  }
  EXPECT_EQ(names.size(), 3u);
  boost::filesystem::remove_all(a);
  boost::filesystem::remove_all(b);
}

TEST(CaffeHeaders, CommonGivesCaffesNamesAndMacros) {
  EXPECT_EQ(caffe::CAFFE_GET_BLOCKS(1025), 3);  // 512 threads a block
  caffe::Caffe::set_random_seed(1701);
  std::vector<int> order = {0, 1, 2, 3, 4, 5, 6, 7};
  caffe::shuffle(order.begin(), order.end());
  EXPECT_NE(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(kMaxBlobAxes, 32);
  // gflags' namespace under both of Caffe's spellings.
  EXPECT_TRUE(&gflags::ParseCommandLineFlags != nullptr);
}

}  // namespace
