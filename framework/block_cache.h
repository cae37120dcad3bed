// framework/block_cache.h — a cache of released memory blocks, kept on a free list per rounded size,
// shared by the CPU and CUDA backends' allocators: a training loop's repeated shapes stop reaching
// the system allocator (aligned_alloc, cudaMalloc) after the first step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

namespace qkv {

// Bytes of tensor storage an allocator has handed out, the most since the last reset, what it
// keeps cached for reuse, and how many times it has asked the system for memory.
struct MemoryUse {
  int64_t current = 0, peak = 0, cached = 0, system_allocations = 0;
};

class BlockCache {
 public:
  struct Source {
    std::function<void*(size_t)> allocate;  // nullptr when the system is out of memory
    std::function<void(void*)> free;
  };
  // Requests are rounded up to a multiple of `small_step` below 1 MiB and of `large_step` above. A
  // request takes the smallest cached block of its rounded size up to twice that (so that batches
  // of varying length share blocks instead of each length caching its own). The cache keeps at most
  // `cache_limit` bytes, and never more than twice the most it has ever had handed out at once (a
  // step's working set). Twice, not once: a repeat of a step asks for the same sizes in the same
  // order, but a block taken by a smaller request (up to half its size) leaves its own size short,
  // so the blocks that serve a step sum to more than its peak; with the limit at once the peak, a
  // 64-row toy training step gave back and asked the system again for 10 blocks every step. To stay
  // within them, a release gives back the blocks cached longest ago (or the released block itself,
  // if it alone is too big).
  BlockCache(Source source, size_t small_step, size_t large_step, size_t cache_limit);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // A block of at least `nbytes`: the smallest cached one that fits (up to twice the rounded size),
  // else a new one from the system; when the system is out of memory, the cache is given back and
  // the system asked once more. Returns nullptr if that fails too (the caller names the device and
  // throws). MemoryUse counts the rounded request, not the size of the block that serves it.
  void* allocate(size_t nbytes);
  // Back to the cache (or to the system past the limit). Null and unknown pointers are ignored:
  // this runs on destructor paths and never throws.
  void release(void* p);
  // Every cached block back to the system.
  void release_cached();

  MemoryUse use() const;
  void reset_peak();  // peak = current
  size_t rounded(size_t nbytes) const;

 private:
  void release_cached_locked();

  Source source_;
  size_t small_step_, large_step_, cache_limit_;
  mutable std::mutex mutex_;
  struct Block {
    size_t size, used;  // the block's size; the rounded request it serves
  };
  struct Cached {
    void* ptr;
    uint64_t released;  // when it was cached (a count of releases): the oldest is given back first
  };
  using FreeList = std::multimap<size_t, Cached>;
  FreeList free_;                                // block size -> cached blocks
  std::map<uint64_t, FreeList::iterator> aged_;  // the same blocks by `released`, oldest first
  std::unordered_map<void*, Block> live_;        // handed-out blocks
  MemoryUse use_;
  size_t held_ = 0, held_peak_ = 0;  // block bytes handed out now, and the most ever (never reset)
  uint64_t releases_ = 0;
};

}  // namespace qkv
