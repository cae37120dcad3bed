// framework/cpu/thread_pool.h — the CPU backend's threads (internal to framework/cpu/).
//
// A parallel call is cut into pieces whose number and bounds do not depend on which thread runs
// them. The calling thread publishes the call and then takes pieces itself, one at a time from a
// shared counter, alongside the pool's workers; it waits only for pieces a worker has already
// taken. A worker that the kernel has descheduled (another process on the core) therefore holds
// up at most one piece, never a fixed share of every call. Workers spin for a short while after
// a call for the next one, then sleep; the caller, waiting for a piece in a worker's hands, spins
// briefly, then sleeps, giving its core to that worker. While workers keep being taken off their
// cores (stalls), or other processes hold the processors (/proc/stat, with the default thread
// count), the calls run on the caller alone for a while: thread_pool.cpp's constants say when and
// how long. The pieces are the same either way, so are the results.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

namespace qkv::cpu {

// Threads that run pieces, the caller included (1: every call runs on the caller alone).
int pool_threads();
// 0 or less: default_threads(); at most 256. Forgets past stalls. A count set here (above 0) or by
// QKV_THREADS (above 0) is kept on a busy machine too, apart from the stretches alone after stalls.
void set_pool_threads(int threads);
// QKV_THREADS when it is set and not empty (a whole number from 0 to 256; 0 means one per
// processor), else one per processor this process may run on. Throws on any other QKV_THREADS.
int default_threads();

// Where the load look reads the processors' times, in /proc/stat's format (empty: /proc/stat);
// tests stage a machine's load with a file of their own. Looks at the load afresh.
void set_cpu_stat_path(const std::string& path);
// Whether waits for a worker count as stalls (on by default). A test of the load look turns the
// stall rule off, so that only its staged file decides, never how busy the real machine is; a
// test of the stall rule stages its stalls with pieces that sleep. Forgets past stalls.
// Which rules apply: the stall rule to every thread count above 1; the load look only to the
// default count (no --threads, QKV_THREADS unset or 0).
void set_stall_rule(bool on);

// True when a parallel call made now would run on the caller alone: one thread, a call inside
// another parallel call, a stretch alone after stalls, or a busy machine at the default count.
// (False does not promise the workers: a call made while another thread's call holds the pool also
// runs alone.) A caller whose pieces may be run as one (the results do not depend on the cut) can
// then do the whole range at once.
bool runs_alone();

// Calls call(ctx, p) once for every p in [0, pieces), on the caller and the pool's workers, and
// returns when all have returned. Runs everything on the caller with one thread, for one piece,
// inside another parallel call (nested) or while another thread's call is running.
void run_pieces(int64_t pieces, void (*call)(void* ctx, int64_t piece), void* ctx);

template <typename Fn>
void for_each_piece(int64_t pieces, Fn&& fn) {
  using F = std::remove_reference_t<Fn>;
  run_pieces(
      pieces, [](void* ctx, int64_t p) { (*static_cast<F*>(ctx))(p); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

}  // namespace qkv::cpu
