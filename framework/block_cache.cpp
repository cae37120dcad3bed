// framework/block_cache.cpp — the released-block cache behind the CPU and CUDA allocators
// (block_cache.h).
#include "framework/block_cache.h"

#include <algorithm>
#include <utility>

namespace qkv {

BlockCache::BlockCache(Source source, size_t small_step, size_t large_step, size_t cache_limit)
    : source_(std::move(source)), small_step_(small_step), large_step_(large_step), cache_limit_(cache_limit) {
  live_.reserve(1024);
}

BlockCache::~BlockCache() {
  // Live blocks belong to tensors that may outlive this (static) cache; only the cached ones go.
  release_cached();
}

size_t BlockCache::rounded(size_t nbytes) const {
  const size_t step = nbytes < (size_t{1} << 20) ? small_step_ : large_step_;
  return (std::max<size_t>(nbytes, 1) + step - 1) / step * step;
}

void* BlockCache::allocate(size_t nbytes) {
  const size_t size = rounded(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  void* p = nullptr;
  size_t block = size;
  auto fit = free_.lower_bound(size);
  if (fit != free_.end() && fit->first / 2 <= size) {
    fit = std::prev(free_.upper_bound(fit->first));  // of that size, the block released last
    block = fit->first;
    p = fit->second.ptr;
    aged_.erase(fit->second.released);
    free_.erase(fit);
    use_.cached -= static_cast<int64_t>(block);
  } else {
    p = source_.allocate(size);
    if (!p) {  // give the cache back and try once more
      release_cached_locked();
      p = source_.allocate(size);
    }
    if (!p) return nullptr;
    ++use_.system_allocations;
  }
  live_[p] = Block{block, size};
  held_ += block;
  held_peak_ = std::max(held_peak_, held_);
  use_.current += static_cast<int64_t>(size);
  use_.peak = std::max(use_.peak, use_.current);
  return p;
}

void BlockCache::release(void* p) {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = live_.find(p);
  if (found == live_.end()) return;
  const Block block = found->second;
  live_.erase(found);
  use_.current -= static_cast<int64_t>(block.used);
  held_ -= block.size;
  const size_t limit = std::min(cache_limit_, 2 * held_peak_);
  if (block.size > limit) {
    source_.free(p);
    return;
  }
  // Make room by giving back the blocks cached longest ago: blocks of an earlier phase (another
  // model, another batch shape) make way for the ones in use now.
  while (static_cast<size_t>(use_.cached) + block.size > limit && !aged_.empty()) {
    const FreeList::iterator oldest = aged_.begin()->second;
    source_.free(oldest->second.ptr);
    use_.cached -= static_cast<int64_t>(oldest->first);
    aged_.erase(aged_.begin());
    free_.erase(oldest);
  }
  const uint64_t now = ++releases_;
  aged_.emplace(now, free_.emplace(block.size, Cached{p, now}));
  use_.cached += static_cast<int64_t>(block.size);
}

void BlockCache::release_cached() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_locked();
}

void BlockCache::release_cached_locked() {
  for (auto& [size, cached] : free_) source_.free(cached.ptr);
  free_.clear();
  aged_.clear();
  use_.cached = 0;
}

MemoryUse BlockCache::use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return use_;
}

void BlockCache::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  use_.peak = use_.current;
}

}  // namespace qkv
