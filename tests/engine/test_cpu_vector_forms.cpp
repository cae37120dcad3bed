// tests/engine/test_cpu_vector_forms.cpp — the CPU backend's AVX2 forms give the bits of the plain
// loops they stand for: the row max, row sum and sum of squares (framework/cpu/row_reductions.h) on
// rows of every length up to a few lanes past 8 and on NaN, infinities and signed zeros; every
// elementwise op (the AVX2 copy of the contiguous loops) against its formula in this file's code;
// the vector exp's rows (framework/cpu/vector_exp.h) against glibc's 8-lane expf entry by entry;
// and the LayerNorm rows (their AVX2 form, compiled with -O3's vectorisation) against the one-row
// formula compiled here.
#include <doctest/doctest.h>
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "framework/backend.h"
#include "framework/cpu/vector_exp.h"
#include "framework/cpu/row_reductions.h"
#include "framework/random.h"

using namespace qkv;

namespace {

// The reference: kLanes accumulators, entry c into lane c % kLanes, the tail into lane 0, the
// lanes combined in order (the definition row_reductions.h states).
float reference_max(const float* x, int64_t n) {
  float lane[cpu::kLanes];
  for (float& l : lane) l = -std::numeric_limits<float>::infinity();
  const int64_t whole = n / cpu::kLanes * cpu::kLanes;
  for (int64_t c = 0; c < whole; ++c) lane[c % cpu::kLanes] = formula::nan_max(lane[c % cpu::kLanes], x[c]);
  for (int64_t c = whole; c < n; ++c) lane[0] = formula::nan_max(lane[0], x[c]);
  float m = lane[0];
  for (int64_t l = 1; l < cpu::kLanes; ++l) m = formula::nan_max(m, lane[l]);
  return m;
}

double reference_sum(const float* x, int64_t n, bool square) {
  const auto entry = [&](float v) { return static_cast<double>(square ? v * v : v); };
  double lane[cpu::kLanes] = {};
  const int64_t whole = n / cpu::kLanes * cpu::kLanes;
  for (int64_t c = 0; c < whole; ++c) lane[c % cpu::kLanes] += entry(x[c]);
  for (int64_t c = whole; c < n; ++c) lane[0] += entry(x[c]);
  double total = 0.0;
  for (double l : lane) total += l;
  return total;
}

template <typename T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

extern "C" __attribute__((target("avx2,fma"))) __m256 _ZGVdN8v_expf(__m256 x);

namespace {

// exp(v) as glibc's 8-lane vector expf gives it with v alone in a block of zeros (what the exp
// rows gave before the 16-lane form and the -inf lanes); std::exp without AVX2.
__attribute__((target("avx2,fma"))) float exp_alone_avx2(float v) {
  alignas(32) float block[8] = {v};
  _mm256_store_ps(block, _ZGVdN8v_expf(_mm256_load_ps(block)));
  return block[0];
}
float exp_alone(float v) {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? exp_alone_avx2(v) : std::exp(v);
}

}  // namespace

TEST_CASE("row_max, row_sum and the sum of squares give the lane loops' bits on float32") {
  Generator gen(11);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> specials = {0.0f, -0.0f, inf, -inf, nan, 1e-30f, -3.5f};
  for (int64_t n = 0; n <= 40; ++n) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t c = 0; c < n; ++c) {
        // 0: wide random values (sums that round); 1: a special value in each row; 2: signed
        // zeros only; 3: -inf everywhere but NaN at one place
        x[c] = static_cast<float>((gen.uniform() - 0.5) * std::pow(10.0, 8.0 * gen.uniform() - 4.0));
        if (kind == 1 && c == n / 2) x[c] = specials[static_cast<size_t>(n) % specials.size()];
        if (kind == 2) x[c] = c % 3 == 0 ? -0.0f : 0.0f;
        if (kind == 3) x[c] = c == n / 3 ? nan : -inf;
      }
      CAPTURE(n);
      CAPTURE(kind);
      CHECK(same_bits(cpu::row_max(x.data(), n), reference_max(x.data(), n)));
      CHECK(same_bits(cpu::row_sum(x.data(), n), reference_sum(x.data(), n, false)));
      CHECK(same_bits(cpu::row_sum_of<true>(x.data(), n), reference_sum(x.data(), n, true)));
    }
  }
}

TEST_CASE("add_row (a column sum's step) gives the scalar loop's bits on float32") {
  Generator gen(12);
  for (int64_t n = 1; n <= 40; ++n) {  // (memcmp must not get an empty vector's null data())
    std::vector<double> acc(static_cast<size_t>(n)), expected(static_cast<size_t>(n));
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t c = 0; c < n; ++c) {
      acc[c] = expected[c] = (gen.uniform() - 0.5) * 1e6;
      x[c] = static_cast<float>(gen.uniform() - 0.5);
      expected[c] += static_cast<double>(x[c]);
    }
    cpu::add_row(acc.data(), x.data(), n);
    CAPTURE(n);
    CHECK(std::memcmp(acc.data(), expected.data(), acc.size() * sizeof(double)) == 0);
  }
}

TEST_CASE("every elementwise op on the CPU gives its formula's bits, contiguous and with a broadcast scalar") {
  Generator gen(13);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> specials = {0.0, -0.0, inf, -inf, nan, 1e-30, -2.5, 3.0};
  const int64_t n = 1003;  // past the vector loops' blocks, with a tail of 3
  Backend& be = backend_for(Device::cpu());
  const auto check = [&](auto zero) {
    using T = decltype(zero);
    const DType dtype = std::is_same_v<T, float> ? DType::F32 : DType::F64;
    std::vector<T> a(n), b(n), out(n);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<T>(i % 50 == 0 ? specials[(i / 50) % specials.size()] : 6.0 * (gen.uniform() - 0.5));
      b[i] = static_cast<T>(i % 70 == 0 ? specials[(i / 70) % specials.size()] : 6.0 * (gen.uniform() - 0.5));
    }
    const T s = static_cast<T>(1.75);
    // float32 exp is the vector expf of softmax (cpu::exp_in_place), the rest their formula
    const auto unary_reference = [](UnaryOp op, T x, T scalar) {
      if (op != UnaryOp::Exp || !std::is_same_v<T, float>) return formula::unary(op, x, scalar);
      cpu::exp_in_place(&x, 1);
      return x;
    };
    const auto same = [](T got, T want) { return std::memcmp(&got, &want, sizeof(T)) == 0; };  // NaNs too
#define QKV_UNARY_OP(name, expression)                              \
  be.unary(UnaryOp::name, dtype, a.data(), out.data(), n, s);       \
  for (int64_t i = 0; i < n; ++i) {                                 \
    CAPTURE(#name);                                                 \
    CAPTURE(i);                                                     \
    REQUIRE(same(out[i], unary_reference(UnaryOp::name, a[i], s))); \
  }
#define QKV_BINARY_OP(name, expression)                                                               \
  be.binary(BinaryOp::name, dtype, a.data(), Strides{1}, b.data(), Strides{1}, out.data(), Shape{n}); \
  for (int64_t i = 0; i < n; ++i) {                                                                   \
    CAPTURE(#name);                                                                                   \
    CAPTURE(i);                                                                                       \
    REQUIRE(same(out[i], formula::binary(BinaryOp::name, a[i], b[i])));                               \
  }                                                                                                   \
  be.binary(BinaryOp::name, dtype, a.data(), Strides{1}, b.data(), Strides{0}, out.data(), Shape{n}); \
  for (int64_t i = 0; i < n; ++i) {                                                                   \
    CAPTURE(#name);                                                                                   \
    CAPTURE(i);                                                                                       \
    REQUIRE(same(out[i], formula::binary(BinaryOp::name, a[i], b[0])));                               \
  }
#include "framework/elementwise_ops.def"
  };
  check(float{});
  check(double{});
}

namespace {

// exp_of_difference, exp_in_place, softmax_minus_onehot_row and sum_exp_of_difference in the
// current form, on rows of 1..70 entries.
void check_exp_rows() {
  Generator gen(14);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // out of the vector function's fast range (-inf, overflow, underflow to subnormals), zeros, NaN
  const std::vector<float> specials = {-inf, inf, nan, 0.0f, -0.0f, 88.9f, -95.0f, -104.0f, 1e-30f};
  for (int64_t n = 1; n <= 70; ++n) {
    for (int kind = 0; kind < 3; ++kind) {
      // 0: softmax-like values; 1: a special value every fifth entry; 2: masked rows (-inf runs)
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t c = 0; c < n; ++c) {
        x[c] = static_cast<float>(60.0 * (gen.uniform() - 0.7));  // exps over 2^-60..1: sums that round
        if (kind == 1 && c % 5 == static_cast<int64_t>(n % 5))
          x[c] = specials[static_cast<size_t>(c + n) % specials.size()];
        if (kind == 2 && (c * 7 + n) % 3 != 0) x[c] = -inf;
      }
      const float m = kind == 2 ? 1.5f : cpu::row_max(x.data(), n);
      const int64_t hot = (n * 13) % n;
      const float f = 0.37f;
      std::vector<float> p(static_cast<size_t>(n)), in_place = x, y(static_cast<size_t>(n));
      cpu::exp_of_difference(x.data(), n, m, p.data());
      cpu::exp_in_place(in_place.data(), n);
      cpu::softmax_minus_onehot_row(x.data(), n, m, hot, f, y.data());
      CAPTURE(n);
      CAPTURE(kind);
      for (int64_t c = 0; c < n; ++c) {
        CAPTURE(c);
        CAPTURE(x[c]);
        REQUIRE(same_bits(p[c], exp_alone(x[c] - m)));
        REQUIRE(same_bits(in_place[c], exp_alone(x[c])));
        REQUIRE(same_bits(y[c], (c == hot ? p[c] + -1.0f : p[c]) * f));
      }
      CHECK(same_bits(cpu::sum_exp_of_difference(x.data(), n, m), reference_sum(p.data(), n, false)));
    }
  }
}

}  // namespace

TEST_CASE(
    "the vector exp rows give each entry glibc's 8-lane value, and their fused passes the separate passes' bits") {
  const cpu::ExpForm widest = cpu::widest_exp_form();
  for (cpu::ExpForm form : {cpu::ExpForm::Avx512, cpu::ExpForm::Avx2}) {
    if (form > widest) continue;
    CAPTURE(static_cast<int>(form));
    cpu::use_exp_form(form);
    check_exp_rows();
  }
  cpu::use_exp_form(widest);
  // float64: std::exp entry by entry, and the same lane order for the sum
  std::vector<double> x(21), p(21), y(21);
  for (size_t c = 0; c < x.size(); ++c) x[c] = c % 4 == 0 ? -std::numeric_limits<double>::infinity() : 0.5 * c - 3.0;
  cpu::exp_of_difference(x.data(), 21, 2.0, p.data());
  cpu::softmax_minus_onehot_row(x.data(), 21, 2.0, 3, 0.5, y.data());
  double lane[cpu::kLanes] = {}, total = 0.0;
  for (int64_t c = 0; c < 21; ++c) {
    CHECK(same_bits(p[c], std::exp(x[c] - 2.0)));
    CHECK(same_bits(y[c], (c == 3 ? p[c] + -1.0 : p[c]) * 0.5));
    lane[c < 16 ? c % cpu::kLanes : 0] += p[c];
  }
  for (double l : lane) total += l;
  CHECK(same_bits(cpu::sum_exp_of_difference(x.data(), 21, 2.0), total));
}

namespace {

// The CPU backend's LayerNorm rows, forward and backward, against formula::layer_norm_row and
// layer_norm_backward_row compiled in this file (the baseline, one row at a time), bit for bit.
template <typename T>
void check_layer_norm_rows(int64_t rows, int64_t width, bool residual, bool affine) {
  CAPTURE(rows);
  CAPTURE(width);
  CAPTURE(residual);
  CAPTURE(affine);
  const DType dtype = std::is_same_v<T, float> ? DType::F32 : DType::F64;
  Generator gen(static_cast<uint64_t>(rows * 1000 + width));
  const auto values = [&](int64_t n, double scale) {
    std::vector<T> v(static_cast<size_t>(n));
    for (T& e : v) e = static_cast<T>(scale * gen.normal());
    return v;
  };
  const int64_t n = rows * width;
  std::vector<T> x = values(n, 3.0), res = values(n, 1.0), w = values(width, 1.0), b = values(width, 0.5),
                 g = values(n, 1.0);
  if (n > 3) {  // a row of huge and tiny entries, and a signed zero
    x[0] = static_cast<T>(1e30);
    x[1] = static_cast<T>(-1e-30);
    x[2] = static_cast<T>(-0.0);
  }
  std::vector<T> out(n), x_hat(n), rstd(rows), d_x(n), want_out(n), want_hat(n), want_rstd(rows), want_dx(n);
  Backend& be = backend_for(Device::cpu());
  be.layer_norm_rows(dtype, x.data(), residual ? res.data() : nullptr, affine ? w.data() : nullptr,
                     affine ? b.data() : nullptr, rows, width, 1e-5, out.data(), x_hat.data(), rstd.data());
  be.layer_norm_backward_rows(dtype, g.data(), x_hat.data(), rstd.data(), affine ? w.data() : nullptr, rows, width,
                              d_x.data());
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t at = r * width;
    formula::layer_norm_row(x.data() + at, residual ? res.data() + at : nullptr, affine ? w.data() : nullptr,
                            affine ? b.data() : nullptr, width, 1e-5, want_out.data() + at, want_hat.data() + at,
                            want_rstd.data() + r);
    formula::layer_norm_backward_row(g.data() + at, want_hat.data() + at, want_rstd[r], affine ? w.data() : nullptr,
                                     width, want_dx.data() + at);
  }
  CHECK(std::memcmp(out.data(), want_out.data(), out.size() * sizeof(T)) == 0);
  CHECK(std::memcmp(x_hat.data(), want_hat.data(), x_hat.size() * sizeof(T)) == 0);
  CHECK(std::memcmp(rstd.data(), want_rstd.data(), rstd.size() * sizeof(T)) == 0);
  CHECK(std::memcmp(d_x.data(), want_dx.data(), d_x.size() * sizeof(T)) == 0);
}

}  // namespace

TEST_CASE("the LayerNorm rows give the one-row formula's bits, forward and backward, float32 and float64") {
  for (int64_t rows : {1, 3, 4, 5, 9, 64})
    for (int64_t width : {1, 2, 3, 7, 8, 13, 31, 64, 67, 256})
      for (bool residual : {false, true})
        for (bool affine : {false, true}) {
          check_layer_norm_rows<float>(rows, width, residual, affine);
          check_layer_norm_rows<double>(rows, width, residual, affine);
        }
}
