// The orders in which the runtime tries devices, as pure functions of the inventory: no
// plugin is loaded and no device opened here, so the rules are unit-tested on inventories
// made up in the test (tests/core/runtime/device_order_test.cpp). runtime.cpp opens the candidates
// in these orders and records what happened (docs/architecture.md, "Selection").
#ifndef BLOBRT_DEVICE_ORDER_HPP
#define BLOBRT_DEVICE_ORDER_HPP

#include <string>
#include <vector>

#include "blobrt/plugin_report.hpp"
#include "blobrt/runtime.hpp"  // SelectionSkip

namespace blobrt {

// One plugin device to try.
struct Candidate {
  std::string backend;  // the plugin's name
  int index = 0;        // the device's index in the plugin
  int priority = 0;     // the manifest's priority
  std::string id() const { return backend + ":" + std::to_string(index); }
};

// One device auto would open.
struct AutoCandidate : Candidate {
  bool has_accelerator = false;     // the device is a GPU/accelerator
  bool drives_accelerator = false;  // that, or the manifest says `accelerator = yes`: auto
                                    // warns if it cannot open it
  std::string why;                  // where it ranks: "priority 200, has an accelerator"
};

// A plugin auto cannot consider: its verdict was not usable.
struct AutoUnusable {
  SelectionSkip skip;               // the verdict's own code and reason
  bool drives_accelerator = false;  // the manifest says `accelerator = yes`
};

struct AutoOrder {
  std::vector<AutoUnusable> unusable;     // in search order
  std::vector<AutoCandidate> candidates;  // best first; auto takes the first that opens
};

// auto's rules. Every usable plugin is a candidate on its first GPU/accelerator device, else
// on device 0; those with such a device come first, then by manifest priority, ties in search
// order. The built-in host device is not listed: auto takes it only when no candidate opens.
AutoOrder auto_order(const Inventory& inventory);

// host_math_device()'s rules: every device of a usable plugin whose handles are host
// pointers (MemoryModel::kShared), by manifest priority, ties in search then device order.
// The built-in host device is not listed: it is taken when none of these opens.
std::vector<Candidate> host_math_order(const Inventory& inventory);

// A selection that named backend `name` (a plugin, or "host") passes over every other: the
// built-in host unless it was named, each plugin of another name with `reason`; a plugin of
// that name that is not usable (a shadowed one) keeps its own verdict's code and reason.
std::vector<SelectionSkip> passed_over_by_name(const Inventory& inventory, const std::string& name,
                                               const std::string& reason);

}  // namespace blobrt

#endif
