// framework/cpu/vector_exp.h — exp over a row of floats, and the row passes built on it (a
// softmax's exps, their sum, the cross-entropy's gradient row), through glibc's vector expf.
// Internal to framework/cpu/.
//
// Float32 goes through libmvec's expf, 16 lanes on AVX-512 and 8 on AVX2: the two give the same
// bits for every one of the 2^32 inputs (checked with glibc 2.36), and an entry's value depends
// neither on its neighbours nor on where the row ends (a short tail goes through the same function,
// padded with zeros). -inf, the masked scores' value, is out of the function's fast range: each such
// lane would cost a scalar call, so those lanes go in as 0 and come out as exp(-inf) = +0, the value
// the scalar call gives. Float64 (and a processor without AVX2) uses std::exp.
#pragma once

#include <cstdint>

namespace qkv::cpu {

// The float32 form the rows below take: the widest this processor has, unless a test narrows it
// (to check that the forms agree bit for bit; not for use while other threads run rows).
enum class ExpForm { Portable, Avx2, Avx512 };
ExpForm widest_exp_form();
void use_exp_form(ExpForm form);  // clamped to widest_exp_form()

// x[0, n) = exp(x[0, n)) in place.
void exp_in_place(float* x, int64_t n);
void exp_in_place(double* x, int64_t n);

// p[0, n) = exp(x[0, n) - m): the values of subtracting, then exp_in_place.
void exp_of_difference(const float* x, int64_t n, float m, float* p);
void exp_of_difference(const double* x, int64_t n, double m, double* p);

// row_sum (row_reductions.h) of exp(x[0, n) - m), bit for bit, without storing the exps.
double sum_exp_of_difference(const float* x, int64_t n, float m);
double sum_exp_of_difference(const double* x, int64_t n, double m);

// One row of a cross-entropy's gradient: y[c] = exp(x[c] - s) * f, except y[hot] = (exp(x[hot] - s)
// + (-1)) * f: the values of exp_of_difference, adding -1 at `hot`, then scaling, one pass.
void softmax_minus_onehot_row(const float* x, int64_t n, float s, int64_t hot, float f, float* y);
void softmax_minus_onehot_row(const double* x, int64_t n, double s, int64_t hot, double f, double* y);

}  // namespace qkv::cpu
