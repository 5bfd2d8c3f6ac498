// Threads: the runtime initialises once when 16 threads first touch it together, and
// blobs used from several threads at once (one blob per thread) give correct results on
// every device. (A single SyncedMemory or Blob is not thread-safe, as in Caffe.)
// Its own executable: the first test must find the runtime untouched.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend_param.hpp"
#include "blobrt/blob.hpp"

namespace blobrt {
namespace {


TEST(ThreadsTest, SixteenThreadsInitialiseTheRuntimeOnce) {
  constexpr int kThreads = 16;
  std::atomic<int> ready{0};
  std::vector<Device*> seen(kThreads);
  std::vector<const Inventory*> inventories(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) {
      }  // start together
      Blob<float> blob(1, 1, 1, 8);  // the first allocation selects the device
      blob.mutable_cpu_data()[0] = 1;
      seen[t] = blob.data()->device().get();
      inventories[t] = &inventory();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(std::set<Device*>(seen.begin(), seen.end()).size(), 1u);
  EXPECT_EQ(std::set<const Inventory*>(inventories.begin(), inventories.end()).size(), 1u);
  EXPECT_EQ(seen[0], current_device().get());
}

class ThreadsOnEveryDevice : public testing::OnEveryDevice {};

TEST_P(ThreadsOnEveryDevice, OneBlobPerThreadGivesCorrectResults) {
  constexpr int kThreads = 8;
  constexpr int kCount = 70000;  // above the parallel threshold: nested splitting too
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        Blob<float> blob(std::vector<int>{kCount});
        float* data = blob.mutable_cpu_data();
        float* diff = blob.mutable_cpu_diff();
        for (int i = 0; i < kCount; ++i) {
          data[i] = static_cast<float>(t + 1);
          diff[i] = 0.5f;
        }
        blob.mutable_gpu_data();  // math on the device side
        blob.Update();            // data = t + 0.5
        blob.scale_data(2.0f);    // data = 2t + 1
        float expected = static_cast<float>(2 * t + 1) * kCount;
        if (blob.asum_data() != expected) ++failures[t];
        if (blob.cpu_data()[kCount - 1] != static_cast<float>(2 * t + 1)) ++failures[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

INSTANTIATE_ON_EVERY_DEVICE(ThreadsOnEveryDevice);

// Readers of the active device while another thread switches it: every reader sees a
// whole device (ASan/UBSan run this too; the pointer used to be read without the lock).
TEST(ThreadsTest, ActiveDeviceIsReadSafelyWhileItIsSwitched) {
  std::vector<std::string> ids = available_devices();
  std::atomic<bool> done{false};
  std::atomic<long> reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      while (!done.load()) {
        std::shared_ptr<Device> device = current_device();
        if (device->description().id().empty()) ADD_FAILURE() << "a device without an id";
        ++reads;
      }
    });
  }
  for (int i = 0; i < 20000; ++i) select_backend(ids[static_cast<std::size_t>(i) % ids.size()]);
  done = true;
  for (auto& th : readers) th.join();
  EXPECT_GT(reads.load(), 0);
}

}  // namespace
}  // namespace blobrt
