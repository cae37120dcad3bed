// framework/cpu/thread_pool.cpp — the CPU backend's threads (thread_pool.h).
#include "thread_pool.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace qkv::cpu {

namespace {

using Clock = std::chrono::steady_clock;

// How long a worker spins for the next call before it sleeps, and how long the caller spins for
// the last pieces in workers' hands before it sleeps. RESULTS.md ("Threads on a busy machine") has
// the measurements.
constexpr auto kWorkerSpin = std::chrono::microseconds(100);
constexpr auto kCallerSpin = std::chrono::microseconds(20);

// A stall: after its own last piece the caller waited longer than kStallMargin plus twice its own
// mean piece time for a worker's piece, so that worker was off its core. A costly stall, one that
// cost more than 1/kStallShare of the time the calls had run on the workers since the stall before
// (another process taking the core again and again), sends the calls to the caller alone for a
// while: kFirstSolo, twice as long after each costly stall within kStallMemory of the one before,
// at most kLongestSolo. A stall now and then (a virtual machine's host taking the core for a
// millisecond every second or so) costs less than the second thread saves: the calls keep it.
constexpr auto kStallMargin = std::chrono::microseconds(200);
constexpr int kStallShare = 16;
constexpr auto kFirstSolo = std::chrono::milliseconds(20);
constexpr auto kLongestSolo = std::chrono::milliseconds(640);
constexpr auto kStallMemory = std::chrono::seconds(1);

// With the thread count left to the default (one per processor), the pool looks at the machine's
// load kFirstLoadCheck after its first call, then every kLoadCheck: while other processes left
// fewer than one and a half of its processors free since the last look, calls run on the caller
// alone until the next one. It sees another process before any stall, and a short run has no time
// for stalls to teach it.
constexpr auto kLoadCheck = std::chrono::milliseconds(100);
constexpr auto kFirstLoadCheck = std::chrono::milliseconds(50);

constexpr int kMostThreads = 256;  // as --threads allows

// One call's pieces go through a 16-bit counter (below); more are run in groups.
constexpr int64_t kMaxSlots = 0xffff;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or `limit` has passed; returns done()'s last value.
template <typename Done>
bool spin_until(Done&& done, Clock::duration limit) {
  const Clock::time_point end = Clock::now() + limit;
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (Clock::now() >= end) return done();
  }
}

int processors() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// CPU time in seconds since boot: that the processors this process may run on have spent busy
// (/proc/stat: user, nice, system, irq and softirq; not idle, iowait or a virtual machine's steal),
// and that this process has used. Negative where /proc/stat cannot be read.
struct CpuTimes {
  double processors_busy = -1, process = 0;
};
std::mutex stat_path_mutex;
std::string stat_path = "/proc/stat";    // set_cpu_stat_path
std::atomic<bool> stalls_counted{true};  // set_stall_rule

CpuTimes cpu_times() {
  CpuTimes t;
  cpu_set_t mine;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return t;
  std::FILE* file = nullptr;
  {
    std::lock_guard<std::mutex> lock(stat_path_mutex);
    file = std::fopen(stat_path.c_str(), "r");
  }
  if (file == nullptr) return t;
  long long busy_ticks = 0;
  char line[512];
  while (std::fgets(line, sizeof line, file) != nullptr) {
    if (std::strncmp(line, "cpu", 3) != 0 || !std::isdigit(static_cast<unsigned char>(line[3])))
      continue;  // not one processor's line (the first, "cpu  ...", is the whole machine's)
    int cpu = -1;
    long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
    if (std::sscanf(line, "cpu%d %lld %lld %lld %lld %lld %lld %lld", &cpu, &user, &nice, &system, &idle, &iowait, &irq,
                    &softirq) != 8)
      continue;
    if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &mine)) busy_ticks += user + nice + system + irq + softirq;
  }
  std::fclose(file);
  timespec own{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &own);
  t.processors_busy = static_cast<double>(busy_ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
  t.process = static_cast<double>(own.tv_sec) + 1e-9 * static_cast<double>(own.tv_nsec);
  return t;
}

thread_local bool t_inside_call = false;  // a worker, or a caller whose call is running

class Pool {
 public:
  // Threads wanted (0: not chosen yet) and workers running (threads - 1 of them).
  std::atomic<int> wanted{0};
  // Whether that count is the default one per processor (not set by --threads or QKV_THREADS).
  std::atomic<bool> per_processor{false};
  std::mutex run_mutex;  // one call at a time; also guards the workers list

  void run(int threads, int64_t pieces, void (*call)(void*, int64_t), void* ctx) {
    if (static_cast<int>(workers_.size()) != threads - 1) resize(threads - 1);
    const int64_t slots = std::min(pieces, kMaxSlots);
    job_ = Job{call, ctx, pieces, (pieces + slots - 1) / slots};
    error_ = nullptr;
    failed_.store(false, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    ++generation_value_;
    // The job's fields are written before the word that hands out its slots (release); a thread
    // reads them only after it has claimed a slot, and the job cannot end before that slot is done.
    word_.store((uint64_t{generation_value_} << 32) | static_cast<uint64_t>(slots), std::memory_order_release);
    generation_.store(generation_value_, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) generation_.notify_all();
    const Clock::time_point start = Clock::now();
    const int64_t own_slots = work();
    // Wait for slots in workers' hands: spin briefly, then sleep (the core goes to that worker).
    const uint32_t all = static_cast<uint32_t>(slots);
    if (!spin_until([&] { return done_.load(std::memory_order_acquire) == all; }, kCallerSpin)) {
      const Clock::time_point own_end = Clock::now();
      caller_sleeping_.store(true, std::memory_order_seq_cst);
      for (uint32_t d; (d = done_.load(std::memory_order_seq_cst)) != all;) done_.wait(d, std::memory_order_seq_cst);
      caller_sleeping_.store(false, std::memory_order_relaxed);
      if (own_slots > 0 && stalls_counted.load(std::memory_order_relaxed)) {
        const Clock::time_point now = Clock::now();
        if (now - own_end > kStallMargin + 2 * (own_end - start) / own_slots) note_stall(now, now - own_end);
      }
    }
    if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(error_);
  }

  // Whether calls run on the caller alone for now (a worker stalled lately, or the machine is busy).
  bool solo() {
    const int64_t now = Clock::now().time_since_epoch().count();
    const int64_t until = solo_until_.load(std::memory_order_relaxed);
    if (until != 0 && now < until) return true;
    return per_processor.load(std::memory_order_relaxed) && crowded(now);
  }
  // Forgets the stalls: the next call uses the workers (a new thread count was chosen).
  // Also looks at the load afresh.
  void forget_stalls() {
    forget_.store(true, std::memory_order_relaxed);
    solo_until_.store(0, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(load_mutex_);
    last_times_ = CpuTimes{};
    crowded_.store(false, std::memory_order_relaxed);
    next_load_check_.store(0, std::memory_order_relaxed);
  }

 private:
  struct Job {
    void (*call)(void*, int64_t) = nullptr;
    void* ctx = nullptr;
    int64_t pieces = 0, per_slot = 1;
  };

  // Claims slots of the current call until none is left, and runs their pieces; returns how many
  // slots it ran.
  int64_t work() {
    int64_t ran = 0;
    uint64_t w = word_.load(std::memory_order_acquire);
    for (;;) {
      const uint32_t next = static_cast<uint32_t>(w >> 16) & 0xffff, slots = static_cast<uint32_t>(w) & 0xffff;
      if (next >= slots) return ran;
      if (!word_.compare_exchange_weak(w, w + (uint64_t{1} << 16), std::memory_order_acq_rel,
                                       std::memory_order_acquire))
        continue;
      ++ran;
      const Job& job = job_;  // claimed: the call cannot end before this slot is done
      if (!failed_.load(std::memory_order_relaxed)) {
        try {
          const int64_t begin = next * job.per_slot, end = std::min(job.pieces, begin + job.per_slot);
          for (int64_t p = begin; p < end; ++p) job.call(job.ctx, p);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex_);
          if (!failed_.load(std::memory_order_relaxed)) {
            error_ = std::current_exception();
            failed_.store(true, std::memory_order_release);
          }
        }
      }
      if (done_.fetch_add(1, std::memory_order_seq_cst) + 1 == slots &&
          caller_sleeping_.load(std::memory_order_seq_cst))
        done_.notify_all();
      w = word_.load(std::memory_order_acquire);
    }
  }

  void worker_main(uint32_t seen) {
    t_inside_call = true;
    for (;;) {
      const auto changed = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      if (!spin_until(changed, kWorkerSpin)) {
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        while (generation_.load(std::memory_order_seq_cst) == seen) generation_.wait(seen, std::memory_order_seq_cst);
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = generation_.load(std::memory_order_acquire);
      if (stopping_.load(std::memory_order_acquire)) return;
      work();
    }
  }

  void resize(int count) {
    if (!workers_.empty()) {
      stopping_.store(true, std::memory_order_release);
      word_.store(uint64_t{++generation_value_} << 32, std::memory_order_release);  // no slots
      generation_.store(generation_value_, std::memory_order_seq_cst);
      generation_.notify_all();
      for (std::thread& t : workers_) t.join();
      workers_.clear();
      stopping_.store(false, std::memory_order_relaxed);
    }
    for (int i = 0; i < count; ++i) workers_.emplace_back([this, seen = generation_value_] { worker_main(seen); });
  }

  // Whether, over the last kLoadCheck, other processes left this pool's processors less than one
  // and a half free: with two, more than half a processor busy beside this process; with 64, more
  // than 62.5 (fewer others leave the threads to the stalls' rule). /proc/stat counts in clock
  // ticks, each processor's to within a tick or so: the margin grows by one tick per window for
  // every square root of the processors' number. A caller that finds another reading it keeps the
  // last verdict.
  bool crowded(int64_t now) {
    if (now < next_load_check_.load(std::memory_order_relaxed)) return crowded_.load(std::memory_order_relaxed);
    std::unique_lock<std::mutex> lock(load_mutex_, std::try_to_lock);
    if (!lock.owns_lock() || now < next_load_check_.load(std::memory_order_relaxed))
      return crowded_.load(std::memory_order_relaxed);
    const CpuTimes times = cpu_times();
    const int64_t read_at = Clock::now().time_since_epoch().count();
    const double wall = std::chrono::duration<double>(Clock::duration(read_at - last_look_)).count();
    if (times.processors_busy >= 0 && last_times_.processors_busy >= 0 && wall > 0) {
      const double others =
          (times.processors_busy - last_times_.processors_busy) - (times.process - last_times_.process);
      const int cores = processors();
      const double margin = std::sqrt(static_cast<double>(cores)) / static_cast<double>(sysconf(_SC_CLK_TCK)) / wall;
      crowded_.store(others / wall > cores - 1.5 + margin, std::memory_order_relaxed);
    }
    const bool first = last_times_.processors_busy < 0;  // a first verdict soon, then every kLoadCheck
    last_times_ = times;
    last_look_ = read_at;
    const Clock::duration next = first ? Clock::duration(kFirstLoadCheck) : Clock::duration(kLoadCheck);
    next_load_check_.store(read_at + next.count(), std::memory_order_relaxed);
    return crowded_.load(std::memory_order_relaxed);
  }

  // Called by the caller (under run_mutex) after a stall that kept it waiting for `waited`.
  void note_stall(Clock::time_point now, Clock::duration waited) {
    if (forget_.exchange(false, std::memory_order_relaxed)) {
      solo_length_ = Clock::duration::zero();
      last_stall_ = last_solo_ = Clock::time_point{};
    }
    // on the workers since the stall before, or since the last stretch alone ended
    const Clock::time_point since = std::max(last_stall_, last_solo_ + solo_length_);
    const bool costly = last_stall_ != Clock::time_point{} && now - since < kStallShare * waited;
    last_stall_ = now;
    if (!costly) return;
    const bool again = solo_length_ > Clock::duration::zero() && now - last_solo_ < kStallMemory + solo_length_;
    solo_length_ = again ? std::min<Clock::duration>(2 * solo_length_, kLongestSolo) : Clock::duration(kFirstSolo);
    last_solo_ = now;
    solo_until_.store((now + solo_length_).time_since_epoch().count(), std::memory_order_relaxed);
  }

  std::vector<std::thread> workers_;
  Job job_;
  Clock::time_point last_stall_{};           // the last stall, costly or not ({}: none since forgetting)
  Clock::time_point last_solo_{};            // the last costly stall, which began a stretch alone
  Clock::duration solo_length_{};            // how long that stretch was
  std::atomic<int64_t> solo_until_{0};       // steady_clock ticks; 0: no costly stall yet
  std::atomic<bool> forget_{false};          // set_pool_threads was called since the last stall
  std::atomic<int64_t> next_load_check_{0};  // steady_clock ticks
  std::atomic<bool> crowded_{false};         // at the last look
  std::mutex load_mutex_;                    // guards the last look
  CpuTimes last_times_;
  int64_t last_look_ = 0;
  uint32_t generation_value_ = 0;        // the caller's copy
  std::atomic<uint64_t> word_{0};        // generation (32 bits) | next slot (16) | slots (16)
  std::atomic<uint32_t> generation_{0};  // what sleeping workers wait on
  std::atomic<uint32_t> done_{0};        // slots finished in this call
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_sleeping_{false}, stopping_{false}, failed_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: its workers sleep until the process exits
  return *p;
}

}  // namespace

// QKV_THREADS as a count: 0 where it is unset, empty or 0 (one per processor). Throws on any other
// text than a whole number from 0 to kMostThreads.
static int qkv_threads_setting() {
  const char* env = std::getenv("QKV_THREADS");
  if (env == nullptr || *env == '\0') return 0;
  const std::string text = env;
  const bool digits =
      text.size() <= 3 && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int value = digits ? std::atoi(text.c_str()) : -1;
  if (!digits || value > kMostThreads)
    throw std::runtime_error(
        fmt::format("QKV_THREADS must be a whole number from 0 to {} (0: one per core), got '{}'", kMostThreads, text));
  return value;
}

int default_threads() {
  const int setting = qkv_threads_setting();
  return setting == 0 ? processors() : setting;
}

int pool_threads() {
  int n = pool().wanted.load(std::memory_order_relaxed);
  if (n == 0) {
    n = default_threads();
    pool().per_processor.store(qkv_threads_setting() == 0, std::memory_order_relaxed);
    pool().wanted.store(n, std::memory_order_relaxed);
  }
  return n;
}

void set_pool_threads(int threads) {
  Pool& p = pool();
  p.wanted.store(threads > 0 ? std::min(threads, kMostThreads) : default_threads(), std::memory_order_relaxed);
  p.per_processor.store(threads <= 0 && qkv_threads_setting() == 0, std::memory_order_relaxed);
  p.forget_stalls();
}

void set_cpu_stat_path(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(stat_path_mutex);
    stat_path = path.empty() ? "/proc/stat" : path;
  }
  pool().forget_stalls();
}

void set_stall_rule(bool on) {
  stalls_counted.store(on, std::memory_order_relaxed);
  pool().forget_stalls();
}

bool runs_alone() { return t_inside_call || pool_threads() <= 1 || pool().solo(); }

void run_pieces(int64_t pieces, void (*call)(void*, int64_t), void* ctx) {
  if (pieces <= 0) return;
  const int threads = pieces > 1 && !t_inside_call ? pool_threads() : 1;
  if (threads > 1 && !pool().solo()) {
    Pool& p = pool();
    std::unique_lock<std::mutex> lock(p.run_mutex, std::try_to_lock);
    if (lock.owns_lock()) {
      struct Inside {  // t_inside_call for the call's length, however it ends
        Inside() { t_inside_call = true; }
        ~Inside() { t_inside_call = false; }
      } inside;
      return p.run(threads, pieces, call, ctx);
    }
  }
  for (int64_t piece = 0; piece < pieces; ++piece) call(ctx, piece);
}

}  // namespace qkv::cpu
