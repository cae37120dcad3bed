// tests/engine/test_threads.cpp — the CPU backend's parallel loops and gemm: every op whose work is split
// across threads gives the same bits, forward and backward, with 1 thread and with several, at sizes
// large enough to be split (the op-table cases are too small to reach the parallel paths).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "framework/autograd.h"
#include "framework/backend.h"
#include "framework/cpu/thread_pool.h"
#include "framework/ops.h"
#include "framework/optim.h"
#include "framework/random.h"

using namespace qkv;

namespace {

using Inputs = std::vector<Tensor>;

// The op's output and the gradients of its inputs for a fixed upstream gradient, as raw bytes.
std::vector<std::vector<char>> run_once(const std::vector<Shape>& shapes, DType dtype,
                                        const std::function<Tensor(const Inputs&)>& op) {
  Generator gen(11);
  Inputs inputs;
  for (const Shape& s : shapes) inputs.push_back(randn(s, gen, dtype).set_requires_grad());
  Tensor out = op(inputs);
  Tensor upstream = randn(out.shape(), gen, dtype);
  out.backward(upstream);
  std::vector<std::vector<char>> bytes;
  auto keep = [&bytes](const Tensor& t) {
    const char* p = static_cast<const char*>(t.data_ptr());
    bytes.emplace_back(p, p + t.numel() * dtype_size(t.dtype()));
  };
  keep(out);
  for (const Tensor& x : inputs) keep(x.grad());
  return bytes;
}

void check_same_bits(const std::string& name, const std::vector<Shape>& shapes,
                     const std::function<Tensor(const Inputs&)>& op) {
  for (DType dtype : {DType::F32, DType::F64}) {
    CAPTURE(name);
    CAPTURE(dtype_name(dtype));
    set_cpu_threads(1);
    const auto one = run_once(shapes, dtype, op);
    for (int threads : {2, 3}) {
      CAPTURE(threads);
      set_cpu_threads(threads);
      const auto many = run_once(shapes, dtype, op);
      REQUIRE(many.size() == one.size());
      for (size_t i = 0; i < one.size(); ++i) {
        CAPTURE(i);  // 0: the output, then each input's gradient
        CHECK(many[i] == one[i]);
      }
    }
  }
  set_cpu_threads(0);
}

}  // namespace

TEST_CASE("parallel CPU loops: the same bits with 1, 2 and 3 threads") {
  // 1,499 rows of 64 (95,936 entries): above the split threshold, and no thread count splits it evenly
  const int64_t rows = 1499, width = 64;
  check_same_bits("exp", {{rows, width}}, [](const Inputs& x) { return exp(x[0]); });
  check_same_bits("gelu", {{rows, width}}, [](const Inputs& x) { return gelu(x[0]); });
  check_same_bits("mul, same shape", {{rows, width}, {rows, width}}, [](const Inputs& x) { return mul(x[0], x[1]); });
  check_same_bits("add, a bias row", {{rows, width}, {width}}, [](const Inputs& x) { return add(x[0], x[1]); });
  check_same_bits("div, a column", {{rows, width}, {rows, 1}}, [](const Inputs& x) { return div(x[0], x[1]); });
  check_same_bits("sub, one long row", {{1, 100000}, {1, 100000}}, [](const Inputs& x) { return sub(x[0], x[1]); });
  check_same_bits("mul, 3-d broadcast", {{31, 47, width}, {31, 1, width}},
                  [](const Inputs& x) { return mul(x[0], x[1]); });
  check_same_bits("transpose", {{31, 47, width}}, [](const Inputs& x) { return transpose(x[0]); });
  check_same_bits("masked_fill", {{rows, width}}, [](const Inputs& x) {
    std::vector<double> keep(width);
    for (int64_t c = 0; c < width; ++c) keep[c] = c % 3 == 0 ? 0.0 : 1.0;
    return masked_fill(x[0], Tensor::from_vector(keep, {1, width}, x[0].dtype()), -1.0);
  });
  check_same_bits("softmax", {{rows, width}}, [](const Inputs& x) { return softmax(x[0]); });
  check_same_bits("log_softmax", {{rows, 700}}, [](const Inputs& x) { return log_softmax(x[0]); });
  check_same_bits("layer_norm", {{rows, width}, {width}, {width}},
                  [](const Inputs& x) { return layer_norm(x[0], x[1], x[2]); });
  // gemm: OpenBLAS on one thread, the call cut into pieces that do not depend on the thread count
  check_same_bits("matmul, rows split", {{rows, width}, {96, width}},
                  [](const Inputs& x) { return matmul(x[0], x[1], false, true); });
  check_same_bits("matmul, columns split", {{width, rows}, {rows, 700}},
                  [](const Inputs& x) { return matmul(x[0], x[1]); });
  check_same_bits("linear, bias in the gemm", {{rows, width}, {96, width}, {96}},
                  [](const Inputs& x) { return linear(x[0], x[1], x[2]); });
  check_same_bits("matmul, batched", {{6, 130, width}, {6, width, 130}},
                  [](const Inputs& x) { return matmul(x[0], x[1]); });
  // pieces of over 2^21 multiply-adds each, the last included: on kernels where the cut keeps the
  // bits, one thread runs a whole entry as one OpenBLAS call and more threads run it piece by piece
  check_same_bits("matmul, large row pieces as one call", {{rows, 256}, {300, 256}},
                  [](const Inputs& x) { return matmul(x[0], x[1], false, true); });
  check_same_bits("matmul, large column pieces as one call", {{256, rows}, {rows, 700}},
                  [](const Inputs& x) { return matmul(x[0], x[1]); });
  check_same_bits("matmul, batched, large pieces", {{3, 600, 256}, {3, 256, 300}},
                  [](const Inputs& x) { return matmul(x[0], x[1]); });
  // a last piece of 12 x 88 x 946 = 998,976 multiply-adds, just inside OpenBLAS's small-matrix sizes
  // (1e6): its bits differ from the same columns inside one call, so that piece runs alone
  check_same_bits("matmul, a last piece just under the small-matrix size", {{12, 946}, {1432, 946}},
                  [](const Inputs& x) { return matmul(x[0], x[1], false, true); });
  check_same_bits("layer_norm, no affine", {{rows, width}},
                  [](const Inputs& x) { return layer_norm(x[0], Tensor(), Tensor()); });
  // sums: of everything (blocks of 2^14 summed in parallel), of each row (row_sum's lanes), of each column
  check_same_bits("sum of everything", {{rows, width}}, [](const Inputs& x) { return sum(x[0]); });
  check_same_bits("sum of each row", {{rows, 333}}, [](const Inputs& x) { return sum(x[0], 1); });
  check_same_bits("sum of each column", {{rows, width}}, [](const Inputs& x) { return sum(x[0], 0); });
}

TEST_CASE("parallel CPU loops: AdamW steps give the same bits with 1 and 2 threads") {
  auto train = [](int threads) {
    set_cpu_threads(threads);
    Generator gen(3);
    Tensor p = randn({200, 500}, gen).set_requires_grad();
    optim::AdamW opt({p}, optim::AdamOptions{1e-2, 0.9, 0.999, 1e-8, 0.01});
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      sum(mul(p, p)).backward();
      opt.step();
    }
    const char* bytes = static_cast<const char*>(p.data_ptr());
    set_cpu_threads(0);
    return std::vector<char>(bytes, bytes + p.numel() * sizeof(float));
  };
  CHECK(train(2) == train(1));
}

TEST_CASE("thread pool: every piece runs exactly once, for any thread count and number of pieces") {
  // 70,000 pieces: more than one call's 16-bit counter, so they run in groups
  for (int threads : {1, 2, 3, 5}) {
    set_cpu_threads(threads);
    for (int64_t pieces : {int64_t{1}, int64_t{2}, int64_t{7}, int64_t{1000}, int64_t{70000}}) {
      CAPTURE(threads);
      CAPTURE(pieces);
      std::vector<std::atomic<int>> runs(static_cast<size_t>(pieces));
      cpu::for_each_piece(pieces, [&](int64_t p) { runs[p].fetch_add(1); });
      int64_t wrong = 0;
      for (auto& r : runs) wrong += r.load() != 1;
      CHECK(wrong == 0);
    }
  }
  set_cpu_threads(0);
}

TEST_CASE("thread pool: a call inside a piece runs on that piece's thread") {
  set_cpu_threads(3);
  std::atomic<int> elsewhere{0}, inner_runs{0};
  cpu::for_each_piece(16, [&](int64_t) {
    const std::thread::id here = std::this_thread::get_id();
    cpu::for_each_piece(8, [&](int64_t) {
      inner_runs.fetch_add(1);
      if (std::this_thread::get_id() != here) elsewhere.fetch_add(1);
    });
  });
  CHECK(inner_runs.load() == 16 * 8);
  CHECK(elsewhere.load() == 0);
  set_cpu_threads(0);
}

TEST_CASE("thread pool: an exception thrown in a piece reaches the caller after every piece has stopped") {
  set_cpu_threads(2);
  std::atomic<int> running{0};
  CHECK_THROWS_WITH(cpu::for_each_piece(64,
                                        [&](int64_t p) {
                                          running.fetch_add(1);
                                          std::this_thread::sleep_for(std::chrono::microseconds(50));
                                          running.fetch_sub(1);
                                          if (p == 5) throw std::runtime_error("piece 5 failed");
                                        }),
                    "piece 5 failed");
  CHECK(running.load() == 0);
  // the pool still works afterwards
  std::atomic<int> count{0};
  cpu::for_each_piece(100, [&](int64_t) { count.fetch_add(1); });
  CHECK(count.load() == 100);
  set_cpu_threads(0);
}

// What a busy machine does to a worker, staged: the first piece a worker takes stalls until every
// other piece is done. The caller must take those pieces itself (a pool that gives each thread a
// fixed share would leave the stalled worker's share undone, and this would time out).
TEST_CASE("thread pool: a stalled worker holds up only the piece it has taken") {
  set_cpu_threads(2);
  const int64_t pieces = 64;
  const std::thread::id caller = std::this_thread::get_id();
  bool exercised = false;
  for (int attempt = 0; attempt < 20 && !exercised; ++attempt) {
    std::atomic<int64_t> done{0};
    std::atomic<bool> stalled{false}, timed_out{false};
    cpu::for_each_piece(pieces, [&](int64_t) {
      if (std::this_thread::get_id() != caller && !stalled.exchange(true)) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (done.load() < pieces - 1)
          if (std::chrono::steady_clock::now() > deadline) {
            timed_out = true;
            break;
          }
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(100));  // time for the worker to join in
      }
      done.fetch_add(1);
    });
    CHECK(done.load() == pieces);
    CHECK_FALSE(timed_out.load());
    exercised = stalled.load();  // the worker joined in and stalled
  }
  CHECK(exercised);
  set_cpu_threads(0);
}

// A worker off its core for long (staged: its first piece sleeps 60 ms while the caller's pieces take
// 50 us) is a stall. Once after a quiet stretch, it leaves the calls on the workers; a second one
// right after it (the pattern of another process holding the core: its 50 ms cost far more than a
// sixteenth of the time between the two) sends the next calls to the caller alone, then, some time
// later, to the workers again. set_cpu_threads forgets the stalls.
namespace {
// one call of 64 pieces of 50 us each; returns how many of them ran on a worker
int pieces_on_workers(bool stall_first_worker_piece) {
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> on_workers{0};
  std::atomic<bool> stalled{false};
  cpu::for_each_piece(64, [&](int64_t) {
    if (std::this_thread::get_id() != caller) {
      on_workers.fetch_add(1);
      if (stall_first_worker_piece && !stalled.exchange(true))
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  });
  return on_workers.load();
}

// Stages one stall (a call whose worker took a piece); false if no worker joined in 20 tries.
bool stage_stall() {
  for (int attempt = 0; attempt < 20; ++attempt)
    if (pieces_on_workers(true) > 0) return true;
  return false;
}

// Whether a call uses the workers within `window` from now (a worker may miss one call).
bool workers_join(std::chrono::milliseconds window) {
  const auto end = std::chrono::steady_clock::now() + window;
  do {
    if (pieces_on_workers(false) > 0) return true;
  } while (std::chrono::steady_clock::now() < end);
  return false;
}
}  // namespace

TEST_CASE("thread pool: one stall keeps the workers; stalls in a row send the calls to the caller alone for a while") {
  // a single stall after a quiet stretch (set_cpu_threads forgets the ones before): still on the
  // workers, well within the 20 ms that a stretch alone would last. Three tries: a stall of the
  // machine's own right after the staged one would make two in a row.
  bool kept = false;
  for (int attempt = 0; attempt < 3 && !kept; ++attempt) {
    set_cpu_threads(2);
    REQUIRE(stage_stall());
    kept = workers_join(std::chrono::milliseconds(10));
  }
  CHECK(kept);
  // two in a row: the caller alone right after them, the workers again past the stretch (20 ms)
  set_cpu_threads(2);
  REQUIRE(stage_stall());
  REQUIRE(stage_stall());
  CHECK(pieces_on_workers(false) == 0);
  bool later = false;
  for (int attempt = 0; attempt < 20 && !later; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    later = pieces_on_workers(false) > 0;
  }
  CHECK(later);
  // stalls in a row again, then a new thread count: the workers at once
  REQUIRE(stage_stall());
  REQUIRE(stage_stall());
  set_cpu_threads(2);
  CHECK(workers_join(std::chrono::milliseconds(10)));  // well inside the stretch alone they began
  set_cpu_threads(0);
}

// The load look, on a staged machine: a file in /proc/stat's format (set_cpu_stat_path) whose busy
// ticks are this process's own CPU time plus `others` processors kept busy by other processes. With
// the default thread count the calls run on the caller alone within the pool's first looks while
// the others take every processor, and use the workers while they take none; a count chosen with
// --threads keeps its workers either way.
namespace {
struct StagedLoad {
  std::string path = (std::filesystem::temp_directory_path() / fmt::format("qkv_stat_{}", getpid())).string();
  double others = 0;  // processors kept busy by other processes from now on
  double others_seconds = 0;
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last = start;

  // The machine's line first, then one line per processor this process may run on, the busy ticks
  // all on the first as system time. The machine's user time stays 0, so a parser that took its
  // line for processor 0's would count its idle time (growing with the wall clock) as busy.
  void write() {
    const auto now = std::chrono::steady_clock::now();
    others_seconds += others * std::chrono::duration<double>(now - last).count();
    last = now;
    timespec own{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &own);
    const double busy = static_cast<double>(own.tv_sec) + 1e-9 * static_cast<double>(own.tv_nsec) + others_seconds;
    const long long ticks = std::llround(busy * static_cast<double>(sysconf(_SC_CLK_TCK)));
    const long long idle = std::llround(std::chrono::duration<double>(now - start).count() * 2 *
                                        static_cast<double>(sysconf(_SC_CLK_TCK)));
    std::string text = fmt::format("cpu  0 0 {} {} 0 0 0 0 0 0\n", ticks, idle);
    cpu_set_t mine;
    REQUIRE(sched_getaffinity(0, sizeof mine, &mine) == 0);
    bool first = true;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &mine)) {
        text += fmt::format("cpu{} 0 0 {} 1000 0 0 0 0 0 0\n", cpu, first ? ticks : 0);
        first = false;
      }
    text += "intr 0\n";
    const std::string staging = path + ".new";
    std::FILE* file = std::fopen(staging.c_str(), "w");
    REQUIRE(file != nullptr);
    std::fputs(text.c_str(), file);
    std::fclose(file);
    REQUIRE(std::rename(staging.c_str(), path.c_str()) == 0);
  }
  // Calls for `span`, the file written before each; how many of them used a worker.
  int calls_on_workers(std::chrono::milliseconds span) {
    int joined = 0;
    const auto end = std::chrono::steady_clock::now() + span;
    while (std::chrono::steady_clock::now() < end) {
      write();
      joined += pieces_on_workers(false) > 0;
    }
    return joined;
  }
  // The last `count` calls: how many used a worker.
  int last_calls_on_workers(int count) {
    int joined = 0;
    for (int call = 0; call < count; ++call) {
      write();
      joined += pieces_on_workers(false) > 0;
    }
    return joined;
  }
  ~StagedLoad() { std::remove(path.c_str()); }
};
}  // namespace

TEST_CASE("thread pool: the default thread count runs alone while other processes keep the processors busy") {
  const char* before = std::getenv("QKV_THREADS");
  const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
  unsetenv("QKV_THREADS");
  StagedLoad load;
  load.write();
  cpu::set_cpu_stat_path(load.path);
  cpu::set_stall_rule(false);  // the staged file alone decides, however busy the real machine is
  set_cpu_threads(0);
  if (cpu_threads() < 2) {
    MESSAGE("skipped: one processor");
  } else {
    const int cores = cpu_threads();
    // nothing else running: the looks leave the calls on the workers
    (void)load.calls_on_workers(std::chrono::milliseconds(300));
    CHECK(load.calls_on_workers(std::chrono::milliseconds(300)) > 0);
    // others on every processor: within two looks, the caller alone
    load.others = cores;
    (void)load.calls_on_workers(std::chrono::milliseconds(300));
    CHECK(load.last_calls_on_workers(10) == 0);
    set_cpu_threads(2);  // chosen: the workers, busy machine or not
    (void)load.calls_on_workers(std::chrono::milliseconds(300));
    CHECK(load.last_calls_on_workers(10) > 0);
    set_cpu_threads(0);
    (void)load.calls_on_workers(std::chrono::milliseconds(300));
    CHECK(load.last_calls_on_workers(10) == 0);
    // a processor and a half left free (others on all but 1.5): still the workers
    load.others = cores - 1.5 - 0.5;
    (void)load.calls_on_workers(std::chrono::milliseconds(300));
    CHECK(load.calls_on_workers(std::chrono::milliseconds(300)) > 0);
  }
  cpu::set_cpu_stat_path("");
  cpu::set_stall_rule(true);
  if (saved) setenv("QKV_THREADS", saved->c_str(), 1);
  set_cpu_threads(0);
}

TEST_CASE("QKV_THREADS sets the default thread count; --threads (set_cpu_threads N) overrides it") {
  const char* before = std::getenv("QKV_THREADS");
  const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
  unsetenv("QKV_THREADS");
  set_cpu_threads(0);
  const int per_core = cpu_threads();
  CHECK(per_core >= 1);
  setenv("QKV_THREADS", "3", 1);
  set_cpu_threads(0);
  CHECK(cpu_threads() == 3);
  set_cpu_threads(2);
  CHECK(cpu_threads() == 2);
  setenv("QKV_THREADS", "0", 1);
  set_cpu_threads(0);
  CHECK(cpu_threads() == per_core);
  setenv("QKV_THREADS", "", 1);
  set_cpu_threads(0);
  CHECK(cpu_threads() == per_core);
  for (const char* bad : {"two", "-1", "257", "2.5", " 2", "1e2"}) {
    CAPTURE(bad);
    setenv("QKV_THREADS", bad, 1);
    const std::string expected =
        std::string("QKV_THREADS must be a whole number from 0 to 256 (0: one per core), got '") + bad + "'";
    CHECK_THROWS_WITH(set_cpu_threads(0), expected.c_str());
  }
  if (saved)
    setenv("QKV_THREADS", saved->c_str(), 1);
  else
    unsetenv("QKV_THREADS");
  set_cpu_threads(0);
}
