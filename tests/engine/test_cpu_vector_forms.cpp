// tests/engine/test_cpu_vector_forms.cpp — the CPU backend's AVX2 forms give the bits of the plain
// loops they stand for: the row max, row sum and sum of squares (framework/cpu/row_reductions.h) on
// rows of every length up to a few lanes past 8 and on NaN, infinities and signed zeros, and every
// elementwise op (the AVX2 copy of the contiguous loops) against its formula in this file's code.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "framework/backend.h"
#include "framework/cpu/cpu_attention.h"
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
  for (int64_t n = 0; n <= 40; ++n) {
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
