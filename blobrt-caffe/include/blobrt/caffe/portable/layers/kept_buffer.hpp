// Device memory a layer's GPU methods keep from the forward to its backward where the layer
// has no member of the element type for it (Dropout's 0/1 mask beside its unsigned one,
// Eltwise MAX's mask beside its int one): one buffer per owner, a member SyncedMemory of the
// layer (the blob's data()), living as long as that memory does.
#ifndef BLOBRT_CAFFE_PORTABLE_LAYERS_KEPT_BUFFER_HPP
#define BLOBRT_CAFFE_PORTABLE_LAYERS_KEPT_BUFFER_HPP

#include <cstddef>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

#include <blobrt/syncedmem.hpp>

namespace blobrt_caffe_portable::layers {

// The buffer kept for `owner`, `bytes` long: made (or remade at another size) where `make`,
// else null where there is none of that size (or no owner). An entry ends with its owner (the
// layer, or a reshape that reallocated the blob): entries whose owner is gone are dropped at
// every call. The buffer is used after the lock is released: one layer's methods never run
// on two threads at once (Caffe runs a net on one thread; each solver thread has its own).
inline blobrt::SyncedMemory* kept_buffer(const std::shared_ptr<blobrt::SyncedMemory>& owner, std::size_t bytes,
                                         bool make) {
  struct Entry {
    std::weak_ptr<blobrt::SyncedMemory> owner;
    std::unique_ptr<blobrt::SyncedMemory> buffer;
  };
  static std::mutex mutex;
  static std::map<const blobrt::SyncedMemory*, Entry> entries;
  if (!owner) return nullptr;  // a blob never shaped: nothing to keep beside
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = entries.begin(); it != entries.end();) {
    it = it->second.owner.expired() ? entries.erase(it) : std::next(it);
  }
  auto found = entries.find(owner.get());
  if (found != entries.end() && found->second.owner.lock() != owner) {
    entries.erase(found);  // a freed owner's address, reused by a memory made since
    found = entries.end();
  }
  if (found != entries.end() && found->second.buffer->size() == bytes) return found->second.buffer.get();
  if (!make) return nullptr;
  Entry& entry = entries[owner.get()];
  entry.owner = owner;
  entry.buffer = std::make_unique<blobrt::SyncedMemory>(bytes);
  return entry.buffer.get();
}

}  // namespace blobrt_caffe_portable::layers

#endif  // BLOBRT_CAFFE_PORTABLE_LAYERS_KEPT_BUFFER_HPP
