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
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_locked();
}

size_t BlockCache::rounded(size_t nbytes) const {
  const size_t step = nbytes < (size_t{1} << 20) ? small_step_ : large_step_;
  return (std::max<size_t>(nbytes, 1) + step - 1) / step * step;
}

void* BlockCache::allocate(size_t nbytes) {
  const size_t size = rounded(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  void* p = nullptr;
  auto bucket = free_.find(size);
  if (bucket != free_.end() && !bucket->second.empty()) {
    p = bucket->second.back();
    bucket->second.pop_back();
    use_.cached -= static_cast<int64_t>(size);
  } else {
    p = source_.allocate(size);
    if (!p) {  // give the cache back and try once more
      release_cached_locked();
      p = source_.allocate(size);
    }
    if (!p) return nullptr;
    ++use_.system_allocations;
  }
  live_[p] = size;
  use_.current += static_cast<int64_t>(size);
  use_.peak = std::max(use_.peak, use_.current);
  return p;
}

void BlockCache::release(void* p) {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = live_.find(p);
  if (found == live_.end()) return;
  const size_t size = found->second;
  live_.erase(found);
  use_.current -= static_cast<int64_t>(size);
  if (static_cast<size_t>(use_.cached) + size > cache_limit_) {
    source_.free(p);
    return;
  }
  free_[size].push_back(p);
  use_.cached += static_cast<int64_t>(size);
}

void BlockCache::release_cached() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_locked();
}

void BlockCache::release_cached_locked() {
  for (auto& [size, blocks] : free_)
    for (void* p : blocks) source_.free(p);
  free_.clear();
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
