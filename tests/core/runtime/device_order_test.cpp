// The orders the runtime tries devices in (core/src/runtime/device_order.hpp), on
// inventories written here: no plugin is discovered or loaded and no device opened, so
// each rule is checked on the case that exercises it, whatever this machine has.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device_order.hpp"

namespace blobrt {
namespace {

DeviceDescription device(int index, DeviceKind kind, MemoryModel memory = MemoryModel::kSeparate) {
  DeviceDescription d;
  d.index = index;
  d.kind = kind;
  d.memory_model = memory;
  return d;
}

PluginReport usable(const std::string& name, int priority, std::vector<DeviceDescription> devices) {
  PluginReport p;
  p.name = name;
  p.manifest = "/plugins/" + name + ".plugin";
  p.priority = priority;
  p.usable = true;
  p.status = PluginStatus::kUsable;
  for (DeviceDescription& d : devices) d.backend = name;
  p.devices = std::move(devices);
  return p;
}

PluginReport unusable(const std::string& name, PluginStatus status, const std::string& reason,
                      bool accelerator = false) {
  PluginReport p;
  p.name = name;
  p.manifest = "/plugins/" + (name.empty() ? std::string("unreadable") : name) + ".plugin";
  p.status = status;
  p.reason = reason;
  p.accelerator = accelerator;
  return p;
}

std::vector<std::string> ids(const std::vector<AutoCandidate>& candidates) {
  std::vector<std::string> out;
  for (const AutoCandidate& c : candidates) out.push_back(c.id());
  return out;
}

TEST(AutoOrderTest, EmptyInventoryHasNoCandidates) {
  const AutoOrder order = auto_order(Inventory{});
  EXPECT_TRUE(order.candidates.empty());
  EXPECT_TRUE(order.unusable.empty());
}

// A plugin with a GPU/accelerator device outranks any CPU-only one, whatever the priority.
TEST(AutoOrderTest, AcceleratorFirstThenPriority) {
  Inventory inv;
  inv.plugins = {usable("blis", 200, {device(0, DeviceKind::kCpu, MemoryModel::kShared)}),
                 usable("opencl", 100, {device(0, DeviceKind::kCpu), device(1, DeviceKind::kGpu)}),
                 usable("lowcpu", 10, {device(0, DeviceKind::kCpu)}),
                 usable("simgpu", 50, {device(0, DeviceKind::kAccelerator)})};
  const AutoOrder order = auto_order(inv);
  EXPECT_EQ(ids(order.candidates), (std::vector<std::string>{"opencl:1", "simgpu:0", "blis:0", "lowcpu:0"}));
  ASSERT_EQ(order.candidates.size(), 4u);
  EXPECT_EQ(order.candidates[0].why, "priority 100, has an accelerator");
  EXPECT_TRUE(order.candidates[0].has_accelerator);
  EXPECT_EQ(order.candidates[2].why, "priority 200");
  EXPECT_FALSE(order.candidates[2].has_accelerator);
  EXPECT_EQ(order.candidates[2].priority, 200);
  EXPECT_TRUE(order.unusable.empty());
}

// Auto opens a plugin's first GPU/accelerator device, not its device 0.
TEST(AutoOrderTest, CandidateIsTheFirstAcceleratorDevice) {
  Inventory inv;
  inv.plugins = {usable("mixed", 5, {device(0, DeviceKind::kCpu), device(1, DeviceKind::kCpu),
                                     device(2, DeviceKind::kAccelerator), device(3, DeviceKind::kGpu)})};
  const AutoOrder order = auto_order(inv);
  ASSERT_EQ(order.candidates.size(), 1u);
  EXPECT_EQ(order.candidates[0].index, 2);
  EXPECT_EQ(order.candidates[0].id(), "mixed:2");
}

// Equal rank keeps the search order: the first directory's plugin wins a tie.
TEST(AutoOrderTest, TiesKeepSearchOrder) {
  Inventory inv;
  inv.plugins = {usable("zeta", 100, {device(0, DeviceKind::kCpu)}),
                 usable("alpha", 100, {device(0, DeviceKind::kCpu)}),
                 usable("mid", 100, {device(0, DeviceKind::kCpu)})};
  EXPECT_EQ(ids(auto_order(inv).candidates), (std::vector<std::string>{"zeta:0", "alpha:0", "mid:0"}));
}

// Unusable plugins are never candidates; each is listed in search order with its own verdict's
// code and reason, under its manifest's path when it has no name.
TEST(AutoOrderTest, UnusablePluginsKeepTheirVerdict) {
  Inventory inv;
  inv.plugins = {unusable("cuda", PluginStatus::kNoDevice, "0 devices: no driver", true),
                 usable("blis", 200, {device(0, DeviceKind::kCpu)}),
                 unusable("", PluginStatus::kInvalidManifest, "invalid manifest: missing 'abi'"),
                 unusable("old", PluginStatus::kShadowed, "shadowed by /a/old.plugin")};
  const AutoOrder order = auto_order(inv);
  EXPECT_EQ(ids(order.candidates), (std::vector<std::string>{"blis:0"}));
  ASSERT_EQ(order.unusable.size(), 3u);
  EXPECT_EQ(order.unusable[0].skip.backend, "cuda");
  EXPECT_EQ(order.unusable[0].skip.code, SkipCode::kNoDevice);
  EXPECT_EQ(order.unusable[0].skip.reason, "0 devices: no driver");
  EXPECT_EQ(order.unusable[0].skip.device, "");
  EXPECT_TRUE(order.unusable[0].drives_accelerator);
  EXPECT_EQ(order.unusable[1].skip.backend, "/plugins/unreadable.plugin");
  EXPECT_EQ(order.unusable[1].skip.code, SkipCode::kInvalidManifest);
  EXPECT_FALSE(order.unusable[1].drives_accelerator);
  EXPECT_EQ(order.unusable[2].skip.code, SkipCode::kShadowed);
}

// What auto warns about if it cannot take a candidate: an accelerator device, or a plugin
// whose manifest says `accelerator = yes` even when all its devices are CPUs.
TEST(AutoOrderTest, DrivesAcceleratorFromDevicesOrManifest) {
  PluginReport declared = usable("declared", 1, {device(0, DeviceKind::kCpu)});
  declared.accelerator = true;
  Inventory inv;
  inv.plugins = {usable("gpu", 1, {device(0, DeviceKind::kGpu)}), declared,
                 usable("cpu", 1, {device(0, DeviceKind::kCpu)})};
  const AutoOrder order = auto_order(inv);
  ASSERT_EQ(ids(order.candidates), (std::vector<std::string>{"gpu:0", "declared:0", "cpu:0"}));
  EXPECT_TRUE(order.candidates[0].drives_accelerator);
  EXPECT_TRUE(order.candidates[1].drives_accelerator);
  EXPECT_FALSE(order.candidates[1].has_accelerator);  // it ranks as a CPU plugin
  EXPECT_FALSE(order.candidates[2].drives_accelerator);
}

TEST(HostMathOrderTest, SharedMemoryDevicesByPriority) {
  Inventory inv;
  inv.plugins = {usable("opencl", 300, {device(0, DeviceKind::kCpu, MemoryModel::kAliased)}),
                 usable("blis", 200, {device(0, DeviceKind::kCpu, MemoryModel::kShared)}),
                 usable("kit", 250, {device(0, DeviceKind::kCpu, MemoryModel::kShared),
                                     device(1, DeviceKind::kGpu, MemoryModel::kSeparate),
                                     device(2, DeviceKind::kCpu, MemoryModel::kShared)}),
                 unusable("gone", PluginStatus::kNotLoadable, "missing dependency libx.so")};
  std::vector<std::string> order;
  for (const Candidate& c : host_math_order(inv)) order.push_back(c.id() + " " + std::to_string(c.priority));
  EXPECT_EQ(order, (std::vector<std::string>{"kit:0 250", "kit:2 250", "blis:0 200"}));
}

TEST(HostMathOrderTest, NoSharedMemoryDeviceMeansNoCandidate) {
  Inventory inv;
  inv.plugins = {usable("cuda", 400, {device(0, DeviceKind::kGpu)})};
  EXPECT_TRUE(host_math_order(inv).empty());
}

TEST(PassedOverByNameTest, EveryOtherBackendIsNotNamed) {
  Inventory inv;
  inv.plugins = {usable("blis", 200, {device(0, DeviceKind::kCpu)}),
                 usable("opencl", 100, {device(0, DeviceKind::kCpu)}),
                 unusable("blis", PluginStatus::kShadowed, "shadowed by /plugins/blis.plugin")};
  const std::vector<SelectionSkip> skipped = passed_over_by_name(inv, "blis", "BLOBRT_BACKEND named blis");
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_EQ(skipped[0].backend, "host");
  EXPECT_EQ(skipped[0].code, SkipCode::kNotNamed);
  EXPECT_EQ(skipped[0].reason, "BLOBRT_BACKEND named blis");
  EXPECT_EQ(skipped[1].backend, "opencl");
  EXPECT_EQ(skipped[1].code, SkipCode::kNotNamed);
  // The shadowed plugin of the same name keeps its own code.
  EXPECT_EQ(skipped[2].backend, "blis");
  EXPECT_EQ(skipped[2].code, SkipCode::kShadowed);
  EXPECT_EQ(skipped[2].reason, "shadowed by /plugins/blis.plugin");
}

TEST(PassedOverByNameTest, NamingTheHostPassesOverEveryPlugin) {
  Inventory inv;
  inv.plugins = {usable("blis", 200, {device(0, DeviceKind::kCpu)})};
  const std::vector<SelectionSkip> skipped = passed_over_by_name(inv, "host", "select_backend named host");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].backend, "blis");
  EXPECT_EQ(skipped[0].code, SkipCode::kNotNamed);
}

}  // namespace
}  // namespace blobrt
