// framework/attention_visibility.h — the fused attention's visibility rule (which keys a query
// sees: causal, prefix, padding, knockout; and the ALiBi bias) and where each batch entry's rows
// lie, padded or ragged (backend.h, AttentionShape): written once and compiled by both g++ (the CPU
// kernels, cpu/cpu_attention.cpp) and nvcc (the CUDA kernels, cuda/cuda_kernels.cu).
#pragma once

#include <cstdint>
#include <vector>

#include "backend.h"
#include "scalar_formulas.h"

namespace qkv::formula {

// Which keys a query of one batch entry sees; query i sits at position query_offset + i.
struct Visibility {
  int64_t prefix, query_offset, length;              // length: visible prefix keys of this batch entry
  int64_t knockout_key, knockout_from, knockout_to;  // key hidden from queries at [from, to); -1: none
  double distance_slope;  // ALiBi (backend.h): 0, or each score gets -slope * |pos(i) - pos(j)|
  // The prefix's real words: the keys before this are seen by every query.
  QKV_FORMULA int64_t words() const { return prefix < length ? prefix : length; }
  // A key's (or a query's) position: the prefix's slots, then the rest right after its real words.
  QKV_FORMULA int64_t position(int64_t x) const { return x < prefix ? x : length + (x - prefix); }
  // The ALiBi bias of query i and key j (0 without a slope).
  template <typename T>
  QKV_FORMULA T bias(int64_t i, int64_t j) const {
    if (distance_slope == 0) return T(0);
    const int64_t distance = position(query_offset + i) - position(j);
    return static_cast<T>(-distance_slope * static_cast<double>(distance < 0 ? -distance : distance));
  }
  QKV_FORMULA bool operator()(int64_t i, int64_t j) const {
    if (j == knockout_key && query_offset + i >= knockout_from && query_offset + i < knockout_to) return false;
    return j < prefix ? j < length : j <= query_offset + i;
  }
  // Whether any key of [j0, j1) is visible to any query before i_end (the last one sees the most;
  // a knockout only hides keys, so this stays an upper bound that skips only empty tiles).
  QKV_FORMULA bool any(int64_t i_end, int64_t j0, int64_t j1) const {
    if (j0 < words()) return true;
    const int64_t first = j0 > prefix ? j0 : prefix, last = j1 - 1, last_seen = query_offset + i_end - 1;
    return first <= (last < last_seen ? last : last_seen);
  }
};

// One batch entry: its queries are rows [q0, q0 + nq) of q (and out, lse, d_out), its keys rows
// [k0, k0 + nk) of k and v. Padded: every entry has the shape's queries and keys; ragged: its own.
struct AttentionEntry {
  int64_t q0, nq, k0, nk;
  Visibility vis;
};

// A call's batch entries (AttentionShape's, with its vectors as host or device pointers).
struct AttentionEntries {
  int64_t queries, keys, query_offset, prefix;
  const int64_t* lengths;                    // one per batch entry, or null
  const int64_t *query_starts, *key_starts;  // ragged: batch + 1 each, else null
  int64_t knockout_key, knockout_from, knockout_to;
  double distance_slope;

  QKV_FORMULA AttentionEntry operator[](int64_t b) const {
    if (!query_starts) {
      const int64_t length = lengths ? lengths[b] : prefix;
      return {b * queries, queries, b * keys, keys,
              Visibility{prefix, query_offset, length, knockout_key, knockout_from, knockout_to, distance_slope}};
    }
    const int64_t q0 = query_starts[b], nq = query_starts[b + 1] - q0;
    const int64_t k0 = key_starts[b], nk = key_starts[b + 1] - k0, entry_prefix = lengths[b];
    return {q0, nq, k0, nk,
            Visibility{entry_prefix, nk - nq, entry_prefix, knockout_key, knockout_from, knockout_to, distance_slope}};
  }
};

// s's entries read through the given copies of s.key_lengths, s.query_starts and s.key_starts (each
// null when empty); without them, through s's own vectors (host code).
inline AttentionEntries attention_entries(const AttentionShape& s, const int64_t* lengths, const int64_t* query_starts,
                                          const int64_t* key_starts) {
  return {s.queries,  s.keys,         s.query_offset,  s.prefix,      lengths,         query_starts,
          key_starts, s.knockout_key, s.knockout_from, s.knockout_to, s.distance_slope};
}
inline AttentionEntries attention_entries(const AttentionShape& s) {
  const auto data = [](const std::vector<int64_t>& v) { return v.empty() ? nullptr : v.data(); };
  return attention_entries(s, data(s.key_lengths), data(s.query_starts), data(s.key_starts));
}

}  // namespace qkv::formula
