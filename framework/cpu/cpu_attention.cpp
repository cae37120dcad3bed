// framework/cpu/cpu_attention.cpp — the CPU kernels of the fused attention op (padded or ragged
// batches): tiles of 64 queries by 64 keys, an online softmax in the forward, recomputed tiles in
// the backward, tiles in parallel (thread_pool.h). Every output element is written by one task in a
// fixed order: bit-identical for any thread count. Threads take tasks one at a time as they come
// free: under a causal mask later query tiles cost more.
#include "cpu_attention.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "../attention_visibility.h"
#include "row_reductions.h"
#include "thread_pool.h"
#include "vector_exp.h"

namespace qkv::cpu {

namespace {

constexpr int64_t kTile = 64;         // queries per query tile and keys per key tile
constexpr int64_t kOnePassTiles = 4;  // the backward's one-pass path: always up to 4 tiles (256)
// The one-pass backward visits the key tiles in groups of this many: each query tile's d_q is used
// for the whole group before the next, instead of once per key tile (long sequences streamed all of
// d_q from memory once per key tile).
constexpr int64_t kGroupTiles = 4;
// Longer sequences take the one-pass path too when there are this many batch entries per thread
// (tasks enough without the two passes' tiles), or one thread.
constexpr int64_t kEntriesPerThread = 4;

// Below this many multiply-adds a call runs on the calling thread (measured on the toy bench step;
// RESULTS.md). The results do not depend on it (see the top of the file).
constexpr int64_t kParallelWork = int64_t{1} << 19;
bool parallel_worth_it(const AttentionShape& s) {
  return s.batch * s.queries * s.keys * (s.width + s.value_width) >= kParallelWork;
}

// task(0) ... task(n - 1): on the pool's threads when `parallel`, else in order on this thread.
template <typename Fn>
void for_each_task(int64_t n, bool parallel, Fn&& task) {
  if (parallel) return for_each_piece(n, task);
  for (int64_t t = 0; t < n; ++t) task(t);
}

using formula::AttentionEntry;
using formula::Visibility;

// The keys of [j0, j0 + n) that query i sees, as Visibility's operator() does, in runs: [0, n) is
// split at cut[0] <= cut[1] <= cut[2] <= cut[3] (offsets from j0) into hidden, seen, hidden, seen,
// hidden runs (the prefix's real words, then the keys from the prefix's end to the query's own
// position); the knocked-out key, if any, is `hidden` (an offset from j0, or -1).
struct KeyRuns {
  int64_t cut[4];
  int64_t hidden;
  int64_t n;
  // seen(begin, end) and hidden(begin, end) over [0, n) in order, then hidden on the knocked-out
  // key (after its run: it overrides it).
  template <typename Seen, typename Hidden>
  void visit(Seen&& seen, Hidden&& hide) const {
    const int64_t ends[5] = {cut[0], cut[1], cut[2], cut[3], n};
    int64_t j = 0;
    for (int run = 0; run < 5; ++run) {
      const int64_t end = std::max(j, ends[run]);
      if (run % 2 == 1)
        seen(j, end);
      else
        hide(j, end);
      j = end;
    }
    if (hidden >= 0) hide(hidden, hidden + 1);
  }
};
inline KeyRuns key_runs(const Visibility& vis, int64_t i, int64_t j0, int64_t n) {
  const auto at = [&](int64_t j) { return std::clamp<int64_t>(j - j0, 0, n); };
  const int64_t query = vis.query_offset + i, seen_end = std::max(vis.prefix, query + 1);
  KeyRuns r{{at(0), at(vis.words()), at(vis.prefix), at(seen_end)}, -1, n};
  if (query >= vis.knockout_from && query < vis.knockout_to && vis.knockout_key >= j0 && vis.knockout_key < j0 + n)
    r.hidden = vis.knockout_key - j0;
  return r;
}

// Which entries of a tile (queries i0.., keys j0..) can be nonzero, as bounds that follow the
// diagonal: query ii sees no key from key_end(ii) on, and key jj is seen by no query before
// query_begin(jj) (both nondecreasing). The kernels skip what lies outside. A weight there is 0,
// and a term p * m = ±0 leaves a nonzero sum bit for bit as it was (x + ±0 = x), so skipping gives
// the same bits as adding, for finite inputs, with two exceptions at the edge of the range: a sum
// that is exactly zero may differ in its sign (a product below 2^-149 that rounds to -0, or a tiny
// negative sum rescaled to -0, where an added +0 term made it +0 before), and a hidden key whose dP
// overflows no longer turns dS into NaN (0 * inf) past the reach.
struct TileReach {
  int64_t words;  // keys before this (from j0) are the prefix's real words, seen by every query
  int64_t diag;   // query ii sees the keys after the prefix up to diag + ii (from j0)
  int64_t key_end(int64_t ii) const { return std::max(words, diag + ii + 1); }
  int64_t query_begin(int64_t jj) const { return jj < words ? 0 : std::max<int64_t>(0, jj - diag); }
  static TileReach of(const Visibility& vis, int64_t i0, int64_t j0) {
    return {vis.words() - j0, vis.query_offset + i0 - j0};
  }
};

// Per-thread scratch, grown once and reused (no allocation in the steady state).
template <typename T>
struct Scratch {
  std::vector<T> scores, probs, d_probs, k_t, v_t, acc, row_max, row_sum;
  void reserve(int64_t width, int64_t value_width) {
    const auto grow = [](std::vector<T>& v, int64_t n) {
      if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
    };
    grow(scores, kTile * kTile);
    grow(probs, kTile * kTile);
    grow(d_probs, kTile * kTile);
    grow(k_t, kGroupTiles * width * kTile);  // the one-pass backward's group of key tiles
    grow(v_t, kGroupTiles * value_width * kTile);
    grow(acc, kTile * std::max(width, value_width));
    grow(row_max, kTile);
    grow(row_sum, kTile);
  }
};

// This thread's scratch, grown for heads of these widths.
template <typename T>
Scratch<T>& scratch(int64_t width, int64_t value_width) {
  thread_local Scratch<T> s;
  s.reserve(width, value_width);
  return s;
}

// One tile of keys (or values) transposed into panels of 16, so that the inner loops below run
// over keys: panel p holds keys 16p .. 16p + 15 as (cols, 16), entry (c, r) of the panel at
// c * 16 + r, the panels one after another (panel_entry). A panel is one contiguous block: rows of
// 64 keys (256 bytes apart) let a wide tile's (cols = 256) 16-key slice fall on a quarter of L1's
// sets and miss. The slots past `rows`, up to the next multiple of 16, are zero: tile_products
// reads its keys in blocks of 16.
constexpr int64_t kPanel = 16;
inline int64_t panel_entry(int64_t r, int64_t c, int64_t cols) {
  return (r / kPanel) * cols * kPanel + c * kPanel + r % kPanel;
}

// The general form: panel by panel, row r of a panel to every 16th slot from r (float32 on AVX2
// has the blocked form below).
template <typename T>
void transpose_tile_generic(const T* in, int64_t rows, int64_t cols, int64_t in_stride, T* out_t) {
  const int64_t padded = std::min(kTile, (rows + kPanel - 1) / kPanel * kPanel);
  for (int64_t p0 = 0; p0 < padded; p0 += kPanel) {
    T* panel = out_t + p0 * cols;  // (cols, 16)
    for (int64_t r = 0; r < kPanel; ++r)
      for (int64_t c = 0; c < cols; ++c) panel[c * kPanel + r] = p0 + r < rows ? in[(p0 + r) * in_stride + c] : T(0);
  }
}

void transpose_tile_avx2(const float* in, int64_t rows, int64_t cols, int64_t in_stride, float* out_t);
// The AVX2 + FMA forms run where the processor has both.
bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

// in's rows are in_stride entries apart (its width, or more when it is a column block of a wider
// matrix).
template <typename T>
void transpose_tile(const T* in, int64_t rows, int64_t cols, int64_t in_stride, T* out_t) {
  if constexpr (std::is_same_v<T, float>) {
    if (cols % 8 == 0 && has_avx2()) return transpose_tile_avx2(in, rows, cols, in_stride, out_t);
  }
  transpose_tile_generic(in, rows, cols, in_stride, out_t);
}

// c (nq, kTile) = a (nq, width) @ b (nk, width)^T over the first nk columns, b in transpose_tile's
// panels, a's rows a_stride entries apart; inner loop over keys. Row i's entries from
// reach.key_end(i) on may be left unwritten (the blocked kernels write whole blocks). The general
// form (float64, used by the gradchecks); float32 has the blocked kernel below.
template <typename T>
void tile_products(const T* a, int64_t nq, int64_t width, int64_t a_stride, const T* b_t, int64_t nk, T* c,
                   TileReach reach) {
  for (int64_t i = 0; i < nq; ++i) {
    T* row = c + i * kTile;
    const int64_t end = std::min(nk, reach.key_end(i));
    for (int64_t j = 0; j < end; ++j) row[j] = 0;
    const T* a_row = a + i * a_stride;
    for (int64_t d = 0; d < width; ++d) {
      const T x = a_row[d];
      for (int64_t j = 0; j < end; ++j) row[j] += x * b_t[panel_entry(j, d, width)];
    }
  }
}

// The float32 tile product, blocked for registers: 4 rows by 16 keys of accumulators (two 8-wide
// registers; AVX-512 below: one 16-wide register per panel), each step of d one broadcast of a per
// row and one load of b_t per register. GCC's vector extension keeps it portable; an AVX2 + FMA copy
// is chosen at run time where the CPU has both. Each entry still sums over d in order. Reads b_t's
// keys up to nk rounded up to 16 (transpose_tile zero-fills those past nk).
typedef float Floats8 __attribute__((vector_size(32)));
typedef float Floats16 __attribute__((vector_size(64)));

// One step of a register block: Regs registers of V loaded from `from` (`step` floats apart), then
// acc[r][k] += w[r] * v[k] for its 4 rows. Unrolled, so that acc stays in registers; inlined into
// each form's copy, so it is compiled for that copy's instruction set.
template <typename V, int Regs>
__attribute__((always_inline)) inline void block_step(V (&acc)[4][Regs], const float (&w)[4], const float* from,
                                                      int64_t step) {
  V v[Regs];
#pragma GCC unroll 4
  for (int k = 0; k < Regs; ++k) std::memcpy(&v[k], from + k * step, sizeof v[k]);
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
    for (int k = 0; k < Regs; ++k) acc[r][k] += w[r] * v[k];
}

// The rows i0 .. i0 + 3 of x (`stride` apart), the last of `rows` repeated where fewer are left
// (computed, not stored).
inline void four_rows(const float* x, int64_t i0, int64_t rows, int64_t stride, const float* (&out)[4]) {
  for (int64_t r = 0; r < 4; ++r) out[r] = x + (i0 + std::min(r, rows - 1)) * stride;
}

// A block of 4 rows of a by Regs registers of keys, register k read `step` floats after the one
// before in b_t's panels: c[r][k * lanes ..] = a_row[r] . those keys, written for the real rows.
template <typename V, int Regs>
__attribute__((always_inline)) inline void product_block(const float* const (&a_rows)[4], int64_t rows, int64_t width,
                                                         const float* panel, int64_t step, float* c) {
  V acc[4][Regs] = {};
  for (int64_t d = 0; d < width; ++d) {
    const float w[4] = {a_rows[0][d], a_rows[1][d], a_rows[2][d], a_rows[3][d]};
    block_step<V, Regs>(acc, w, panel + d * kPanel, step);
  }
  for (int64_t r = 0; r < rows; ++r)
#pragma GCC unroll 4
    for (int k = 0; k < Regs; ++k) std::memcpy(c + r * kTile + k * (sizeof(V) / 4), &acc[r][k], sizeof acc[r][k]);
}

// Key blocks outside, rows inside: a 16-key panel of b_t (width x 64 bytes, contiguous) stays in L1
// while every row of a passes it; the other order streamed all of b_t from L2 once per 4 rows.
__attribute__((always_inline)) inline void tile_products_body(const float* a, int64_t nq, int64_t width,
                                                              int64_t a_stride, const float* b_t, int64_t nk, float* c,
                                                              TileReach reach) {
  for (int64_t j0 = 0; j0 < nk; j0 += kPanel)  // past nk: zero keys of b_t, up to a multiple of 16
    for (int64_t i0 = 0; i0 < nq; i0 += 4) {
      const int64_t rows = std::min<int64_t>(4, nq - i0);
      if (reach.key_end(i0 + rows - 1) <= j0) continue;  // no row of the block sees this panel
      const float* a_rows[4];
      four_rows(a, i0, rows, a_stride, a_rows);
      product_block<Floats8, 2>(a_rows, rows, width, b_t + j0 * width, 8, c + i0 * kTile + j0);
    }
}

__attribute__((target("avx2,fma"))) void tile_products_avx2(const float* a, int64_t nq, int64_t width, int64_t a_stride,
                                                            const float* b_t, int64_t nk, float* c, TileReach reach) {
  tile_products_body(a, nq, width, a_stride, b_t, nk, c, reach);
}
void tile_products_generic(const float* a, int64_t nq, int64_t width, int64_t a_stride, const float* b_t, int64_t nk,
                           float* c, TileReach reach) {
  tile_products_body(a, nq, width, a_stride, b_t, nk, c, reach);
}

// The same products on AVX-512: a 16-key panel is one 16-wide register, so a block of 4 rows by 32
// keys (two panels) takes 2 loads of b_t and 4 broadcasts of a per step of d for 8 fused
// multiply-adds of 16, twice the AVX2 block's work per load; an odd last panel takes 4 rows by
// 16 keys. Each entry is the same chain of fused multiply-adds over d in order as the AVX2 form,
// so the two give the same bits.
bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  return yes;
}

__attribute__((target("avx512f,fma"))) void tile_products_avx512(const float* a, int64_t nq, int64_t width,
                                                                 int64_t a_stride, const float* b_t, int64_t nk,
                                                                 float* c, TileReach reach) {
  for (int64_t i0 = 0; i0 < nq; i0 += 4) {
    const int64_t rows = std::min<int64_t>(4, nq - i0);
    const int64_t end = std::min(nk, reach.key_end(i0 + rows - 1));  // the block's rows see no key past it
    const float* a_rows[4];
    four_rows(a, i0, rows, a_stride, a_rows);
    float* c_rows = c + i0 * kTile;
    // four panels at a time while they are all live, then two, then one
    int64_t j0 = 0;
    for (; j0 + 3 * kPanel < end; j0 += 4 * kPanel)
      product_block<Floats16, 4>(a_rows, rows, width, b_t + j0 * width, kPanel * width, c_rows + j0);
    for (; j0 + kPanel < end; j0 += 2 * kPanel)
      product_block<Floats16, 2>(a_rows, rows, width, b_t + j0 * width, kPanel * width, c_rows + j0);
    if (j0 < end) product_block<Floats16, 1>(a_rows, rows, width, b_t + j0 * width, kPanel * width, c_rows + j0);
  }
}

template <>
void tile_products<float>(const float* a, int64_t nq, int64_t width, int64_t a_stride, const float* b_t, int64_t nk,
                          float* c, TileReach reach) {
  if (has_avx512())
    tile_products_avx512(a, nq, width, a_stride, b_t, nk, c, reach);
  else if (has_avx2())
    tile_products_avx2(a, nq, width, a_stride, b_t, nk, c, reach);
  else
    tile_products_generic(a, nq, width, a_stride, b_t, nk, c, reach);
}

// The float32 transpose on AVX2, for widths that are a multiple of 8: 8 x 8 blocks through
// registers (8 row loads, three rounds of shuffles, 8 stores of 8 keys), instead of one scalar
// store per entry into every 16th slot. Rows past `rows`, up to the panel's end, load as zeros.
__attribute__((target("avx2"))) void transpose_tile_avx2(const float* in, int64_t rows, int64_t cols, int64_t in_stride,
                                                         float* out_t) {
  const int64_t padded = std::min(kTile, (rows + kPanel - 1) / kPanel * kPanel);
  for (int64_t r0 = 0; r0 < padded; r0 += 8) {  // 8 rows: half a panel
    float* half = out_t + (r0 / kPanel) * cols * kPanel + r0 % kPanel;
    for (int64_t c0 = 0; c0 < cols; c0 += 8) {
      __m256 x[8];  // unrolled, the arrays stay in registers (else GCC 12 keeps them on the stack)
#pragma GCC unroll 8
      for (int r = 0; r < 8; ++r)
        x[r] = r0 + r < rows ? _mm256_loadu_ps(in + (r0 + r) * in_stride + c0) : _mm256_setzero_ps();
      // pairs of rows interleaved, then quads, then the 128-bit halves swapped across
      const __m256 a0 = _mm256_unpacklo_ps(x[0], x[1]), a1 = _mm256_unpackhi_ps(x[0], x[1]);
      const __m256 a2 = _mm256_unpacklo_ps(x[2], x[3]), a3 = _mm256_unpackhi_ps(x[2], x[3]);
      const __m256 a4 = _mm256_unpacklo_ps(x[4], x[5]), a5 = _mm256_unpackhi_ps(x[4], x[5]);
      const __m256 a6 = _mm256_unpacklo_ps(x[6], x[7]), a7 = _mm256_unpackhi_ps(x[6], x[7]);
      const __m256 b0 = _mm256_shuffle_ps(a0, a2, 0x44), b1 = _mm256_shuffle_ps(a0, a2, 0xEE);
      const __m256 b2 = _mm256_shuffle_ps(a1, a3, 0x44), b3 = _mm256_shuffle_ps(a1, a3, 0xEE);
      const __m256 b4 = _mm256_shuffle_ps(a4, a6, 0x44), b5 = _mm256_shuffle_ps(a4, a6, 0xEE);
      const __m256 b6 = _mm256_shuffle_ps(a5, a7, 0x44), b7 = _mm256_shuffle_ps(a5, a7, 0xEE);
      const __m256 column[8] = {_mm256_permute2f128_ps(b0, b4, 0x20), _mm256_permute2f128_ps(b1, b5, 0x20),
                                _mm256_permute2f128_ps(b2, b6, 0x20), _mm256_permute2f128_ps(b3, b7, 0x20),
                                _mm256_permute2f128_ps(b0, b4, 0x31), _mm256_permute2f128_ps(b1, b5, 0x31),
                                _mm256_permute2f128_ps(b2, b6, 0x31), _mm256_permute2f128_ps(b3, b7, 0x31)};
#pragma GCC unroll 8
      for (int c = 0; c < 8; ++c) _mm256_storeu_ps(half + (c0 + c) * kPanel, column[c]);
    }
  }
}

// Where entry (r, j) of a tile of weights lies: p[r * row + j * col]. A tile as written (kRows: its
// rows are queries) or read as its transpose (kColumns: its rows are keys), without a copy.
struct TileLayout {
  int64_t row, col;
  bool rows_are_keys;
};
constexpr TileLayout kRows{kTile, 1, false}, kColumns{1, kTile, true};

// The inner indices [begin, end) of rows r_first..r_last of a tile read through `at` that can hold a
// nonzero weight (TileReach), within [0, n).
struct Span {
  int64_t begin, end;
};
inline Span live_span(TileLayout at, TileReach reach, int64_t r_first, int64_t r_last, int64_t n) {
  if (at.rows_are_keys) return {std::min(n, reach.query_begin(r_first)), n};
  return {0, std::min(n, reach.key_end(r_last))};
}

// The float32 form for widths that are a multiple of 16 * Regs / (16 / lanes of V): 4 rows by Regs
// registers of columns, summing over j in order; AVX2 (and the portable copy) takes two 8-wide
// registers, AVX-512 4 (widths that are a multiple of 64: one load of m per 4 fused multiply-adds,
// and p's entries read once per 64 columns) or 2 (other multiples of 32), with the AVX2 form's bits.
// Column blocks outside, rows inside: a slice of m, copied into one contiguous block (m's own rows,
// width apart, would fall on a few of L1's sets), stays in L1 while every row of p passes it. n is
// at most kTile.
template <typename V, int Regs>
__attribute__((always_inline)) inline void accumulate_rows_blocked(const float* p, TileLayout at, TileReach reach,
                                                                   int64_t rows, int64_t n, const float* m,
                                                                   int64_t m_stride, int64_t width, float* acc,
                                                                   int64_t acc_stride) {
  constexpr int64_t kLanesOf = sizeof(V) / sizeof(float), kCols = kLanesOf * Regs;
  alignas(64) float slice[kTile * kCols];
  for (int64_t c0 = 0; c0 < width; c0 += kCols) {
    for (int64_t j = 0; j < n; ++j) std::memcpy(slice + j * kCols, m + j * m_stride + c0, kCols * sizeof(float));
    for (int64_t i0 = 0; i0 < rows; i0 += 4) {
      const int64_t valid = std::min<int64_t>(4, rows - i0);
      const float* p_rows[4];
      float* out_rows[4];
      for (int64_t r = 0; r < 4; ++r) {
        const int64_t row = i0 + std::min(r, valid - 1);  // fewer than 4 rows: the last one repeats
        p_rows[r] = p + row * at.row;
        out_rows[r] = acc + row * acc_stride + c0;
      }
      V s[4][Regs];  // unrolled loops keep these in registers
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
        for (int k = 0; k < Regs; ++k) std::memcpy(&s[r][k], out_rows[r] + kLanesOf * k, sizeof(V));
      const Span live = live_span(at, reach, i0, i0 + valid - 1, n);
      for (int64_t j = live.begin; j < live.end; ++j) {
        const int64_t jc = j * at.col;
        const float w[4] = {p_rows[0][jc], p_rows[1][jc], p_rows[2][jc], p_rows[3][jc]};
        block_step<V, Regs>(s, w, slice + j * kCols, kLanesOf);
      }
      for (int64_t r = 0; r < valid; ++r)
#pragma GCC unroll 4
        for (int k = 0; k < Regs; ++k) std::memcpy(out_rows[r] + kLanesOf * k, &s[r][k], sizeof(V));
    }
  }
}

__attribute__((target("avx2,fma"))) void accumulate_rows_avx2(const float* p, TileLayout at, TileReach reach,
                                                              int64_t rows, int64_t n, const float* m, int64_t m_stride,
                                                              int64_t width, float* acc, int64_t acc_stride) {
  accumulate_rows_blocked<Floats8, 2>(p, at, reach, rows, n, m, m_stride, width, acc, acc_stride);
}
void accumulate_rows_generic(const float* p, TileLayout at, TileReach reach, int64_t rows, int64_t n, const float* m,
                             int64_t m_stride, int64_t width, float* acc, int64_t acc_stride) {
  accumulate_rows_blocked<Floats8, 2>(p, at, reach, rows, n, m, m_stride, width, acc, acc_stride);
}
template <int Regs>
__attribute__((target("avx512f,fma"))) void accumulate_rows_avx512(const float* p, TileLayout at, TileReach reach,
                                                                   int64_t rows, int64_t n, const float* m,
                                                                   int64_t m_stride, int64_t width, float* acc,
                                                                   int64_t acc_stride) {
  accumulate_rows_blocked<Floats16, Regs>(p, at, reach, rows, n, m, m_stride, width, acc, acc_stride);
}

// acc (rows, width) += p (rows, n) @ m (n, width), p's entries where `at` places them (kColumns:
// p (n, kTile)[:, :rows]^T, a tile read as its transpose); inner loop over the width. m's rows are m_stride entries apart and acc's acc_stride (the width, or more for
// a column block). float32 widths that are a multiple of 16 take the blocked forms above.
template <typename T>
void accumulate_rows(const T* p, TileLayout at, TileReach reach, int64_t rows, int64_t n, const T* m, int64_t m_stride,
                     int64_t width, T* acc, int64_t acc_stride) {
  if constexpr (std::is_same_v<T, float>) {
    if (width % 64 == 0 && has_avx512())
      return accumulate_rows_avx512<4>(p, at, reach, rows, n, m, m_stride, width, acc, acc_stride);
    if (width % 32 == 0 && has_avx512())
      return accumulate_rows_avx512<2>(p, at, reach, rows, n, m, m_stride, width, acc, acc_stride);
    if (width % 16 == 0 && has_avx2())
      return accumulate_rows_avx2(p, at, reach, rows, n, m, m_stride, width, acc, acc_stride);
    if (width % 16 == 0) return accumulate_rows_generic(p, at, reach, rows, n, m, m_stride, width, acc, acc_stride);
  }
  for (int64_t i = 0; i < rows; ++i) {
    T* out = acc + i * acc_stride;
    const Span live = live_span(at, reach, i, i, n);
    for (int64_t j = live.begin; j < live.end; ++j) {
      const T w = p[i * at.row + j * at.col];
      const T* m_row = m + j * m_stride;
      for (int64_t d = 0; d < width; ++d) out[d] += w * m_row[d];
    }
  }
}

// probs = exp(scores * scale + bias - lse) where visible, else 0 (also 0 for a query that sees
// nothing), the visible keys found through each row's runs (Visibility::runs).
template <typename T>
void recompute_probs(const Visibility& vis, int64_t i0, int64_t nq, int64_t j0, int64_t nk, T scale, const T* lse,
                     T* scores, T* probs) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (int64_t ii = 0; ii < nq; ++ii) {
    const T l = lse[i0 + ii];
    T* p = probs + ii * kTile;
    const T* s = scores + ii * kTile;
    if (l == neg_inf) {
      std::fill(p, p + nk, neg_inf);
    } else if (vis.distance_slope != 0) {
      for (int64_t jj = 0; jj < nk; ++jj)
        p[jj] = vis(i0 + ii, j0 + jj) ? (s[jj] * scale + vis.bias<T>(i0 + ii, j0 + jj)) - l : neg_inf;
    } else {
      // without a slope, exactly the expression the op had before ALiBi (the same bits)
      key_runs(vis, i0 + ii, j0, nk)
          .visit(
              [&](int64_t b, int64_t e) {
                for (int64_t jj = b; jj < e; ++jj) p[jj] = s[jj] * scale - l;
              },
              [&](int64_t b, int64_t e) { std::fill(p + b, p + e, neg_inf); });
    }
    exp_in_place(p, nk);
  }
}

// scores[ii, :nk] = score * scale (+ the ALiBi bias) where query i0 + ii sees key j0 + jj, else
// -inf: the same values, entry by entry, as testing each key, through the row's runs.
template <typename T>
void mask_scores(const Visibility& vis, int64_t i0, int64_t nq, int64_t j0, int64_t nk, T scale, T* scores) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (int64_t ii = 0; ii < nq; ++ii) {
    T* row = scores + ii * kTile;
    key_runs(vis, i0 + ii, j0, nk)
        .visit(
            [&](int64_t b, int64_t e) {
              for (int64_t jj = b; jj < e; ++jj) row[jj] *= scale;
            },
            [&](int64_t b, int64_t e) { std::fill(row + b, row + e, neg_inf); });
    if (vis.distance_slope != 0)
      for (int64_t jj = 0; jj < nk; ++jj)
        if (row[jj] != neg_inf) row[jj] += vis.bias<T>(i0 + ii, j0 + jj);
  }
}

// The float32 forward on AVX2 without ALiBi takes the row's passes fused: mask_scores and row_max
// in one pass (scale_mask_max), the difference and its exp in another (exp_of_difference), with
// the values of the separate passes entry by entry.
template <typename T>
bool fast_softmax_rows(const Visibility& vis) {
  return std::is_same_v<T, float> && vis.distance_slope == 0 && has_avx2();
}

// One row of mask_scores's values (score * scale where seen, -inf where hidden) in place over
// [0, runs.n), and the row's max as row_max gives it (row_max's own NaN when any entry is NaN; else
// the largest, up to the sign of a zero).
__attribute__((target("avx2,fma"))) float scale_mask_max_avx2(const KeyRuns& runs, float scale, float* row) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const int64_t n = runs.n, whole = (n + 7) / 8 * 8;  // row has kTile entries: whole <= kTile
  // every entry scaled (those past n too, which nothing reads), then the hidden runs set to -inf
  const __m256 scale8 = _mm256_set1_ps(scale);
  for (int64_t j = 0; j < whole; j += 8) _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), scale8));
  const int64_t hidden_ends[3] = {runs.cut[0], runs.cut[2], n}, hidden_begins[3] = {0, runs.cut[1], runs.cut[3]};
  for (int run = 0; run < 3; ++run)
    for (int64_t j = hidden_begins[run]; j < hidden_ends[run]; ++j) row[j] = neg_inf;
  if (runs.hidden >= 0) row[runs.hidden] = neg_inf;
  // the max over [0, n): the last block's lanes past n read as -inf
  const __m256 lane = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7), minus_inf = _mm256_set1_ps(neg_inf);
  __m256 best = minus_inf, nan = _mm256_setzero_ps();
  for (int64_t j = 0; j < whole; j += 8) {
    __m256 x = _mm256_loadu_ps(row + j);
    if (j + 8 > n)
      x = _mm256_blendv_ps(x, minus_inf, _mm256_cmp_ps(lane, _mm256_set1_ps(static_cast<float>(n - j)), _CMP_GE_OQ));
    best = _mm256_max_ps(best, x);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
  if (_mm256_movemask_ps(nan) != 0) return row_max(row, n);  // the same NaN as row_max, bit for bit
  best = _mm256_max_ps(best, _mm256_permute2f128_ps(best, best, 1));
  best = _mm256_max_ps(best, _mm256_shuffle_ps(best, best, 0x4E));
  best = _mm256_max_ps(best, _mm256_shuffle_ps(best, best, 0xB1));
  return _mm256_cvtss_f32(best);
}

template <typename T>
T scale_mask_max(const KeyRuns& runs, T scale, T* row) {
  if constexpr (std::is_same_v<T, float>) return scale_mask_max_avx2(runs, scale, row);
  throw std::logic_error("scale_mask_max: float32 only");
}

// One key tile of the forward's online softmax over the tile's scores (w.scores, nq x nk): each
// row's running max and sum (w.row_max, w.row_sum) and its output accumulator (acc, nq x Kv) are
// rescaled to the new max, and w.probs gets exp(score - max), ready for acc += probs @ v. Each
// row's values are its own; the rows' sums run four side by side (independent chains of
// additions, each in key order), which the processor overlaps.
template <typename T>
void online_softmax_tile(const Visibility& vis, int64_t i0, int64_t nq, int64_t j0, int64_t nk, T scale, Scratch<T>& w,
                         T* acc, int64_t Kv) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  const bool fast = fast_softmax_rows<T>(vis);
  if (!fast) mask_scores(vis, i0, nq, j0, nk, scale, w.scores.data());
  T new_max[kTile], tile_sum[kTile];
  for (int64_t ii = 0; ii < nq; ++ii) {
    T* row = w.scores.data() + ii * kTile;
    T* p = w.probs.data() + ii * kTile;
    // a NaN score makes the row NaN; in lanes, the max may differ from a running max only in the
    // sign of a zero, which every use below takes back out (a difference, an exp, a sum with log)
    const T tile_max = fast ? scale_mask_max(key_runs(vis, i0 + ii, j0, nk), scale, row) : row_max(row, nk);
    const T old_max = w.row_max[ii];
    new_max[ii] = (tile_max > old_max || tile_max != tile_max) ? tile_max : old_max;
    if (new_max[ii] == neg_inf) {  // nothing visible to this query yet
      for (int64_t jj = 0; jj < nk; ++jj) p[jj] = 0;
      continue;
    }
    if (fast) {
      exp_of_difference(row, nk, new_max[ii], p);
      continue;
    }
    for (int64_t jj = 0; jj < nk; ++jj) p[jj] = row[jj] - new_max[ii];  // -inf where masked
    exp_in_place(p, nk);
  }
  int64_t ii = 0;
  for (; ii + 4 <= nq; ii += 4) {
    const T* p = w.probs.data() + ii * kTile;
    T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int64_t jj = 0; jj < nk; ++jj) {
      s0 += p[jj];
      s1 += p[kTile + jj];
      s2 += p[2 * kTile + jj];
      s3 += p[3 * kTile + jj];
    }
    tile_sum[ii] = s0, tile_sum[ii + 1] = s1, tile_sum[ii + 2] = s2, tile_sum[ii + 3] = s3;
  }
  for (; ii < nq; ++ii) {
    T sum = 0;
    for (int64_t jj = 0; jj < nk; ++jj) sum += w.probs[ii * kTile + jj];
    tile_sum[ii] = sum;
  }
  for (ii = 0; ii < nq; ++ii) {
    if (new_max[ii] == neg_inf) continue;
    const T old_max = w.row_max[ii];
    const T rescale = old_max == neg_inf ? T(0) : std::exp(old_max - new_max[ii]);
    w.row_sum[ii] = w.row_sum[ii] * rescale + tile_sum[ii];
    w.row_max[ii] = new_max[ii];
    if (rescale != T(1))
      for (int64_t d = 0; d < Kv; ++d) acc[ii * Kv + d] *= rescale;
  }
}

template <typename T>
void forward_typed(const AttentionShape& s, const T* q, const T* k, const T* v, T* out, T* lse) {
  const int64_t B = s.batch, K = s.width, Kv = s.value_width;
  const int64_t qs = s.q_step(), ks = s.k_step(), vs = s.v_step();  // row strides
  const int64_t q_tiles = (s.queries + kTile - 1) / kTile, k_tiles = (s.keys + kTile - 1) / kTile;
  const T scale = static_cast<T>(s.scale), neg_inf = -std::numeric_limits<T>::infinity();
  const bool parallel = parallel_worth_it(s);
  const formula::AttentionEntries entries = formula::attention_entries(s);
  // With several query tiles per entry (long sequences; never the translator's training tiles),
  // every key tile is transposed once, up front, for all of them (each (key tile) x (query tile)
  // pair took its own copy before): (entry, key tile) at ((b * k_tiles + t) * K * kTile), for the
  // call only. That is B x the longest entry's key tiles x 64 x K entries: about the size of k for
  // a padded batch, more for a ragged one with one long entry. Only written slots are read.
  const bool shared_keys = q_tiles > 1;
  std::unique_ptr<T[]> keys_t;
  if (shared_keys) {
    keys_t = std::make_unique_for_overwrite<T[]>(static_cast<size_t>(B * k_tiles * K * kTile));
    for_each_task(B * k_tiles, parallel, [&](int64_t task) {
      const AttentionEntry e = entries[task / k_tiles];
      const int64_t j0 = (task % k_tiles) * kTile;
      if (j0 < e.nk)
        transpose_tile(k + (e.k0 + j0) * ks, std::min(kTile, e.nk - j0), K, ks, keys_t.get() + task * K * kTile);
    });
  }
  for_each_task(B * q_tiles, parallel, [&](int64_t task) {
    const AttentionEntry e = entries[task / q_tiles];
    const Visibility& vis = e.vis;
    const int64_t i0 = (task % q_tiles) * kTile, nq = std::min(kTile, e.nq - i0);
    if (nq <= 0) return;  // a ragged entry shorter than the longest
    Scratch<T>& w = scratch<T>(K, Kv);
    const T* q_tile = q + (e.q0 + i0) * qs;
    T* acc = w.acc.data();
    std::fill(acc, acc + nq * Kv, T(0));
    std::fill(w.row_max.begin(), w.row_max.begin() + nq, neg_inf);
    std::fill(w.row_sum.begin(), w.row_sum.begin() + nq, T(0));
    for (int64_t j0 = 0; j0 < e.nk; j0 += kTile) {
      const int64_t nk = std::min(kTile, e.nk - j0);
      if (!vis.any(i0 + nq, j0, j0 + nk)) continue;
      const T* key_panels = w.k_t.data();
      if (shared_keys)
        key_panels = keys_t.get() + ((task / q_tiles) * k_tiles + j0 / kTile) * K * kTile;
      else
        transpose_tile(k + (e.k0 + j0) * ks, nk, K, ks, w.k_t.data());
      const TileReach reach = TileReach::of(vis, i0, j0);
      tile_products(q_tile, nq, K, qs, key_panels, nk, w.scores.data(), reach);
      online_softmax_tile(vis, i0, nq, j0, nk, scale, w, acc, Kv);
      accumulate_rows(w.probs.data(), kRows, reach, nq, nk, v + (e.k0 + j0) * vs, vs, Kv, acc, Kv);
    }
    for (int64_t ii = 0; ii < nq; ++ii) {
      const int64_t row = e.q0 + i0 + ii;
      T* o = out + row * Kv;
      const T sum = w.row_sum[ii];
      if (sum == T(0)) {
        for (int64_t d = 0; d < Kv; ++d) o[d] = 0;
        lse[row] = neg_inf;
      } else {
        const T inv = T(1) / sum;
        for (int64_t d = 0; d < Kv; ++d) o[d] = acc[ii * Kv + d] * inv;
        lse[row] = w.row_max[ii] + std::log(sum);
      }
    }
  });
}

// The first `width` entries of `rows` rows, `stride` apart: set to `value`, or multiplied by `factor`.
template <typename T>
void fill_rows(T* x, int64_t rows, int64_t width, int64_t stride, T value) {
  for (int64_t r = 0; r < rows; ++r) std::fill(x + r * stride, x + r * stride + width, value);
}
template <typename T>
void scale_rows(T* x, int64_t rows, int64_t width, int64_t stride, T factor) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t d = 0; d < width; ++d) x[r * stride + d] *= factor;
}

// dots[r] = sum_e a[r, e] * b[r, e] for rows [r0, r1) of two (rows, width) matrices, each in e
// order. Eight rows go side by side: eight independent chains of additions, which the processor
// overlaps, where one row at a time waited on each addition.
template <typename T>
void row_dots(const T* a, const T* b, int64_t width, int64_t r0, int64_t r1, T* dots) {
  int64_t r = r0;
  for (; r + 8 <= r1; r += 8) {
    T sums[8] = {};
    for (int64_t e = 0; e < width; ++e)
      for (int64_t k = 0; k < 8; ++k) sums[k] += a[(r + k) * width + e] * b[(r + k) * width + e];
    for (int64_t k = 0; k < 8; ++k) dots[r + k] = sums[k];
  }
  for (; r < r1; ++r) {
    T sum = 0;
    for (int64_t e = 0; e < width; ++e) sum += a[r * width + e] * b[r * width + e];
    dots[r] = sum;
  }
}

// The backward's inputs and outputs, shared by its passes, and dS for one tile.
template <typename T>
struct BackwardTiles {
  const AttentionShape& s;
  const T *q, *k, *v, *d_out, *lse;
  T *d_q, *d_k, *d_v;
  int64_t K = s.width, Kv = s.value_width;
  int64_t qs = s.q_step(), ks = s.k_step(), vs = s.v_step();  // row strides of q and d_q, k and d_k, v and d_v
  T scale = static_cast<T>(s.scale);
  bool parallel = parallel_worth_it(s);
  formula::AttentionEntries entries = formula::attention_entries(s);
  int64_t q_tiles = (s.queries + kTile - 1) / kTile, k_tiles = (s.keys + kTile - 1) / kTile;
  // delta_i = sum_e d_out[i, e] * out[i, e]  (= sum_j P_ij dP_ij), one per query
  std::vector<T> delta = std::vector<T>(static_cast<size_t>(s.query_rows()));

  // One tile's gradients: dS_ij = P_ij (dP_ij - delta_i) into w.d_probs (P in w.probs; 0 past each
  // row's reach, where P is 0 and dP was not computed), then added to d_v and d_k of its keys (with
  // to_keys), d_q of its queries (with to_queries). k_t and v_t: the key tile's panels (transpose_tile).
  void tile_grads(Scratch<T>& w, const T* k_t, const T* v_t, const AttentionEntry& e, int64_t i0, int64_t nq,
                  int64_t j0, int64_t nk, bool to_keys, bool to_queries) const {
    const TileReach reach = TileReach::of(e.vis, i0, j0);
    tile_products(q + (e.q0 + i0) * qs, nq, K, qs, k_t, nk, w.scores.data(), reach);
    recompute_probs(e.vis, i0, nq, j0, nk, scale, lse + e.q0, w.scores.data(), w.probs.data());
    tile_products(d_out + (e.q0 + i0) * Kv, nq, Kv, Kv, v_t, nk, w.d_probs.data(), reach);
    for (int64_t ii = 0; ii < nq; ++ii) {
      T* ds = w.d_probs.data() + ii * kTile;
      const T* p = w.probs.data() + ii * kTile;
      const int64_t end = std::clamp<int64_t>(reach.key_end(ii), 0, nk);
      for (int64_t jj = 0; jj < end; ++jj) ds[jj] = p[jj] * (ds[jj] - delta[e.q0 + i0 + ii]);
      std::fill(ds + end, ds + nk, T(0));
    }
    if (to_keys) {
      accumulate_rows(w.probs.data(), kColumns, reach, nk, nq, d_out + (e.q0 + i0) * Kv, Kv, Kv, d_v + (e.k0 + j0) * vs,
                      vs);
      accumulate_rows(w.d_probs.data(), kColumns, reach, nk, nq, q + (e.q0 + i0) * qs, qs, K, d_k + (e.k0 + j0) * ks,
                      ks);
    }
    if (to_queries)
      accumulate_rows(w.d_probs.data(), kRows, reach, nq, nk, k + (e.k0 + j0) * ks, ks, K, d_q + (e.q0 + i0) * qs, qs);
  }

  // One task per batch entry visits each visible tile pair once, computes its weights once and adds
  // all three gradients from them (short sequences, as in training the translator, and long ones
  // with one thread or entries enough). The key tiles go in groups of kGroupTiles: for each query
  // tile, every key tile of the group. d_k of a key tile sums over query tiles in order and d_q of
  // a query tile over key tiles in order (group after group): the same sums, in the same order, as
  // the two passes of two_passes, which recompute every tile twice but give long sequences tasks
  // enough.
  void one_pass() const {
    const int64_t B = s.batch;
    for_each_task(B, parallel, [&](int64_t b) {
      const AttentionEntry e = entries[b];
      Scratch<T>& w = scratch<T>(K, Kv);
      fill_rows(d_k + e.k0 * ks, e.nk, K, ks, T(0));
      fill_rows(d_v + e.k0 * vs, e.nk, Kv, vs, T(0));
      fill_rows(d_q + e.q0 * qs, e.nq, K, qs, T(0));
      const auto panels = [&](int64_t t) {  // key tile t of the group: its K and V panels
        return std::pair<T*, T*>{w.k_t.data() + t * K * kTile, w.v_t.data() + t * Kv * kTile};
      };
      for (int64_t g0 = 0; g0 < e.nk; g0 += kGroupTiles * kTile) {
        const int64_t g_end = std::min(e.nk, g0 + kGroupTiles * kTile);
        for (int64_t j0 = g0; j0 < g_end; j0 += kTile) {
          const int64_t nk = std::min(kTile, e.nk - j0);
          if (!e.vis.any(e.nq, j0, j0 + nk)) continue;
          const auto [k_t, v_t] = panels((j0 - g0) / kTile);
          transpose_tile(k + (e.k0 + j0) * ks, nk, K, ks, k_t);
          transpose_tile(v + (e.k0 + j0) * vs, nk, Kv, vs, v_t);
        }
        for (int64_t i0 = 0; i0 < e.nq; i0 += kTile) {
          const int64_t nq = std::min(kTile, e.nq - i0);
          for (int64_t j0 = g0; j0 < g_end; j0 += kTile) {
            const int64_t nk = std::min(kTile, e.nk - j0);
            if (!e.vis.any(i0 + nq, j0, j0 + nk)) continue;
            const auto [k_t, v_t] = panels((j0 - g0) / kTile);
            tile_grads(w, k_t, v_t, e, i0, nq, j0, nk, true, true);
          }
        }
      }
      scale_rows(d_k + e.k0 * ks, e.nk, K, ks, scale);
      scale_rows(d_q + e.q0 * qs, e.nq, K, qs, scale);
    });
  }

  // Long sequences: pass 1, one task per key tile, then pass 2, one task per query tile.
  void two_passes() const {
    const int64_t B = s.batch;
    // Pass 1, one task per key tile: d_v_j = sum_i P_ij d_out_i, d_k_j = scale * sum_i dS_ij q_i.
    for_each_task(B * k_tiles, parallel, [&](int64_t task) {
      const AttentionEntry e = entries[task / k_tiles];
      const int64_t j0 = (task % k_tiles) * kTile, nk = std::min(kTile, e.nk - j0);
      if (nk <= 0) return;  // a ragged entry shorter than the longest
      Scratch<T>& w = scratch<T>(K, Kv);
      transpose_tile(k + (e.k0 + j0) * ks, nk, K, ks, w.k_t.data());
      transpose_tile(v + (e.k0 + j0) * vs, nk, Kv, vs, w.v_t.data());
      T* dk = d_k + (e.k0 + j0) * ks;
      fill_rows(dk, nk, K, ks, T(0));
      fill_rows(d_v + (e.k0 + j0) * vs, nk, Kv, vs, T(0));
      for (int64_t i0 = 0; i0 < e.nq; i0 += kTile) {
        const int64_t nq = std::min(kTile, e.nq - i0);
        if (!e.vis.any(i0 + nq, j0, j0 + nk)) continue;
        tile_grads(w, w.k_t.data(), w.v_t.data(), e, i0, nq, j0, nk, true, false);
      }
      scale_rows(dk, nk, K, ks, scale);
    });
    // Pass 2, one task per query tile: d_q_i = scale * sum_j dS_ij k_j.
    for_each_task(B * q_tiles, parallel, [&](int64_t task) {
      const AttentionEntry e = entries[task / q_tiles];
      const int64_t i0 = (task % q_tiles) * kTile, nq = std::min(kTile, e.nq - i0);
      if (nq <= 0) return;  // a ragged entry shorter than the longest
      Scratch<T>& w = scratch<T>(K, Kv);
      T* dq = d_q + (e.q0 + i0) * qs;
      fill_rows(dq, nq, K, qs, T(0));
      for (int64_t j0 = 0; j0 < e.nk; j0 += kTile) {
        const int64_t nk = std::min(kTile, e.nk - j0);
        if (!e.vis.any(i0 + nq, j0, j0 + nk)) continue;
        transpose_tile(k + (e.k0 + j0) * ks, nk, K, ks, w.k_t.data());
        transpose_tile(v + (e.k0 + j0) * vs, nk, Kv, vs, w.v_t.data());
        tile_grads(w, w.k_t.data(), w.v_t.data(), e, i0, nq, j0, nk, false, true);
      }
      scale_rows(dq, nq, K, qs, scale);
    });
  }
};

template <typename T>
void backward_typed(const AttentionShape& s, const T* q, const T* k, const T* v, const T* out, const T* d_out,
                    const T* lse, T* d_q, T* d_k, T* d_v) {
  const int64_t rows = s.query_rows();
  BackwardTiles<T> t{s, q, k, v, d_out, lse, d_q, d_k, d_v};
  constexpr int64_t kDeltaRows = 256;  // rows per task
  for_each_task((rows + kDeltaRows - 1) / kDeltaRows, t.parallel, [&](int64_t task) {
    row_dots(d_out, out, t.Kv, task * kDeltaRows, std::min(rows, (task + 1) * kDeltaRows), t.delta.data());
  });
  // Both paths give the same bits (see one_pass), so the choice may follow the thread count: one
  // pass when the batch entries alone keep every thread busy, or there is one thread.
  const bool short_sequences = t.q_tiles <= kOnePassTiles && t.k_tiles <= kOnePassTiles;
  const int64_t threads = pool_threads();
  if (short_sequences || !t.parallel || threads == 1 || s.batch >= kEntriesPerThread * threads)
    t.one_pass();
  else
    t.two_passes();
}

}  // namespace

void attention_forward(DType dtype, const AttentionShape& s, const void* q, const void* k, const void* v, void* out,
                       void* lse) {
  formula::dispatch_float(dtype, "cpu", "attention", [&]<typename T>(T) {
    forward_typed<T>(s, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
                     static_cast<T*>(out), static_cast<T*>(lse));
  });
}

void attention_backward(DType dtype, const AttentionShape& s, const void* q, const void* k, const void* v,
                        const void* out, const void* d_out, const void* lse, void* d_q, void* d_k, void* d_v) {
  formula::dispatch_float(dtype, "cpu", "attention", [&]<typename T>(T) {
    backward_typed<T>(s, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
                      static_cast<const T*>(out), static_cast<const T*>(d_out), static_cast<const T*>(lse),
                      static_cast<T*>(d_q), static_cast<T*>(d_k), static_cast<T*>(d_v));
  });
}

}  // namespace qkv::cpu
