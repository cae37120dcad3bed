// framework/block_cache.h — a cache of released memory blocks, kept on a free list per rounded size,
// shared by the CPU and CUDA backends' allocators: a training loop's repeated shapes stop reaching
// the system allocator (aligned_alloc, cudaMalloc) after the first step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

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
  // Requests are rounded up to a multiple of `small_step` below 1 MiB and of `large_step` above, so
  // that nearby sizes share a free list. At most `cache_limit` bytes are kept cached; a block that
  // would go past it is given back to the system at once.
  BlockCache(Source source, size_t small_step, size_t large_step, size_t cache_limit);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // A block of at least `nbytes`: a cached one of the same rounded size, else a new one from the
  // system; when the system is out of memory, the cache is given back and the system asked once
  // more. Returns nullptr if that fails too (the caller names the device and throws).
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
  std::unordered_map<size_t, std::vector<void*>> free_;  // rounded size -> cached blocks
  std::unordered_map<void*, size_t> live_;               // handed-out block -> rounded size
  MemoryUse use_;
};

}  // namespace qkv
