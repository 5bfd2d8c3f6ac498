// The lock every Python Blob operation holds, so that Python threads sharing a Blob get an
// exception or a consistent result, never freed memory: asum_data() runs with the GIL
// released while another thread's reshape() may replace the memory it reads.
//
// Exclusive, not shared/exclusive: SyncedMemory moves its head on reads too (asum_data on a
// device copies the data there first), and it has no lock of its own.
//
// One lock per group of Blobs that may reach the same SyncedMemory: share_data/share_diff
// merge the two Blobs' groups for good (a union-find whose root holds the mutex), so a Blob
// and the one it shares memory with never run at the same time.
//
// The GIL rule that keeps this free of deadlocks: nobody waits for a Blob lock while holding
// the GIL. Operations that release the GIL take the lock after releasing it and give it back
// before taking the GIL again; operations that need the GIL (making NumPy arrays) try the
// lock and, if it is taken, release the GIL while they wait.
#ifndef BLOBRT_PYTHON_BLOB_LOCK_HPP
#define BLOBRT_PYTHON_BLOB_LOCK_HPP

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>

#include <nanobind/nanobind.h>

namespace blobrt::python {

class LockGroup {
 public:
  struct Node : std::enable_shared_from_this<Node> {
    std::mutex mutex;
    // Set once, by merge() under this node's mutex; keep_parent is written first and keeps
    // the parent alive as long as this node is.
    std::atomic<Node*> parent{nullptr};
    std::shared_ptr<Node> keep_parent;
  };

  LockGroup() : node_(std::make_shared<Node>()) {}

  Node* root() const {
    Node* n = node_.get();
    while (Node* p = n->parent.load(std::memory_order_acquire)) n = p;
    return n;
  }

  // Makes a's group and b's group one. The caller holds both roots (a BlobGuard over a and b).
  static void merge(const LockGroup& a, const LockGroup& b) {
    Node* ra = a.root();
    Node* rb = b.root();
    if (ra == rb) return;
    ra->keep_parent = rb->shared_from_this();
    ra->parent.store(rb, std::memory_order_release);
  }

 private:
  std::shared_ptr<Node> node_;
};

// Holds the lock of one Blob's group, or of two Blobs' groups (copy_from, share_data).
class BlobGuard {
 public:
  using Node = LockGroup::Node;

  // gil_held: whether the calling thread holds the GIL now (see the rule above).
  BlobGuard(const LockGroup& a, const LockGroup* b, bool gil_held) {
    for (;;) {
      Node* ra = a.root();
      Node* rb = b ? b->root() : ra;
      Node* first = ra < rb ? ra : rb;  // a fixed order between two locks: no lock-order deadlock
      Node* second = ra == rb ? nullptr : (ra < rb ? rb : ra);
      lock_pair(first, second, gil_held);
      // A merge while waiting makes a root a child: the lock to hold is then another one.
      if (a.root() == ra && (!b || b->root() == rb)) {
        locked_[0] = first;
        locked_[1] = second;
        return;
      }
      if (second) second->mutex.unlock();
      first->mutex.unlock();
    }
  }
  explicit BlobGuard(const LockGroup& a, bool gil_held) : BlobGuard(a, nullptr, gil_held) {}
  BlobGuard(const BlobGuard&) = delete;
  BlobGuard& operator=(const BlobGuard&) = delete;
  ~BlobGuard() {
    if (locked_[1]) locked_[1]->mutex.unlock();
    locked_[0]->mutex.unlock();
  }

 private:
  static void lock_pair(Node* first, Node* second, bool gil_held) {
    if (gil_held) {
      if (first->mutex.try_lock()) {
        if (!second || second->mutex.try_lock()) return;
        first->mutex.unlock();
      }
      nanobind::gil_scoped_release release;  // wait without the GIL; take it back holding the lock
      first->mutex.lock();
      if (second) second->mutex.lock();
      return;
    }
    first->mutex.lock();
    if (second) second->mutex.lock();
  }

  Node* locked_[2] = {nullptr, nullptr};
};

}  // namespace blobrt::python

#endif  // BLOBRT_PYTHON_BLOB_LOCK_HPP
