// framework/cpu/vector_exp.cpp — vector_exp.h's row passes (it says what each gives, and why the forms agree).
#include "vector_exp.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "row_reductions.h"

extern "C" __attribute__((target("avx2,fma"))) __m256 _ZGVdN8v_expf(__m256 x);
extern "C" __attribute__((target("avx512f"))) __m512 _ZGVeN16v_expf(__m512 x);

namespace qkv::cpu {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

ExpForm detect_widest() {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return ExpForm::Portable;
  return __builtin_cpu_supports("avx512f") ? ExpForm::Avx512 : ExpForm::Avx2;
}
// A test's narrower form, or -1 for the widest (constant-initialised: right from the first call).
std::atomic<int> narrowed_form{-1};
ExpForm form_in_use() {
  const int narrowed = narrowed_form.load(std::memory_order_relaxed);
  return narrowed < 0 ? widest_exp_form() : static_cast<ExpForm>(narrowed);
}
bool vector_exp_avx512() { return form_in_use() == ExpForm::Avx512; }
bool vector_exp_avx2() { return form_in_use() != ExpForm::Portable; }

// exp of 16 (8) lanes; -inf lanes in as 0 and out as +0 (vector_exp.h). NaN lanes go through.
__attribute__((target("avx512f"))) inline __m512 exp16(__m512 x) {
  const __mmask16 finite_or_nan = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kMinusInf), _CMP_NEQ_UQ);
  return _mm512_maskz_mov_ps(finite_or_nan, _ZGVeN16v_expf(_mm512_maskz_mov_ps(finite_or_nan, x)));
}
__attribute__((target("avx2,fma"))) inline __m256 exp8(__m256 x) {
  const __m256 minus_inf = _mm256_cmp_ps(x, _mm256_set1_ps(kMinusInf), _CMP_EQ_OQ);
  return _mm256_andnot_ps(minus_inf, _ZGVdN8v_expf(_mm256_andnot_ps(minus_inf, x)));
}

// The lanes of x[i, n) in a block of 16 from i (the rest masked off: loaded as 0, not stored).
__attribute__((target("avx512f"))) inline __mmask16 lanes_from(int64_t i, int64_t n) {
  return n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1u);
}

// Lanes 0-7 (8-15) of e as 8 doubles. (The masked forms: GCC 12 warns of the plain ones' undefined
// pass-through operand.)
__attribute__((target("avx512f"))) inline __m512d widen_low(__m512 e) {
  return _mm512_maskz_cvtps_pd(0xFF, _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(e), 0)));
}
__attribute__((target("avx512f"))) inline __m512d widen_high(__m512 e) {
  return _mm512_maskz_cvtps_pd(0xFF, _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(e), 1)));
}

// exp(x[i, i + 16) - m), the lanes past n as exp(0) (not to be stored).
__attribute__((target("avx512f"))) inline __m512 exp_block(const float* x, int64_t i, __mmask16 lanes, __m512 m16) {
  return exp16(_mm512_maskz_sub_ps(lanes, _mm512_maskz_loadu_ps(lanes, x + i), m16));
}

__attribute__((target("avx512f"))) void exp_of_difference_avx512(const float* x, int64_t n, float m, float* p) {
  const __m512 m16 = _mm512_set1_ps(m);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = lanes_from(i, n);
    _mm512_mask_storeu_ps(p + i, lanes, exp_block(x, i, lanes, m16));
  }
}

// tail[0, 8) = exp(x[i + k] - m) for the entries i + k < n, the rest padded with exp(0): the last,
// short block of an AVX2 row, through an aligned copy.
__attribute__((target("avx2,fma"))) inline void exp_tail_avx2(const float* x, int64_t i, int64_t n, float m,
                                                              float* tail) {
  for (int64_t k = 0; k < 8; ++k) tail[k] = i + k < n ? x[i + k] - m : 0.0f;
  _mm256_store_ps(tail, exp8(_mm256_load_ps(tail)));
}

__attribute__((target("avx2,fma"))) void exp_of_difference_avx2(const float* x, int64_t n, float m, float* p) {
  const __m256 m8 = _mm256_set1_ps(m);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(p + i, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m8)));
  if (i < n) {
    alignas(32) float tail[8];
    exp_tail_avx2(x, i, n, m, tail);
    for (int64_t k = 0; i + k < n; ++k) p[i + k] = tail[k];
  }
}

// row_sum_of's order (row_reductions.h): entry c into lane c % 8 for the whole blocks of 8, the
// rest into lane 0, the lanes summed in order. Lane l of `lanes8` is lane l.
__attribute__((target("avx512f"))) double sum_exp_of_difference_avx512(const float* x, int64_t n, float m) {
  const __m512 m16 = _mm512_set1_ps(m);
  const int64_t whole = n / kLanes * kLanes;
  __m512d lanes8 = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 16 <= whole; i += 16) {
    const __m512 e = exp_block(x, i, __mmask16(0xFFFF), m16);
    lanes8 = _mm512_add_pd(lanes8, widen_low(e));
    lanes8 = _mm512_add_pd(lanes8, widen_high(e));
  }
  alignas(64) double lane[kLanes];
  if (i < n) {  // the last block: at most one whole 8 (whole is i or i + 8), then the entries past it
    alignas(64) float rest[16];
    const __m512 e = exp_block(x, i, lanes_from(i, n), m16);
    _mm512_store_ps(rest, e);
    int64_t k = 0;
    if (i + 8 <= whole) {
      lanes8 = _mm512_add_pd(lanes8, widen_low(e));
      k = 8;
    }
    _mm512_store_pd(lane, lanes8);
    for (; i + k < n; ++k) lane[0] += static_cast<double>(rest[k]);
  } else {
    _mm512_store_pd(lane, lanes8);
  }
  return lanes_total(lane);
}

__attribute__((target("avx2,fma"))) double sum_exp_of_difference_avx2(const float* x, int64_t n, float m) {
  const __m256 m8 = _mm256_set1_ps(m);
  __m256d low = _mm256_setzero_pd(), high = _mm256_setzero_pd();  // lanes 0-3 and 4-7
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m8));
    low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
    high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
  }
  alignas(32) double lane[kLanes];
  _mm256_store_pd(lane, low);
  _mm256_store_pd(lane + 4, high);
  if (i < n) {
    alignas(32) float tail[8];
    exp_tail_avx2(x, i, n, m, tail);
    for (int64_t k = 0; i + k < n; ++k) lane[0] += static_cast<double>(tail[k]);
  }
  return lanes_total(lane);
}

__attribute__((target("avx512f"))) void softmax_minus_onehot_avx512(const float* x, int64_t n, float s, int64_t hot,
                                                                    float f, float* y) {
  const __m512 s16 = _mm512_set1_ps(s), f16 = _mm512_set1_ps(f), minus_one = _mm512_set1_ps(-1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = lanes_from(i, n);
    __m512 e = exp_block(x, i, lanes, s16);
    if (hot >= i && hot < i + 16) e = _mm512_mask_add_ps(e, __mmask16(1u << (hot - i)), e, minus_one);
    _mm512_mask_storeu_ps(y + i, lanes, _mm512_mul_ps(e, f16));
  }
}

// The portable forms: exp_of_difference's values entry by entry, then the same steps as the
// vector forms.
template <typename T>
void exp_of_difference_loop(const T* x, int64_t n, T m, T* p) {
  for (int64_t i = 0; i < n; ++i) p[i] = std::exp(static_cast<T>(x[i] - m));
}

template <typename T>
double sum_exp_of_difference_loop(const T* x, int64_t n, T m) {
  double lane[kLanes] = {};
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t c = 0; c < whole; c += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += static_cast<double>(std::exp(static_cast<T>(x[c + l] - m)));
  for (int64_t c = whole; c < n; ++c) lane[0] += static_cast<double>(std::exp(static_cast<T>(x[c] - m)));
  return lanes_total(lane);
}

template <typename T>
void softmax_minus_onehot_loop(const T* x, int64_t n, T s, int64_t hot, T f, T* y) {
  exp_of_difference(x, n, s, y);
  y[hot] += T(-1);
  for (int64_t c = 0; c < n; ++c) y[c] *= f;
}

}  // namespace

ExpForm widest_exp_form() {
  static const ExpForm widest = detect_widest();
  return widest;
}
void use_exp_form(ExpForm form) { narrowed_form = static_cast<int>(std::min(form, widest_exp_form())); }

void exp_of_difference(const float* x, int64_t n, float m, float* p) {
  if (vector_exp_avx512()) return exp_of_difference_avx512(x, n, m, p);
  if (vector_exp_avx2()) return exp_of_difference_avx2(x, n, m, p);
  exp_of_difference_loop(x, n, m, p);
}
void exp_of_difference(const double* x, int64_t n, double m, double* p) { exp_of_difference_loop(x, n, m, p); }

void exp_in_place(float* x, int64_t n) { exp_of_difference(x, n, 0.0f, x); }  // x - 0 = x, bit for bit
void exp_in_place(double* x, int64_t n) { exp_of_difference(x, n, 0.0, x); }

double sum_exp_of_difference(const float* x, int64_t n, float m) {
  if (vector_exp_avx512()) return sum_exp_of_difference_avx512(x, n, m);
  if (vector_exp_avx2()) return sum_exp_of_difference_avx2(x, n, m);
  return sum_exp_of_difference_loop(x, n, m);
}
double sum_exp_of_difference(const double* x, int64_t n, double m) { return sum_exp_of_difference_loop(x, n, m); }

void softmax_minus_onehot_row(const float* x, int64_t n, float s, int64_t hot, float f, float* y) {
  if (vector_exp_avx512()) return softmax_minus_onehot_avx512(x, n, s, hot, f, y);
  softmax_minus_onehot_loop(x, n, s, hot, f, y);
}
void softmax_minus_onehot_row(const double* x, int64_t n, double s, int64_t hot, double f, double* y) {
  softmax_minus_onehot_loop(x, n, s, hot, f, y);
}

}  // namespace qkv::cpu
