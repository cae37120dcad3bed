// framework/cpu/cpu_attention.cpp — the CPU kernels of the fused attention op: tiles of 64 queries by
// 64 keys, an online softmax in the forward, recomputed tiles in the backward, OpenMP over tiles.
// Every output element is written by one task in a fixed order: bit-identical for any thread count.
#include "cpu_attention.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace qkv::cpu {

namespace {

constexpr int64_t kTile = 64;  // queries per query tile and keys per key tile

// Which keys a query sees (backend.h, AttentionShape).
struct Visibility {
  int64_t prefix, query_offset, length;  // length: visible prefix keys of this batch entry
  bool operator()(int64_t i, int64_t j) const { return j < prefix ? j < length : j <= query_offset + i; }
  // Whether any key of [j0, j1) is visible to any query before i_end (the last one sees the most).
  bool any(int64_t i_end, int64_t j0, int64_t j1) const {
    if (j0 < std::min(prefix, length)) return true;
    return std::max(j0, prefix) <= std::min(j1 - 1, query_offset + i_end - 1);
  }
};

Visibility visibility_of(const AttentionShape& s, int64_t b) {
  const int64_t length = s.key_lengths.empty() ? s.prefix : s.key_lengths[b];
  return Visibility{s.prefix, s.query_offset, length};
}

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
    grow(k_t, width * kTile);
    grow(v_t, value_width * kTile);
    grow(acc, kTile * std::max(width, value_width));
    grow(row_max, kTile);
    grow(row_sum, kTile);
  }
};

template <typename T>
Scratch<T>& scratch() {
  thread_local Scratch<T> s;
  return s;
}

// out_t (cols, rows) = in (rows, cols) for one tile, so that the inner loops below run over keys.
template <typename T>
void transpose_tile(const T* in, int64_t rows, int64_t cols, T* out_t) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out_t[c * kTile + r] = in[r * cols + c];
}

// c (nq, kTile) = a (nq, width) @ b_t (width, kTile) over the first nk columns; inner loop over keys.
template <typename T>
void tile_products(const T* a, int64_t nq, int64_t width, const T* b_t, int64_t nk, T* c) {
  for (int64_t i = 0; i < nq; ++i) {
    T* row = c + i * kTile;
    for (int64_t j = 0; j < nk; ++j) row[j] = 0;
    const T* a_row = a + i * width;
    for (int64_t d = 0; d < width; ++d) {
      const T x = a_row[d];
      const T* b_row = b_t + d * kTile;
      for (int64_t j = 0; j < nk; ++j) row[j] += x * b_row[j];
    }
  }
}

// acc (rows, width) += p (rows, kTile)[:, :nk] @ m (nk, width); inner loop over the width.
template <typename T>
void accumulate_rows(const T* p, int64_t rows, int64_t nk, const T* m, int64_t width, T* acc) {
  for (int64_t i = 0; i < rows; ++i) {
    T* out = acc + i * width;
    for (int64_t j = 0; j < nk; ++j) {
      const T w = p[i * kTile + j];
      if (w == 0) continue;
      const T* m_row = m + j * width;
      for (int64_t d = 0; d < width; ++d) out[d] += w * m_row[d];
    }
  }
}

// acc (nk, width) += p (nq, kTile)[:, :nk]^T @ m (nq, width); inner loop over the width.
template <typename T>
void accumulate_cols(const T* p, int64_t nq, int64_t nk, const T* m, int64_t width, T* acc) {
  for (int64_t i = 0; i < nq; ++i) {
    const T* m_row = m + i * width;
    for (int64_t j = 0; j < nk; ++j) {
      const T w = p[i * kTile + j];
      if (w == 0) continue;
      T* out = acc + j * width;
      for (int64_t d = 0; d < width; ++d) out[d] += w * m_row[d];
    }
  }
}

// probs = exp(scores * scale - lse) where visible, else 0 (also 0 for a query that sees nothing).
template <typename T>
void recompute_probs(const Visibility& vis, int64_t i0, int64_t nq, int64_t j0, int64_t nk, T scale,
                     const T* lse, T* scores, T* probs) {
  for (int64_t ii = 0; ii < nq; ++ii) {
    const T l = lse[i0 + ii];
    for (int64_t jj = 0; jj < nk; ++jj) {
      const bool seen = vis(i0 + ii, j0 + jj) && l != -std::numeric_limits<T>::infinity();
      probs[ii * kTile + jj] = seen ? std::exp(scores[ii * kTile + jj] * scale - l) : T(0);
    }
  }
}

template <typename T>
void forward_typed(const AttentionShape& s, const T* q, const T* k, const T* v, T* out, T* lse) {
  const int64_t B = s.batch, Tq = s.queries, Tk = s.keys, K = s.width, Kv = s.value_width;
  const int64_t q_tiles = (Tq + kTile - 1) / kTile;
  const T scale = static_cast<T>(s.scale), neg_inf = -std::numeric_limits<T>::infinity();
#pragma omp parallel for schedule(static)
  for (int64_t task = 0; task < B * q_tiles; ++task) {
    const int64_t b = task / q_tiles, i0 = (task % q_tiles) * kTile, nq = std::min(kTile, Tq - i0);
    const Visibility vis = visibility_of(s, b);
    Scratch<T>& w = scratch<T>();
    w.reserve(K, Kv);
    const T* q_tile = q + (b * Tq + i0) * K;
    T* acc = w.acc.data();
    std::fill(acc, acc + nq * Kv, T(0));
    std::fill(w.row_max.begin(), w.row_max.begin() + nq, neg_inf);
    std::fill(w.row_sum.begin(), w.row_sum.begin() + nq, T(0));
    for (int64_t j0 = 0; j0 < Tk; j0 += kTile) {
      const int64_t nk = std::min(kTile, Tk - j0);
      if (!vis.any(i0 + nq, j0, j0 + nk)) continue;
      transpose_tile(k + (b * Tk + j0) * K, nk, K, w.k_t.data());
      tile_products(q_tile, nq, K, w.k_t.data(), nk, w.scores.data());
      for (int64_t ii = 0; ii < nq; ++ii) {
        T* row = w.scores.data() + ii * kTile;
        T* p = w.probs.data() + ii * kTile;
        T tile_max = neg_inf;
        for (int64_t jj = 0; jj < nk; ++jj) {
          row[jj] = vis(i0 + ii, j0 + jj) ? row[jj] * scale : neg_inf;
          tile_max = std::max(tile_max, row[jj]);
        }
        const T old_max = w.row_max[ii], new_max = std::max(old_max, tile_max);
        if (new_max == neg_inf) {  // nothing visible to this query yet
          for (int64_t jj = 0; jj < nk; ++jj) p[jj] = 0;
          continue;
        }
        const T rescale = old_max == neg_inf ? T(0) : std::exp(old_max - new_max);
        T tile_sum = 0;
        for (int64_t jj = 0; jj < nk; ++jj) {
          p[jj] = row[jj] == neg_inf ? T(0) : std::exp(row[jj] - new_max);
          tile_sum += p[jj];
        }
        w.row_sum[ii] = w.row_sum[ii] * rescale + tile_sum;
        w.row_max[ii] = new_max;
        if (rescale != T(1))
          for (int64_t d = 0; d < Kv; ++d) acc[ii * Kv + d] *= rescale;
      }
      accumulate_rows(w.probs.data(), nq, nk, v + (b * Tk + j0) * Kv, Kv, acc);
    }
    for (int64_t ii = 0; ii < nq; ++ii) {
      T* o = out + (b * Tq + i0 + ii) * Kv;
      const T sum = w.row_sum[ii];
      if (sum == T(0)) {
        for (int64_t d = 0; d < Kv; ++d) o[d] = 0;
        lse[b * Tq + i0 + ii] = neg_inf;
      } else {
        const T inv = T(1) / sum;
        for (int64_t d = 0; d < Kv; ++d) o[d] = acc[ii * Kv + d] * inv;
        lse[b * Tq + i0 + ii] = w.row_max[ii] + std::log(sum);
      }
    }
  }
}

template <typename T>
void backward_typed(const AttentionShape& s, const T* q, const T* k, const T* v, const T* out, const T* d_out,
                    const T* lse, T* d_q, T* d_k, T* d_v) {
  const int64_t B = s.batch, Tq = s.queries, Tk = s.keys, K = s.width, Kv = s.value_width;
  const int64_t q_tiles = (Tq + kTile - 1) / kTile, k_tiles = (Tk + kTile - 1) / kTile;
  const T scale = static_cast<T>(s.scale);
  // delta_i = sum_e d_out[i, e] * out[i, e]  (= sum_j P_ij dP_ij), one per query
  std::vector<T> delta(static_cast<size_t>(B * Tq));
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < B * Tq; ++r) {
    T sum = 0;
    for (int64_t e = 0; e < Kv; ++e) sum += d_out[r * Kv + e] * out[r * Kv + e];
    delta[r] = sum;
  }
  // dS_ij = P_ij (dP_ij - delta_i) for one tile, into w.d_probs (P in w.probs).
  const auto tile_grads = [&](Scratch<T>& w, const Visibility& vis, int64_t b, int64_t i0, int64_t nq, int64_t j0,
                              int64_t nk) {
    tile_products(q + (b * Tq + i0) * K, nq, K, w.k_t.data(), nk, w.scores.data());
    recompute_probs(vis, i0, nq, j0, nk, scale, lse + b * Tq, w.scores.data(), w.probs.data());
    tile_products(d_out + (b * Tq + i0) * Kv, nq, Kv, w.v_t.data(), nk, w.d_probs.data());
    for (int64_t ii = 0; ii < nq; ++ii)
      for (int64_t jj = 0; jj < nk; ++jj) {
        T& ds = w.d_probs[ii * kTile + jj];
        ds = w.probs[ii * kTile + jj] * (ds - delta[b * Tq + i0 + ii]);
      }
  };
  // Pass 1, one task per key tile: d_v_j = sum_i P_ij d_out_i, d_k_j = scale * sum_i dS_ij q_i.
#pragma omp parallel for schedule(static)
  for (int64_t task = 0; task < B * k_tiles; ++task) {
    const int64_t b = task / k_tiles, j0 = (task % k_tiles) * kTile, nk = std::min(kTile, Tk - j0);
    const Visibility vis = visibility_of(s, b);
    Scratch<T>& w = scratch<T>();
    w.reserve(K, Kv);
    transpose_tile(k + (b * Tk + j0) * K, nk, K, w.k_t.data());
    transpose_tile(v + (b * Tk + j0) * Kv, nk, Kv, w.v_t.data());
    T* dk = d_k + (b * Tk + j0) * K;
    T* dv = d_v + (b * Tk + j0) * Kv;
    std::fill(dk, dk + nk * K, T(0));
    std::fill(dv, dv + nk * Kv, T(0));
    for (int64_t i0 = 0; i0 < Tq; i0 += kTile) {
      const int64_t nq = std::min(kTile, Tq - i0);
      if (!vis.any(i0 + nq, j0, j0 + nk)) continue;
      tile_grads(w, vis, b, i0, nq, j0, nk);
      accumulate_cols(w.probs.data(), nq, nk, d_out + (b * Tq + i0) * Kv, Kv, dv);
      accumulate_cols(w.d_probs.data(), nq, nk, q + (b * Tq + i0) * K, K, dk);
    }
    for (int64_t x = 0; x < nk * K; ++x) dk[x] *= scale;
  }
  // Pass 2, one task per query tile: d_q_i = scale * sum_j dS_ij k_j.
#pragma omp parallel for schedule(static)
  for (int64_t task = 0; task < B * q_tiles; ++task) {
    const int64_t b = task / q_tiles, i0 = (task % q_tiles) * kTile, nq = std::min(kTile, Tq - i0);
    const Visibility vis = visibility_of(s, b);
    Scratch<T>& w = scratch<T>();
    w.reserve(K, Kv);
    T* dq = d_q + (b * Tq + i0) * K;
    std::fill(dq, dq + nq * K, T(0));
    for (int64_t j0 = 0; j0 < Tk; j0 += kTile) {
      const int64_t nk = std::min(kTile, Tk - j0);
      if (!vis.any(i0 + nq, j0, j0 + nk)) continue;
      transpose_tile(k + (b * Tk + j0) * K, nk, K, w.k_t.data());
      transpose_tile(v + (b * Tk + j0) * Kv, nk, Kv, w.v_t.data());
      tile_grads(w, vis, b, i0, nq, j0, nk);
      accumulate_rows(w.d_probs.data(), nq, nk, k + (b * Tk + j0) * K, K, dq);
    }
    for (int64_t x = 0; x < nq * K; ++x) dq[x] *= scale;
  }
}

template <typename Body>
void dispatch(DType dtype, const char* what, Body&& body) {
  if (dtype == DType::F32) body(float{});
  else if (dtype == DType::F64) body(double{});
  else throw std::runtime_error(fmt::format("cpu backend: {} does not support {}", what, dtype_name(dtype)));
}

}  // namespace

void attention_forward(DType dtype, const AttentionShape& s, const void* q, const void* k, const void* v, void* out,
                       void* lse) {
  dispatch(dtype, "attention", [&](auto zero) {
    using T = decltype(zero);
    forward_typed<T>(s, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
                     static_cast<T*>(out), static_cast<T*>(lse));
  });
}

void attention_backward(DType dtype, const AttentionShape& s, const void* q, const void* k, const void* v,
                        const void* out, const void* d_out, const void* lse, void* d_q, void* d_k, void* d_v) {
  dispatch(dtype, "attention", [&](auto zero) {
    using T = decltype(zero);
    backward_typed<T>(s, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
                      static_cast<const T*>(out), static_cast<const T*>(d_out), static_cast<const T*>(lse),
                      static_cast<T*>(d_q), static_cast<T*>(d_k), static_cast<T*>(d_v));
  });
}

void set_loop_threads(int threads) { omp_set_num_threads(threads > 0 ? threads : omp_get_num_procs()); }

}  // namespace qkv::cpu
