// A current device per thread (runtime.hpp): two threads drive two devices at once, a
// DeviceGuard gives the thread's previous device back, the process default is not moved by
// any thread's choice, memory stays on its device and a cross-device operation is a clear
// blobrt::Error; Caffe::SetDevice is per thread, as Caffe's.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "blobrt/blob.hpp"
#include "blobrt/caffe_compat.hpp"
#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt {
namespace {

bool usable(const std::string& spec) {
  try {
    return open_device(spec) != nullptr;
  } catch (const Error&) {
    return false;
  }
}

// Two devices this machine can open, other than the process default where it can: two
// GPUs where there are (the GPU bundle runs this suite on GPU nodes), else blis:0 and
// opencl:0 here.
std::vector<std::string> two_devices() {
  if (usable("cuda:0") && usable("cuda:1")) return {"cuda:0", "cuda:1"};
  std::vector<std::string> found;
  for (const char* spec : {"blis:0", "opencl:0", "cuda:0", "cuda:1", "host:0"}) {
    if (found.size() < 2 && usable(spec)) found.push_back(spec);
  }
  return found;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no blobrt::Error)";
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

class ThreadDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    devices_ = two_devices();
    if (devices_.size() < 2) GTEST_SKIP() << "fewer than two usable devices here";
    default_ = default_device()->description().id();
  }
  void TearDown() override {
    reset_thread_device();
    if (!default_.empty()) select_backend(default_);
  }
  std::vector<std::string> devices_;
  std::string default_;
};

// Each thread on its own device, both working at once (they start together and each does
// several rounds), results checked, and each blob bound to its thread's device.
TEST_F(ThreadDevice, TwoThreadsDriveTwoDevicesAtOnce) {
  constexpr int kCount = 50000;
  constexpr int kRounds = 20;
  std::atomic<int> ready{0};
  std::vector<std::string> failures(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      try {
        DeviceGuard guard(devices_[t]);
        ++ready;
        while (ready.load() < 2) {
        }
        for (int round = 0; round < kRounds; ++round) {
          if (current_device()->description().id() != devices_[t]) {
            failures[t] += "current device " + current_device()->description().id() + "; ";
          }
          Blob<float> blob(std::vector<int>{kCount});
          if (blob.data()->device()->description().id() != devices_[t]) {
            failures[t] += "blob bound to " + blob.data()->device()->description().id() + "; ";
          }
          float* data = blob.mutable_cpu_data();
          float* diff = blob.mutable_cpu_diff();
          for (int i = 0; i < kCount; ++i) {
            data[i] = static_cast<float>(t + round + 1);
            diff[i] = 0.5f;
          }
          blob.mutable_gpu_data();  // math on the device side
          blob.Update();            // t + round + 0.5
          blob.scale_data(2.0f);    // 2(t + round) + 1
          const float value = static_cast<float>(2 * (t + round) + 1);
          if (blob.asum_data() != value * kCount) failures[t] += "asum round " + std::to_string(round) + "; ";
          if (blob.cpu_data()[kCount - 1] != value) failures[t] += "value round " + std::to_string(round) + "; ";
        }
      } catch (const std::exception& e) {
        failures[t] += e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures[0], "") << devices_[0];
  EXPECT_EQ(failures[1], "") << devices_[1];
  EXPECT_EQ(current_device()->description().id(), default_);  // this thread never moved
}

TEST_F(ThreadDevice, GuardRestoresThePreviousDevice) {
  const std::string a = devices_[0], b = devices_[1];
  EXPECT_EQ(current_device()->description().id(), default_);
  {
    DeviceGuard outer(a);
    EXPECT_EQ(current_device()->description().id(), a);
    EXPECT_EQ(outer.device(), current_device());
    {
      DeviceGuard inner(b);
      EXPECT_EQ(current_device()->description().id(), b);
      EXPECT_EQ(current_device_id(), b);
    }
    EXPECT_EQ(current_device()->description().id(), a);
  }
  EXPECT_EQ(current_device()->description().id(), default_);
  // A thread's own selection comes back too, and a guard made from a blob's device works.
  select_thread_device(b);
  {
    DeviceGuard guard(a);
    Blob<float> blob(1, 1, 1, 4);
    DeviceGuard on_blob(blob.data()->device());
    EXPECT_EQ(current_device()->description().id(), a);
  }
  EXPECT_EQ(current_device()->description().id(), b);
  reset_thread_device();
  EXPECT_EQ(current_device()->description().id(), default_);
}

TEST_F(ThreadDevice, AGuardThatFailsChangesNothing) {
  DeviceGuard guard(devices_[0]);
  const std::string bad = message_of([] { DeviceGuard nosuch("nosuch:0"); });
  EXPECT_CONTAINS(bad, "backend 'nosuch:0' requested by DeviceGuard cannot be used");
  EXPECT_CONTAINS(message_of([] { select_thread_device("opencl:x"); }), "select_thread_device='opencl:x'");
  EXPECT_CONTAINS(message_of([] { DeviceGuard null(std::shared_ptr<Device>{}); }), "DeviceGuard: a null device");
  EXPECT_EQ(current_device()->description().id(), devices_[0]);
}

// Other threads' choices, guards and select_thread_device alike, leave the process default
// and this thread alone; a new thread follows the default.
TEST_F(ThreadDevice, TheProcessDefaultIsUnaffected) {
  const std::string other = devices_[0] == default_ ? devices_[1] : devices_[0];
  std::string seen_in_thread, seen_in_fresh_thread;
  std::thread([&] {
    select_thread_device(other);
    DeviceGuard guard(other);
    seen_in_thread = current_device()->description().id();
  }).join();
  std::thread([&] { seen_in_fresh_thread = current_device()->description().id(); }).join();
  EXPECT_EQ(seen_in_thread, other);
  EXPECT_EQ(seen_in_fresh_thread, default_);
  EXPECT_EQ(default_device()->description().id(), default_);
  EXPECT_EQ(current_device()->description().id(), default_);
  // select_backend moves the default, and the calling thread follows it even after it had
  // selected its own device; a thread with its own selection keeps it.
  select_thread_device(default_);
  std::atomic<int> step{0};
  std::string kept;
  std::thread holder([&] {
    DeviceGuard guard(default_);
    step = 1;
    while (step.load() < 2) {
    }
    kept = current_device()->description().id();
  });
  while (step.load() < 1) {
  }
  select_backend(other);
  step = 2;
  holder.join();
  EXPECT_EQ(current_device()->description().id(), other);
  EXPECT_EQ(default_device()->description().id(), other);
  EXPECT_EQ(kept, default_);
}

// Memory stays on its device: its device side from a thread on another device, and any
// operation between blobs of two devices, is an Error naming both; the host side is fine.
TEST_F(ThreadDevice, CrossDeviceUseIsAClearError) {
  const std::string a = devices_[0], b = devices_[1];
  std::unique_ptr<Blob<float>> on_a, on_b;
  {
    DeviceGuard guard(a);
    on_a = std::make_unique<Blob<float>>(1, 1, 2, 3);
    for (int i = 0; i < 6; ++i) on_a->mutable_cpu_data()[i] = static_cast<float>(i);
    on_a->mutable_gpu_data();
  }
  {
    DeviceGuard guard(b);
    on_b = std::make_unique<Blob<float>>(1, 1, 2, 3);
    on_b->mutable_cpu_data()[0] = 1;
    const std::string touched = message_of([&] { on_a->mutable_gpu_data(); });
    EXPECT_CONTAINS(touched, "bound to device " + a);
    EXPECT_CONTAINS(touched, "this thread's current device is " + b);
    EXPECT_CONTAINS(touched, "DeviceGuard guard(\"" + a + "\")");
    const std::string copied = message_of([&] { on_b->CopyFrom(*on_a); });
    EXPECT_CONTAINS(copied, "CopyFrom: the source is on device " + a + " and this Blob on device " + b);
    EXPECT_CONTAINS(copied, "between blobs of two devices");
  }
  // From a thread on a, the same copy is refused the same way (not only by check_device).
  {
    DeviceGuard guard(a);
    const std::string copied = message_of([&] { on_b->CopyFrom(*on_a); });
    EXPECT_CONTAINS(copied, "CopyFrom: the source is on device " + a + " and this Blob on device " + b);
    on_b->ShareDiff(*on_a);  // allowed: sharing moves nothing
    const std::string updated = message_of([&] { on_b->Update(); });
    EXPECT_CONTAINS(updated, "Update: its data is on device " + b + " and its diff on device " + a);
  }
  // The host side of a's memory reads anywhere, and a thread on a can use it all.
  EXPECT_EQ(on_a->cpu_data()[5], 5.0f);
  std::thread([&] {
    DeviceGuard guard(a);
    on_a->scale_data(2.0f);
  }).join();
  EXPECT_EQ(on_a->cpu_data()[5], 10.0f);
}

// Caffe::Get() is per thread, and so is the device Caffe::SetDevice selects.
TEST_F(ThreadDevice, CaffeSetDeviceIsPerThread) {
  const std::string other = devices_[0] == default_ ? devices_[1] : devices_[0];
  std::string in_thread;
  caffe::Caffe* thread_context = nullptr;
  std::thread([&] {
    DeviceGuard guard(other);  // the backend whose device 0 SetDevice(0) names
    caffe::Caffe::SetDevice(0);
    in_thread = blobrt::current_device_id();
    thread_context = &caffe::Caffe::Get();
  }).join();
  EXPECT_EQ(in_thread, other.substr(0, other.find(':')) + ":0");
  EXPECT_NE(thread_context, &caffe::Caffe::Get());
  EXPECT_EQ(blobrt::current_device_id(), default_);
}

}  // namespace
}  // namespace blobrt
