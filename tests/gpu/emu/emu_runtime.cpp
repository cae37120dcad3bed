// tests/gpu/emu/emu_runtime.cpp — the emulated CUDA device: a launch runs its blocks one after another
// on the calling thread, each GPU thread of a block a fiber (ucontext) that yields at __syncthreads
// and __shfl_xor_sync; and the CUDA runtime subset the backend calls, over host memory.
#include <sys/mman.h>
#include <ucontext.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_emu.h"

namespace qkv_emu {
namespace {

constexpr int kWarpSize = 32;
constexpr int kMaxBlockThreads = 1024;
constexpr size_t kStackBytes = 256 * 1024;  // per GPU thread; a guard page below each
constexpr size_t kPageBytes = 4096;
constexpr size_t kSharedLimit = 48 * 1024;  // static shared memory per block
constexpr size_t kDeviceMemory = size_t{16} << 30;

std::mutex g_mutex;  // one device: calls into it run one at a time

// ---- errors ----
cudaError_t g_last_error = cudaSuccess;  // the last failed call, returned once by cudaGetLastError
cudaError_t g_fault = cudaSuccess;       // a failed kernel, returned once by the next synchronising call

cudaError_t fail(cudaError_t e) {
  g_last_error = e;
  return e;
}
cudaError_t take_fault() {
  const cudaError_t e = g_fault;
  g_fault = cudaSuccess;
  return e;
}

// ---- device memory: cudaMalloc blocks, start -> size ----
std::map<uintptr_t, size_t> g_blocks;
size_t g_used = 0;

// The block holding p (p may be its end), or g_blocks.end().
std::map<uintptr_t, size_t>::const_iterator block_of(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = g_blocks.upper_bound(a);
  if (it == g_blocks.begin()) return g_blocks.end();
  --it;
  return a <= it->first + it->second ? it : g_blocks.end();
}
bool in_device(const void* p, size_t n) {
  auto it = block_of(p);
  return it != g_blocks.end() && reinterpret_cast<uintptr_t>(p) + n <= it->first + it->second;
}
bool touches_device(const void* p, size_t n) {  // any byte of [p, p + n) is device memory
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = g_blocks.upper_bound(a + n - 1);
  if (it == g_blocks.begin()) return false;
  --it;
  return it->first + it->second > a;
}

// ---- profile (QKV_EMU_PROFILE=1 prints it at exit) ----
struct Stat {
  uint64_t calls = 0, blocks = 0, threads = 0;
  double seconds = 0;
};
std::map<std::string, Stat>& profile() {
  static auto* stats = new std::map<std::string, Stat>;  // never destroyed: print_profile runs at exit
  return *stats;
}
void print_profile() {
  double total = 0;
  for (const auto& [name, s] : profile()) total += s.seconds;
  std::fprintf(stderr, "qkv_emu profile: %.1f s in kernels and cuBLAS\n", total);
  for (const auto& [name, s] : profile())
    std::fprintf(stderr, "  %8.2f s %8llu calls %10llu blocks %12llu threads  %s\n", s.seconds,
                 static_cast<unsigned long long>(s.calls), static_cast<unsigned long long>(s.blocks),
                 static_cast<unsigned long long>(s.threads), name.c_str());
}
const bool g_profile_at_exit = [] {
  const char* v = std::getenv("QKV_EMU_PROFILE");
  if (v && *v && *v != '0') std::atexit(print_profile);
  return true;
}();

// ---- the block scheduler ----
enum class State { Runnable, AtBarrier, AtShuffle, Done };

struct Fiber {
  ucontext_t context;
  State state = State::Done;
  uint3 idx;
  // a pending __shfl_xor_sync
  unsigned mask = 0;
  int lane_mask = 0, width = 0, size = 0;
  uint64_t value = 0;
};

struct Launch {
  const char* kernel = nullptr;
  void (*thread_fn)(void*) = nullptr;
  void* ctx = nullptr;
  int threads = 0;
  int current = -1;  // the fiber running now, -1 in the scheduler
  ucontext_t scheduler;
  std::vector<Fiber> fibers = std::vector<Fiber>(kMaxBlockThreads);
  char* stacks = nullptr;
  uint64_t block_serial = 0;              // changes at every block start
  std::map<void*, uint64_t> shared_seen;  // __shared__ storage -> the block that last filled it
  size_t shared_bytes = 0;
  std::string problem;  // why the current block cannot go on
};
Launch g;

bool reverse_order() {  // QKV_EMU_ORDER=reverse runs threads and blocks last to first
  static const bool reverse = [] {
    const char* v = std::getenv("QKV_EMU_ORDER");
    return v && std::string(v) == "reverse";
  }();
  return reverse;
}

void fiber_main() {
  g.thread_fn(g.ctx);
  g.fibers[g.current].state = State::Done;
}  // returns to g.scheduler (uc_link)

void resume(int t) {
  g.current = t;
  thread_idx = g.fibers[t].idx;
  swapcontext(&g.scheduler, &g.fibers[t].context);
  g.current = -1;
}

void suspend(State state) {
  if (g.current < 0) {
    std::fprintf(stderr, "qkv_emu: __syncthreads or a shuffle outside a kernel\n");
    std::abort();
  }
  Fiber& f = g.fibers[g.current];
  f.state = state;
  swapcontext(&f.context, &g.scheduler);
}

const char* state_name(State s) {
  switch (s) {
    case State::Runnable: return "running";
    case State::AtBarrier: return "at __syncthreads";
    case State::AtShuffle: return "at a shuffle";
    case State::Done: return "exited";
  }
  return "?";
}

// Completes the shuffle of warp w if all its lanes wait at one; false when it cannot.
bool complete_shuffle(int w) {
  const int first = w * kWarpSize, last = std::min(first + kWarpSize, g.threads);
  int waiting = 0;
  for (int t = first; t < last; ++t) waiting += g.fibers[t].state == State::AtShuffle;
  if (waiting == 0) return false;
  if (waiting != last - first) {
    char line[200];
    std::snprintf(line, sizeof line, "warp %d: %d of %d lanes wait at a shuffle; lane states:", w, waiting,
                  last - first);
    g.problem = line;
    for (int t = first; t < last; ++t) g.problem += std::string(" ") + state_name(g.fibers[t].state);
    return false;
  }
  const Fiber& f0 = g.fibers[first];
  const unsigned full = last - first == 32 ? 0xffffffffu : ((1u << (last - first)) - 1);
  for (int t = first; t < last; ++t) {
    const Fiber& f = g.fibers[t];
    if (f.mask != full || f.width != f0.width || f.size != f0.size || f.lane_mask != f0.lane_mask) {
      g.problem = "warp " + std::to_string(w) +
                  ": lanes disagree on the shuffle's mask, width, type or lane mask "
                  "(the emulator supports full-warp shuffles only)";
      return false;
    }
  }
  if (f0.width <= 0 || f0.width > kWarpSize || (f0.width & (f0.width - 1)) != 0) {
    g.problem = "shuffle width " + std::to_string(f0.width) + " is not a power of 2 up to 32";
    return false;
  }
  uint64_t in[kWarpSize];
  for (int t = first; t < last; ++t) in[t - first] = g.fibers[t].value;
  for (int lane = 0; lane < last - first; ++lane) {
    const int src = lane ^ f0.lane_mask;
    // a source outside the lane's width-wide segment (or outside the block) returns its own value
    const bool own = src / f0.width != lane / f0.width || src >= last - first;
    g.fibers[first + lane].value = own ? in[lane] : in[src];
    g.fibers[first + lane].state = State::Runnable;
  }
  return true;
}

// Runs one block to completion; false (with g.problem set) when it deadlocks.
bool run_block(const dim3& block) {
  ++g.block_serial;
  g.shared_bytes = 0;
  for (int t = 0; t < g.threads; ++t) {
    Fiber& f = g.fibers[t];
    f.idx = uint3{t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
    f.state = State::Runnable;
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = g.stacks + static_cast<size_t>(t) * (kStackBytes + kPageBytes) + kPageBytes;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &g.scheduler;
    makecontext(&f.context, fiber_main, 0);
  }
  const bool reverse = reverse_order();
  for (;;) {
    for (int k = 0; k < g.threads; ++k) {
      const int t = reverse ? g.threads - 1 - k : k;
      if (g.fibers[t].state == State::Runnable) resume(t);
      if (!g.problem.empty()) return false;
    }
    // Every thread now waits at a barrier or a shuffle, or has exited.
    bool progress = false;
    for (int w = 0; w * kWarpSize < g.threads; ++w) progress |= complete_shuffle(w);
    if (!g.problem.empty()) return false;
    if (progress) continue;
    int done = 0, at_barrier = 0;
    for (int t = 0; t < g.threads; ++t) {
      done += g.fibers[t].state == State::Done;
      at_barrier += g.fibers[t].state == State::AtBarrier;
    }
    if (done == g.threads) return true;
    if (at_barrier == g.threads) {
      for (int t = 0; t < g.threads; ++t) g.fibers[t].state = State::Runnable;
      continue;
    }
    g.problem = "__syncthreads reached by " + std::to_string(at_barrier) + " of " + std::to_string(g.threads) +
                " threads (" + std::to_string(done) + " exited): a divergent barrier, a hang on a GPU";
    return false;
  }
}

}  // namespace

void report(const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::fputs("qkv_emu: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
}

void profile_add(const char* name, double seconds, uint64_t blocks, uint64_t threads) {
  Stat& s = profile()[name];
  ++s.calls;
  s.blocks += blocks;
  s.threads += threads;
  s.seconds += seconds;
}

size_t device_bytes_from(const void* p) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = block_of(p);
  return it == g_blocks.end() ? 0 : it->first + it->second - reinterpret_cast<uintptr_t>(p);
}

void check_kernel_pointer(const char* kernel, int arg, const void* p) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (p == nullptr || block_of(p) != g_blocks.end()) return;
  report("%s: argument %d (%p) is not device memory (an illegal address on a GPU)", kernel, arg, p);
  g_fault = cudaErrorIllegalAddress;
}

void run_grid(const char* kernel, dim3 grid, dim3 block, void (*thread_fn)(void*), void* ctx) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  if (threads == 0 || threads > kMaxBlockThreads || block.x > 1024 || block.y > 1024 || block.z > 64 || grid.x == 0 ||
      grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
    report("%s: invalid launch configuration grid (%u, %u, %u) block (%u, %u, %u)", kernel, grid.x, grid.y, grid.z,
           block.x, block.y, block.z);
    fail(cudaErrorInvalidConfiguration);
    return;
  }
  if (!g.stacks) {
    const size_t bytes = kMaxBlockThreads * (kStackBytes + kPageBytes);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::perror("qkv_emu: mmap of the fiber stacks");
      std::abort();
    }
    g.stacks = static_cast<char*>(p);
    for (int t = 0; t < kMaxBlockThreads; ++t)  // a guard page under each stack
      mprotect(g.stacks + static_cast<size_t>(t) * (kStackBytes + kPageBytes), kPageBytes, PROT_NONE);
  }
  const auto start = std::chrono::steady_clock::now();
  g.kernel = kernel;
  g.thread_fn = thread_fn;
  g.ctx = ctx;
  g.threads = static_cast<int>(threads);
  g.problem.clear();
  block_dim = block;
  grid_dim = grid;
  const uint64_t blocks = uint64_t{grid.x} * grid.y * grid.z;
  const bool reverse = reverse_order();
  for (uint64_t k = 0; k < blocks; ++k) {
    const uint64_t b = reverse ? blocks - 1 - k : k;
    block_idx = uint3{static_cast<unsigned>(b % grid.x), static_cast<unsigned>(b / grid.x % grid.y),
                      static_cast<unsigned>(b / (uint64_t{grid.x} * grid.y))};
    if (!run_block(block)) {
      report("%s: block (%u, %u, %u) of (%u, %u, %u), %d threads: %s", kernel, block_idx.x, block_idx.y, block_idx.z,
             grid.x, grid.y, grid.z, g.threads, g.problem.c_str());
      g_fault = cudaErrorLaunchFailure;
      break;
    }
  }
  g.current = -1;
  profile_add(kernel, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), blocks,
              blocks * threads);
}

void syncthreads() { suspend(State::AtBarrier); }

uint64_t shfl_xor(unsigned mask, uint64_t bits, int size, int lane_mask, int width) {
  Fiber& f = g.fibers[g.current];
  f.mask = mask;
  f.value = bits;
  f.size = size;
  f.lane_mask = lane_mask;
  f.width = width;
  suspend(State::AtShuffle);
  return g.fibers[g.current].value;
}

void shared_block(void* storage, size_t bytes) {
  uint64_t& seen = g.shared_seen[storage];
  if (seen == g.block_serial) return;
  seen = g.block_serial;
  std::memset(storage, 0xff, bytes);
  g.shared_bytes += bytes;
  if (g.shared_bytes > kSharedLimit)
    g.problem = "static shared memory of " + std::to_string(g.shared_bytes) + " bytes exceeds 48 KiB";
}

}  // namespace qkv_emu

// ---- the CUDA runtime subset ----
using namespace qkv_emu;

namespace {

int device_count() {
  const char* v = std::getenv("QKV_EMU_DEVICES");  // QKV_EMU_DEVICES=0: no device
  return v && *v ? std::atoi(v) : 1;
}

bool check_range(const char* api, const char* which, const void* p, size_t n, bool device) {
  if (device ? in_device(p, n) : !touches_device(p, n)) return true;
  report("%s: %s [%p, +%zu bytes) %s", api, which, p, n,
         device ? "is not inside one device allocation" : "is device memory, but the copy kind says host");
  return false;
}

cudaError_t copy(const char* api, void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  if (count == 0) return cudaSuccess;
  if (!dst || !src) return fail(cudaErrorInvalidValue);
  if (kind == cudaMemcpyDefault)
    kind = static_cast<cudaMemcpyKind>((touches_device(src, count) ? 2 : 0) + (touches_device(dst, count) ? 1 : 0));
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDeviceToDevice) return fail(cudaErrorInvalidValue);
  const bool src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  const bool dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  if (!check_range(api, "source", src, count, src_device) || !check_range(api, "destination", dst, count, dst_device))
    return fail(cudaErrorInvalidValue);
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  if (d < s + count && s < d + count) {
    report("%s: source and destination overlap (undefined behaviour)", api);
    return fail(cudaErrorInvalidValue);
  }
  std::memcpy(dst, src, count);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMalloc(void** ptr, size_t size) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!ptr) return fail(cudaErrorInvalidValue);
  *ptr = nullptr;
  if (size == 0) return cudaSuccess;
  if (size > kDeviceMemory - g_used) return fail(cudaErrorMemoryAllocation);
  const size_t rounded = (size + 255) / 256 * 256;  // cudaMalloc's 256-byte alignment
  void* p = std::aligned_alloc(256, rounded);
  if (!p) return fail(cudaErrorMemoryAllocation);
  std::memset(p, 0xff, rounded);  // fresh device memory is garbage: here NaN (float) and -1 (int64)
  g_blocks[reinterpret_cast<uintptr_t>(p)] = size;
  g_used += size;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!ptr) return cudaSuccess;
  auto it = g_blocks.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_blocks.end()) {
    report("cudaFree(%p): not the start of a live cudaMalloc block", ptr);
    return fail(cudaErrorInvalidValue);
  }
  g_used -= it->second;
  g_blocks.erase(it);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const cudaError_t e = copy("cudaMemcpy", dst, src, count, kind);
  if (e != cudaSuccess) return e;
  return take_fault();  // a synchronous copy reports an earlier kernel's failure
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (stream != nullptr) {
    report("cudaMemcpyAsync: only the default stream is emulated");
    return fail(cudaErrorInvalidValue);
  }
  return copy("cudaMemcpyAsync", dst, src, count, kind);  // work runs in order, so at once is in order
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (count == 0) return cudaSuccess;
  if (!check_range("cudaMemset", "destination", ptr, count, true)) return fail(cudaErrorInvalidValue);
  std::memset(ptr, value, count);
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!count) return fail(cudaErrorInvalidValue);
  *count = device_count();
  return *count > 0 ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return device >= 0 && device < device_count() ? cudaSuccess : fail(cudaErrorInvalidDevice);
}

cudaError_t cudaDeviceSynchronize() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return take_fault();
}

cudaError_t cudaGetLastError() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_fault != cudaSuccess) return take_fault();
  const cudaError_t e = g_last_error;
  g_last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_fault != cudaSuccess ? g_fault : g_last_error;
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
  }
  return "unknown error";
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!prop) return fail(cudaErrorInvalidValue);
  if (device < 0 || device >= device_count()) return fail(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "qkv-emu (CUDA emulated on the CPU)");
  prop->totalGlobalMem = kDeviceMemory;
  prop->sharedMemPerBlock = kSharedLimit;
  prop->warpSize = kWarpSize;
  prop->maxThreadsPerBlock = kMaxBlockThreads;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 132;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!value) return fail(cudaErrorInvalidValue);
  if (device < 0 || device >= device_count()) return fail(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = kMaxBlockThreads; return cudaSuccess;
    case cudaDevAttrClockRate: *value = 1980000; return cudaSuccess;  // kHz
    case cudaDevAttrMultiProcessorCount: *value = 132; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; return cudaSuccess;
  }
  return fail(cudaErrorInvalidValue);
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (!version) return cudaErrorInvalidValue;
  *version = 13000;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (!version) return cudaErrorInvalidValue;
  *version = 13000;
  return cudaSuccess;
}
