// framework/cpu/row_reductions.h — a row's max, sum and sum of squares in interleaved lanes, in a
// fixed order, and a column sum's step: shared by the CPU backend's softmax, cross-entropy, sums and
// gradient clip and by the fused attention.
// Internal to framework/cpu/.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "../scalar_formulas.h"

namespace qkv::cpu {

// A row's reductions in kLanes interleaved accumulators (entry c goes to lane c % kLanes), combined
// in lane order at the end: a fixed order that does not depend on the thread count, and one that
// the compiler can vectorise (a single running sum is one long chain of dependent adds).
constexpr int64_t kLanes = 8;

inline bool cpu_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

// Whether T's loops below take their AVX2 form (float32 where the processor has AVX2).
template <typename T>
bool avx2_form() {
  return std::is_same_v<T, float> && cpu_has_avx2();
}

// The float32 forms on AVX2: the 8 lanes are one register (the max) or two of 4 doubles (the
// sum), each lane the same operations in the same order as the portable loops below, so the
// two give the same bits (tests/engine/test_cpu_vector_forms.cpp).
__attribute__((target("avx2"))) inline void row_max_lanes_avx2(const float* x, int64_t n, float* lane) {
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t c = 0; c + kLanes <= n; c += kLanes) {
    const __m256 v = _mm256_loadu_ps(x + c);
    // formula::nan_max(m, v): v where m < v or v is NaN, else m
    const __m256 take = _mm256_or_ps(_mm256_cmp_ps(m, v, _CMP_LT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    m = _mm256_blendv_ps(m, v, take);
  }
  _mm256_storeu_ps(lane, m);
}

// Square: each entry squared in float32 first (the bits of mul(x, x)), then summed.
template <bool Square>
__attribute__((target("avx2"))) inline void row_sum_lanes_avx2(const float* x, int64_t n, double* lane) {
  __m256d low = _mm256_setzero_pd(), high = _mm256_setzero_pd();  // lanes 0-3 and 4-7
  for (int64_t c = 0; c + kLanes <= n; c += kLanes) {
    __m256 v = _mm256_loadu_ps(x + c);
    if constexpr (Square) v = _mm256_mul_ps(v, v);
    low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
  _mm256_storeu_pd(lane, low);
  _mm256_storeu_pd(lane + 4, high);
}

__attribute__((target("avx2"))) inline int64_t add_row_avx2(double* acc, const float* x, int64_t n) {
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    const __m256 v = _mm256_loadu_ps(x + c);
    _mm256_storeu_pd(acc + c, _mm256_add_pd(_mm256_loadu_pd(acc + c), _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
    _mm256_storeu_pd(acc + c + 4,
                     _mm256_add_pd(_mm256_loadu_pd(acc + c + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
  }
  return c;  // entries done
}

// acc[c] += x[c] in double over one row: a column sum's step (each entry its own sum, so the
// vector form has the loop's bits).
template <typename T>
void add_row(double* acc, const T* x, int64_t n) {
  int64_t c = 0;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_has_avx2()) c = add_row_avx2(acc, x, n);
  }
  for (; c < n; ++c) acc[c] += static_cast<double>(x[c]);
}

template <typename T>
T row_max(const T* x, int64_t n) {  // NaN-propagating, as formula::nan_max
  T lane[kLanes];
  const int64_t whole = n / kLanes * kLanes;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_has_avx2()) row_max_lanes_avx2(x, n, lane);
  }
  if (!avx2_form<T>()) {
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = -std::numeric_limits<T>::infinity();
    for (int64_t c = 0; c < whole; c += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lane[l] = formula::nan_max(lane[l], x[c + l]);
  }
  for (int64_t c = whole; c < n; ++c) lane[0] = formula::nan_max(lane[0], x[c]);
  T m = lane[0];
  for (int64_t l = 1; l < kLanes; ++l) m = formula::nan_max(m, lane[l]);
  return m;
}

// The kLanes sums of a row combined in lane order.
inline double lanes_total(const double* lane) {
  double total = 0.0;
  for (int64_t l = 0; l < kLanes; ++l) total += lane[l];
  return total;
}

// A row's sum in double; with Square, the sum of its entries' squares, each rounded to T first.
template <bool Square, typename T>
double row_sum_of(const T* x, int64_t n) {
  const auto entry = [](T v) { return static_cast<double>(Square ? T(v * v) : v); };
  double lane[kLanes] = {};
  const int64_t whole = n / kLanes * kLanes;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_has_avx2()) row_sum_lanes_avx2<Square>(x, n, lane);
  }
  if (!avx2_form<T>()) {
    for (int64_t c = 0; c < whole; c += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lane[l] += entry(x[c + l]);
  }
  for (int64_t c = whole; c < n; ++c) lane[0] += entry(x[c]);
  return lanes_total(lane);
}

template <typename T>
double row_sum(const T* x, int64_t n) {
  return row_sum_of<false>(x, n);
}

}  // namespace qkv::cpu
