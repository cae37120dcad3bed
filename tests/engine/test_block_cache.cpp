// tests/engine/test_block_cache.cpp — the released-block cache behind the CPU and CUDA allocators: reuse by
// rounded size (the block released last first), its limit, giving the cache back when the system is out of memory, and the counts;
// the CPU blocks' alignment (2 MiB for huge pages from 2 MiB up).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <vector>

#include "framework/backend.h"
#include "framework/block_cache.h"
#include "framework/tensor.h"

using namespace qkv;

namespace {
// A system allocator that counts, and can be told to fail the next `fail` calls.
struct CountingSource {
  int allocations = 0, frees = 0, fail = 0;
  std::set<void*> outstanding;
  BlockCache::Source source() {
    return {[this](size_t bytes) -> void* {
              if (fail > 0) {
                --fail;
                return nullptr;
              }
              ++allocations;
              void* p = std::malloc(bytes);
              outstanding.insert(p);
              return p;
            },
            [this](void* p) {
              ++frees;
              outstanding.erase(p);
              std::free(p);
            }};
  }
};

// The cache most cases use (blocks of 512 bytes to 4 KiB, at most 1 MiB kept) over a counting source.
struct SmallCache {
  CountingSource system;
  BlockCache cache{system.source(), 512, 4096, 1 << 20};
};
}  // namespace

TEST_SUITE("block cache") {
TEST_CASE_FIXTURE(SmallCache, "a released block is reused for a request of the same rounded size") {
  CHECK(cache.rounded(1) == 512);
  CHECK(cache.rounded(512) == 512);
  CHECK(cache.rounded(513) == 1024);
  CHECK(cache.rounded((1 << 20) + 1) == (1 << 20) + 4096);
  void* a = cache.allocate(100);
  void* b = cache.allocate(3000);
  CHECK(system.allocations == 2);
  CHECK(cache.use().current == 512 + 3072);
  cache.release(a);
  cache.release(b);
  CHECK(cache.use().current == 0);
  CHECK(cache.use().cached == 512 + 3072);
  CHECK(cache.allocate(400) == a);   // same rounded size (512)
  CHECK(cache.allocate(2600) == b);  // 3072
  CHECK(system.allocations == 2);
  void* c = cache.allocate(5000);  // a new size goes to the system
  CHECK(system.allocations == 3);
  CHECK(cache.use().system_allocations == 3);
  CHECK(cache.use().peak == 512 + 3072 + 5120);
  cache.reset_peak();
  CHECK(cache.use().peak == cache.use().current);
  for (void* p : {a, b, c}) cache.release(p);
  cache.release(nullptr);
  int unknown = 0;
  cache.release(&unknown);  // not the cache's: ignored
  cache.release_cached();
  CHECK(system.frees == 3);
  CHECK(system.outstanding.empty());
}

TEST_CASE_FIXTURE(SmallCache,
                  "of the cached blocks of one size, the one released last comes back first (still warm in cache)") {
  void* a = cache.allocate(2048);
  void* b = cache.allocate(2048);
  void* c = cache.allocate(2048);
  cache.release(a);
  cache.release(c);
  cache.release(b);
  CHECK(cache.allocate(2048) == b);
  CHECK(cache.allocate(2048) == c);
  CHECK(cache.allocate(2048) == a);
  CHECK(system.allocations == 3);
  for (void* p : {a, b, c}) cache.release(p);
  cache.release_cached();
  CHECK(system.outstanding.empty());
}

TEST_CASE_FIXTURE(SmallCache, "a smaller request takes the smallest cached block up to twice its size") {
  void* big = cache.allocate(3072);
  void* small = cache.allocate(1024);
  cache.release(big);
  cache.release(small);
  CHECK(cache.allocate(600) == small);        // 1024 fits 1024 (the smallest that fits)
  CHECK(cache.allocate(2048) == big);         // 3072 is within twice 2048
  CHECK(cache.use().current == 1024 + 2048);  // what was asked for (rounded), not the block sizes
  cache.release(big);
  void* other = cache.allocate(1024);  // 3072 is more than twice 1024: a new block
  CHECK(other != big);
  CHECK(system.allocations == 3);
  for (void* p : {small, other}) cache.release(p);
  CHECK(cache.use().current == 0);
  // within twice 4096 (3072 + 1024, the most handed out at once): all three blocks stay cached
  CHECK(cache.use().cached == 3072 + 1024 + 1024);
  CHECK(system.frees == 0);
  cache.release_cached();
  CHECK(system.outstanding.empty());
}

TEST_CASE("past its limit the cache gives back the blocks cached longest ago") {
  CountingSource system;
  BlockCache cache(system.source(), 512, 4096, 1024);
  void* a = cache.allocate(512);
  void* b = cache.allocate(512);
  void* c = cache.allocate(512);
  cache.release(a);
  cache.release(b);
  CHECK(system.frees == 0);
  cache.release(c);  // 1536 cached would pass 1024: the oldest (a) goes back
  CHECK(system.frees == 1);
  CHECK(cache.use().cached == 1024);
  CHECK(system.outstanding.count(a) == 0);
  cache.release_cached();
  CHECK(system.outstanding.empty());
}

TEST_CASE_FIXTURE(SmallCache, "the cache keeps no more than twice what was ever handed out at once") {
  std::vector<void*> four;
  for (int i = 0; i < 4; ++i) four.push_back(cache.allocate(1024));  // the most at once: 4096
  for (void* p : four) cache.release(p);
  cache.release(cache.allocate(2048));  // no cached block fits: a new one; 6144 cached
  CHECK(cache.use().cached == 6144);
  CHECK(system.frees == 0);
  void* last = cache.allocate(3072);  // a new one again
  cache.release(last);                // 6144 + 3072 would pass 8192: the oldest 1024 block goes back
  CHECK(system.frees == 1);
  CHECK(cache.use().cached == 8192);
  CHECK(system.outstanding.count(four[0]) == 0);
  CHECK(system.outstanding.count(last) == 1);
  cache.release_cached();
  CHECK(system.outstanding.empty());
}

TEST_CASE_FIXTURE(SmallCache, "out of memory: the cache is given back and the system asked once more") {
  cache.release(cache.allocate(512));
  CHECK(cache.use().cached == 512);
  system.fail = 1;
  void* p = cache.allocate(2048);  // first try fails, cache freed, second try succeeds
  CHECK(p != nullptr);
  CHECK(cache.use().cached == 0);
  CHECK(system.frees == 1);
  system.fail = 2;
  CHECK(cache.allocate(4096) == nullptr);  // both tries fail: nullptr, nothing counted
  CHECK(cache.use().current == 2048);
  cache.release(p);
  cache.release_cached();
  CHECK(system.outstanding.empty());
}

TEST_CASE("CPU tensors reuse cached storage") {
  const MemoryUse before = cpu_memory_use();
  { Tensor t = Tensor::zeros({1000, 37}); }
  const int64_t after_first = cpu_memory_use().system_allocations;
  for (int i = 0; i < 5; ++i) { Tensor t = Tensor::zeros({1000, 37}); }
  CHECK(cpu_memory_use().system_allocations == after_first);
  CHECK(cpu_memory_use().current == before.current);
}

// Blocks from 2 MiB up start on a 2 MiB boundary, so that huge pages can back them; smaller ones
// keep the 64-byte alignment every tensor gets.
TEST_CASE("large CPU tensors start on a 2 MiB boundary, small ones on 64 bytes") {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  std::vector<Tensor> kept;  // held, so that each request is a new block
  for (int64_t rows : {512, 513, 1024, 3000}) {
    kept.push_back(Tensor::empty({rows, 1024}, DType::F32));  // 2 MiB and more
    CHECK(reinterpret_cast<uintptr_t>(kept.back().data_ptr()) % kHugePage == 0);
  }
  for (int64_t rows : {1, 7, 100, 511}) {
    kept.push_back(Tensor::empty({rows, 1024}, DType::F32));
    CHECK(reinterpret_cast<uintptr_t>(kept.back().data_ptr()) % 64 == 0);
  }
}
}
