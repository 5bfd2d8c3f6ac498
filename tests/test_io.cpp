// Caffe's file helpers: readers never abort, writers are atomic.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"

namespace blobrt {
namespace {

std::string temp(const std::string& name) { return ::testing::TempDir() + "/blobrt_io_" + name; }

void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(IoTest, MissingFileThrowsWithTheName) {
  BlobProto proto;
  try {
    ReadProtoFromBinaryFile("/nonexistent/blob.binaryproto", &proto);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/blob.binaryproto"), std::string::npos);
  }
  EXPECT_THROW(ReadProtoFromTextFile("/nonexistent/blob.prototxt", &proto), Error);
}

TEST(IoTest, GarbageReturnsFalseAndSaysWhy) {
  std::string path = temp("garbage");
  write_raw(path, "\xff\xff\xff\xff\x0f this is not a protobuf");
  BlobProto proto;
  EXPECT_FALSE(ReadProtoFromBinaryFile(path, &proto));
  EXPECT_NE(last_read_error().find(path), std::string::npos);
  EXPECT_THROW(ReadProtoFromBinaryFileOrDie(path, &proto), Error);
  write_raw(path, "data: 1\nnot_a_field: 2\n");
  EXPECT_FALSE(ReadProtoFromTextFile(path, &proto));
  EXPECT_NE(last_read_error().find("line 2 column"), std::string::npos) << last_read_error();
  EXPECT_NE(last_read_error().find("not_a_field"), std::string::npos) << last_read_error();
  EXPECT_THROW(ReadProtoFromTextFileOrDie(path, &proto), Error);
}

TEST(IoTest, TruncatedBinaryIsRejected) {
  Blob<float> blob(std::vector<int>{100});
  blob.mutable_cpu_data()[50] = 3;
  BlobProto proto;
  blob.ToProto(&proto);
  std::string bytes;
  proto.SerializeToString(&bytes);
  std::string path = temp("truncated");
  write_raw(path, bytes.substr(0, bytes.size() / 2));
  BlobProto back;
  EXPECT_FALSE(ReadProtoFromBinaryFile(path, &back));
}

TEST(IoTest, WriteReplacesAtomicallyAndLeavesNoTemporaries) {
  std::string dir = temp("atomic_dir");
  ::mkdir(dir.c_str(), 0755);
  std::string path = dir + "/blob.binaryproto";
  BlobProto first;
  first.add_data(1);
  WriteProtoToBinaryFile(first, path);
  BlobProto second;
  second.add_data(2);
  second.add_data(3);
  WriteProtoToBinaryFile(second, path);
  BlobProto back;
  ASSERT_TRUE(ReadProtoFromBinaryFile(path, &back));
  EXPECT_EQ(back.data_size(), 2);
  // Nothing but the target in the directory.
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++entries;
    EXPECT_EQ(entry.path().filename(), "blob.binaryproto");
  }
  EXPECT_EQ(entries, 1);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~[] { mode_t m = umask(0); umask(m); return m; }());
}

TEST(IoTest, FailedWriteLeavesTheOldFileIntact) {
  std::string dir = temp("readonly_dir");
  ::mkdir(dir.c_str(), 0755);
  std::string path = dir + "/blob.binaryproto";
  BlobProto old;
  old.add_data(7);
  WriteProtoToBinaryFile(old, path);
  std::string before = slurp(path);
  if (::geteuid() == 0) {
    // root ignores directory permissions; make the write fail another way: the target
    // is in a directory that disappears (rename into a missing dir).
    BlobProto other;
    other.add_data(8);
    EXPECT_THROW(WriteProtoToBinaryFile(other, dir + "/missing/blob.binaryproto"), Error);
  } else {
    ::chmod(dir.c_str(), 0555);
    BlobProto other;
    other.add_data(8);
    EXPECT_THROW(WriteProtoToBinaryFile(other, path), Error);
    ::chmod(dir.c_str(), 0755);
  }
  EXPECT_EQ(slurp(path), before);
}

TEST(IoTest, WriterKilledMidWriteLeavesTheOldFileIntact) {
  std::string dir = temp("killed_dir");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path = dir + "/blob.binaryproto";
  BlobProto old;
  old.add_data(42);
  WriteProtoToBinaryFile(old, path);
  const std::string before = slurp(path);
  // A 32 MiB message: its write takes long enough to be interrupted.
  BlobProto big;
  big.mutable_data()->Resize(8 << 20, 1.0f);
  for (int attempt = 0; attempt < 5; ++attempt) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (;;) WriteProtoToBinaryFile(big, path);  // until killed
    }
    ::usleep(20000 + attempt * 7000);
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));
    // Old or new, never a mix: it always parses, and is one of the two.
    BlobProto back;
    ASSERT_TRUE(ReadProtoFromBinaryFile(path, &back)) << "attempt " << attempt;
    EXPECT_TRUE(back.data_size() == 1 || back.data_size() == (8 << 20)) << back.data_size();
    if (back.data_size() == 1) EXPECT_EQ(slurp(path), before);
  }
}

TEST(IoTest, DurableWritesSyncAndReplace) {
  // BLOBRT_SYNC_WRITES=1 takes the fsync + rename path; the result is the same file.
  std::string path = temp("durable.binaryproto");
  BlobProto first, second;
  first.add_data(1);
  second.add_data(2);
  second.add_data(3);
  ::setenv("BLOBRT_SYNC_WRITES", "1", 1);
  WriteProtoToBinaryFile(first, path);
  WriteProtoToBinaryFile(second, path);
  WriteProtoToTextFile(second, path + ".txt");
  ::unsetenv("BLOBRT_SYNC_WRITES");
  BlobProto back;
  ASSERT_TRUE(ReadProtoFromBinaryFile(path, &back));
  EXPECT_EQ(back.data_size(), 2);
  ASSERT_TRUE(ReadProtoFromTextFile(path + ".txt", &back));
  EXPECT_EQ(back.data(1), 3);
}

TEST(IoTest, EmptyAndNonRegularFiles) {
  // An empty file is an empty message (as protobuf and Caffe read it); a pipe-like file
  // (here /dev/null, not regular) goes through the stream parser.
  std::string empty = temp("empty.binaryproto");
  write_raw(empty, "");
  BlobProto proto;
  EXPECT_TRUE(ReadProtoFromBinaryFile(empty, &proto));
  EXPECT_EQ(proto.data_size(), 0);
  EXPECT_TRUE(ReadProtoFromBinaryFile("/dev/null", &proto));
}

TEST(IoTest, TextRoundTrip) {
  Blob<float> blob(1, 2, 1, 2);
  float* d = blob.mutable_cpu_data();
  for (int i = 0; i < 4; ++i) d[i] = 0.1f * i;
  BlobProto proto;
  blob.ToProto(&proto);
  std::string path = temp("round.prototxt");
  WriteProtoToTextFile(proto, path);
  BlobProto back;
  ASSERT_TRUE(ReadProtoFromTextFile(path, &back));
  Blob<float> again;
  again.FromProto(back);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(again.cpu_data()[i], d[i]);
}

}  // namespace
}  // namespace blobrt
