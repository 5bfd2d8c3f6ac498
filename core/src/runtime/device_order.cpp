#include "device_order.hpp"

#include <algorithm>
#include <tuple>

#include "diagnostics.hpp"
#include "selection.hpp"

namespace blobrt {
namespace {

// The name a skip gives a plugin: a manifest that could not be read has none, so its path.
std::string skip_name(const PluginReport& p) { return p.name.empty() ? p.manifest : p.name; }

// The plugin's first GPU/accelerator device, -1 when all are CPUs.
int first_accelerator(const PluginReport& p) {
  for (const DeviceDescription& d : p.devices) {
    if (d.kind != DeviceKind::kCpu) return d.index;
  }
  return -1;
}

}  // namespace

AutoOrder auto_order(const Inventory& inventory) {
  AutoOrder order;
  for (const PluginReport& p : inventory.plugins) {
    if (!p.usable) {
      order.unusable.push_back({{skip_name(p), "", skip_code(p.status), p.reason}, p.accelerator});
      continue;
    }
    const int accelerator = first_accelerator(p);
    AutoCandidate c;
    c.backend = p.name;
    c.index = accelerator >= 0 ? accelerator : 0;
    c.priority = p.priority;
    c.has_accelerator = accelerator >= 0;
    c.drives_accelerator = c.has_accelerator || p.accelerator;
    c.why = auto_rank(c.priority, c.has_accelerator);
    order.candidates.push_back(std::move(c));
  }
  std::stable_sort(order.candidates.begin(), order.candidates.end(), [](const AutoCandidate& a, const AutoCandidate& b) {
    return std::make_tuple(a.has_accelerator, a.priority) > std::make_tuple(b.has_accelerator, b.priority);
  });
  return order;
}

std::vector<Candidate> host_math_order(const Inventory& inventory) {
  std::vector<Candidate> order;
  for (const PluginReport& p : inventory.plugins) {
    if (!p.usable) continue;
    for (const DeviceDescription& d : p.devices) {
      if (d.memory_model == MemoryModel::kShared) order.push_back({p.name, d.index, p.priority});
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Candidate& a, const Candidate& b) { return a.priority > b.priority; });
  return order;
}

std::vector<SelectionSkip> passed_over_by_name(const Inventory& inventory, const std::string& name,
                                               const std::string& reason) {
  std::vector<SelectionSkip> skipped;
  if (name != "host") skipped.push_back({"host", "", SkipCode::kNotNamed, reason});
  for (const PluginReport& p : inventory.plugins) {
    if (p.name != name) {
      skipped.push_back({skip_name(p), "", SkipCode::kNotNamed, reason});
    } else if (!p.usable) {
      skipped.push_back({skip_name(p), "", skip_code(p.status), p.reason});
    }
  }
  return skipped;
}

}  // namespace blobrt
