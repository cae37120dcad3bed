// framework/cpu/row_reductions.h — a row's max and sum in interleaved lanes, in a fixed order:
// shared by the CPU backend's softmax, cross-entropy and sums and by the fused attention.
// Internal to framework/cpu/.
#pragma once

#include <cstdint>
#include <limits>

#include "../scalar_formulas.h"

namespace qkv::cpu {

// A row's reductions in kLanes interleaved accumulators (entry c goes to lane c % kLanes), combined
// in lane order at the end: a fixed order that does not depend on the thread count, and one that
// the compiler can vectorise (a single running sum is one long chain of dependent adds).
constexpr int64_t kLanes = 8;

template <typename T>
T row_max(const T* x, int64_t n) {  // NaN-propagating, as formula::nan_max
  T lane[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lane[l] = -std::numeric_limits<T>::infinity();
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = formula::nan_max(lane[l], x[c + l]);
  for (; c < n; ++c) lane[0] = formula::nan_max(lane[0], x[c]);
  T m = lane[0];
  for (int64_t l = 1; l < kLanes; ++l) m = formula::nan_max(m, lane[l]);
  return m;
}

template <typename T>
double row_sum(const T* x, int64_t n) {  // accumulated in double
  double lane[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += static_cast<double>(x[c + l]);
  for (; c < n; ++c) lane[0] += static_cast<double>(x[c]);
  double total = 0.0;
  for (int64_t l = 0; l < kLanes; ++l) total += lane[l];
  return total;
}

}  // namespace qkv::cpu
