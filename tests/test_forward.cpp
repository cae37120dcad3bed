// tests/test_forward.cpp — forward values of every op and of tensor creation, in float32 and
// float64, against literals computed by hand or with PyTorch (torch 1.13, float64).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "framework/autograd.h"
#include "framework/ops.h"
#include "framework/random.h"

using namespace qkv;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const DType kFloatTypes[] = {DType::F32, DType::F64};

double tol_for(DType dtype) { return dtype == DType::F64 ? 1e-12 : 1e-6; }

// Shape, dtype and every element (relative-and-absolute tolerance by dtype).
void check_values(const Tensor& t, const Shape& shape, const std::vector<double>& expected, DType dtype) {
  REQUIRE(t.defined());
  CHECK(shape_str(t.shape()) == shape_str(shape));
  CHECK(t.dtype() == dtype);
  const std::vector<double> got = t.to_vector();
  REQUIRE(got.size() == expected.size());
  const double tol = tol_for(dtype);
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CAPTURE(got[i]);
    CAPTURE(expected[i]);
    if (std::isinf(expected[i]))
      CHECK(got[i] == expected[i]);  // -inf stays exactly -inf
    else
      CHECK(std::fabs(got[i] - expected[i]) <= tol * (1.0 + std::fabs(expected[i])));
  }
}

Tensor T(const std::vector<double>& v, const Shape& s, DType dtype) { return Tensor::from_vector(v, s, dtype); }

}  // namespace

TEST_SUITE("forward") {
  TEST_CASE("add, sub, mul, div with broadcasting") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor a = T({1, 2, 3, 4, 5, 6}, {2, 3}, dt);
      Tensor b = T({10, 20, 30}, {3}, dt);
      check_values(add(a, b), {2, 3}, {11, 22, 33, 14, 25, 36}, dt);
      check_values(sub(a, b), {2, 3}, {-9, -18, -27, -6, -15, -24}, dt);
      check_values(mul(a, b), {2, 3}, {10, 40, 90, 40, 100, 180}, dt);
      check_values(div(a, b), {2, 3}, {0.1, 0.1, 0.1, 0.4, 0.25, 0.2}, dt);
      check_values(sub(b, a), {2, 3}, {9, 18, 27, 6, 15, 24}, dt);  // broadcast on the left
      // (2,1) * (1,3) -> (2,3) outer product
      Tensor col = T({2, 3}, {2, 1}, dt), row = T({1, 10, 100}, {1, 3}, dt);
      check_values(mul(col, row), {2, 3}, {2, 20, 200, 3, 30, 300}, dt);
      check_values(add(col, row), {2, 3}, {3, 12, 102, 4, 13, 103}, dt);
      check_values(div(row, col), {2, 3}, {0.5, 5, 50, 1.0 / 3, 10.0 / 3, 100.0 / 3}, dt);
      // a 0-d scalar broadcasts against anything
      check_values(mul(a, Tensor::scalar(-2, dt)), {2, 3}, {-2, -4, -6, -8, -10, -12}, dt);
      // the operators and scalar helpers
      check_values(a + b, {2, 3}, {11, 22, 33, 14, 25, 36}, dt);
      check_values(-a, {2, 3}, {-1, -2, -3, -4, -5, -6}, dt);
      check_values(a * 0.5, {2, 3}, {0.5, 1, 1.5, 2, 2.5, 3}, dt);
      check_values(add_scalar(a, -1), {2, 3}, {0, 1, 2, 3, 4, 5}, dt);
      check_values(pow_scalar(T({4, 9}, {2}, dt), -0.5), {2}, {0.5, 1.0 / 3}, dt);
    }
  }

  TEST_CASE("exp, log, sqrt, tanh, relu, gelu") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor x = T({-1.0, 0.5, 2.0}, {3}, dt);
      Tensor p = T({0.5, 1.0, 4.0}, {3}, dt);
      check_values(exp(x), {3}, {0.36787944117144233, 1.6487212707001282, 7.38905609893065}, dt);
      check_values(log(p), {3}, {-0.6931471805599453, 0.0, 1.3862943611198906}, dt);
      check_values(sqrt(p), {3}, {0.7071067811865476, 1.0, 2.0}, dt);
      check_values(tanh(x), {3}, {-0.7615941559557649, 0.46211715726000974, 0.9640275800758169}, dt);
      check_values(relu(T({-2.0, 0.0, 0.5, 3.0}, {2, 2}, dt)), {2, 2}, {0, 0, 0.5, 3.0}, dt);
      {
        // as torch.relu: NaN stays NaN, -inf gives 0, -0.0 stays -0.0 (checked on 37 entries, so
        // the vectorised loop and its scalar remainder both run)
        const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
        std::vector<double> in;
        for (int i = 0; i < 37; ++i) in.push_back(std::vector<double>{nan, -inf, -0.0, inf, -1.5, 2.5}[i % 6]);
        const std::vector<double> out = relu(T(in, {37}, dt)).to_vector();
        for (int i = 0; i < 37; ++i) {
          CAPTURE(i);
          switch (i % 6) {
            case 0: CHECK(std::isnan(out[i])); break;
            case 1: CHECK(out[i] == 0.0); CHECK(!std::signbit(out[i])); break;
            case 2: CHECK(out[i] == 0.0); CHECK(std::signbit(out[i])); break;
            case 3: CHECK(out[i] == inf); break;
            case 4: CHECK(out[i] == 0.0); CHECK(!std::signbit(out[i])); break;
            default: CHECK(out[i] == 2.5);
          }
        }
      }
      // exact erf form: gelu(1) = Phi(1) = 0.8413447460685429 (tanh approximation gives 0.8411920)
      check_values(gelu(T({-1.0, 0.0, 1.0, 2.0}, {4}, dt)), {4},
                   {-0.15865525393145702, 0.0, 0.8413447460685429, 1.9544997361036416}, dt);
    }
  }

  TEST_CASE("matmul: plain, transpose flags, batched, shared right operand") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor a = T({1, 2, 3, 4, 5, 6}, {2, 3}, dt);
      Tensor b = T({7, 8, 9, 10, 11, 12}, {3, 2}, dt);
      Tensor a_t = T({1, 4, 2, 5, 3, 6}, {3, 2}, dt);       // a stored transposed
      Tensor b_t = T({7, 9, 11, 8, 10, 12}, {2, 3}, dt);    // b stored transposed
      const std::vector<double> ab = {58, 64, 139, 154};
      check_values(matmul(a, b), {2, 2}, ab, dt);
      check_values(matmul(a, b_t, false, true), {2, 2}, ab, dt);
      check_values(matmul(a_t, b, true, false), {2, 2}, ab, dt);
      check_values(matmul(a_t, b_t, true, true), {2, 2}, ab, dt);
      // b @ a is (3,3)
      check_values(matmul(b, a), {3, 3}, {39, 54, 69, 49, 68, 87, 59, 82, 105}, dt);
      // batched (2,2,2) @ (2,2,2)
      Tensor x = T({1, 2, 3, 4, 2, 0, 0, 3}, {2, 2, 2}, dt);
      Tensor y = T({5, 6, 7, 8, 1, 2, 3, 4}, {2, 2, 2}, dt);
      check_values(matmul(x, y), {2, 2, 2}, {19, 22, 43, 50, 2, 4, 9, 12}, dt);
      // batched with transpose_b: x @ y^T per batch
      check_values(matmul(x, y, false, true), {2, 2, 2}, {17, 23, 39, 53, 2, 6, 6, 12}, dt);
      // batched with transpose_a: x^T @ y per batch
      check_values(matmul(x, y, true, false), {2, 2, 2}, {26, 30, 38, 44, 2, 4, 9, 12}, dt);
      // (2,2,3) @ shared (3,2), and the same weight stored as (2,3) with transpose_b
      Tensor xb = T({1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}, {2, 2, 3}, dt);
      const std::vector<double> xb_b = {58, 64, 139, 154, 7, 8, 9, 10};
      check_values(matmul(xb, b), {2, 2, 2}, xb_b, dt);
      check_values(matmul(xb, b_t, false, true), {2, 2, 2}, xb_b, dt);
      // shared left operand (2,3) @ (2,3,2)
      Tensor yb = T({7, 8, 9, 10, 11, 12, 1, 0, 0, 1, 0, 0}, {2, 3, 2}, dt);
      check_values(matmul(a, yb), {2, 2, 2}, {58, 64, 139, 154, 1, 2, 4, 5}, dt);
    }
  }

  TEST_CASE("transpose, reshape with -1, concat, slice") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor a = T({1, 2, 3, 4, 5, 6}, {2, 3}, dt);
      check_values(transpose(a), {3, 2}, {1, 4, 2, 5, 3, 6}, dt);
      Tensor a3 = T({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 2, 3}, dt);
      check_values(transpose(a3), {2, 3, 2}, {1, 4, 2, 5, 3, 6, 7, 10, 8, 11, 9, 12}, dt);
      check_values(reshape(a, {-1}), {6}, {1, 2, 3, 4, 5, 6}, dt);
      check_values(reshape(a, {3, -1}), {3, 2}, {1, 2, 3, 4, 5, 6}, dt);
      check_values(reshape(a3, {-1, 2, 2}), {3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, dt);
      check_values(view(a, {1, 6}), {1, 6}, {1, 2, 3, 4, 5, 6}, dt);
      Tensor b = T({7, 8, 9}, {1, 3}, dt);
      check_values(concat({a, b}, 0), {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, dt);
      Tensor c = T({-1, -2}, {2, 1}, dt);
      check_values(concat({c, a, c}, 1), {2, 5}, {-1, 1, 2, 3, -1, -2, 4, 5, 6, -2}, dt);
      check_values(concat({a, c}, -1), {2, 4}, {1, 2, 3, -1, 4, 5, 6, -2}, dt);
      check_values(slice(a, 1, 1, 3), {2, 2}, {2, 3, 5, 6}, dt);
      check_values(slice(a, 0, 1, 2), {1, 3}, {4, 5, 6}, dt);
      check_values(slice(a, -1, 0, 1), {2, 1}, {1, 4}, dt);
      check_values(slice(a3, 1, 1, 2), {2, 1, 3}, {4, 5, 6, 10, 11, 12}, dt);
      check_values(slice(a, 1, 2, 2), {2, 0}, {}, dt);  // an empty range is allowed
    }
  }

  TEST_CASE("sum, mean, max over axes; max takes the first index on ties") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor x = T({1, 5, 3, 4, 2, 6}, {2, 3}, dt);
      check_values(sum(x), {}, {21}, dt);
      check_values(sum(x, 0), {3}, {5, 7, 9}, dt);
      check_values(sum(x, 1), {2}, {9, 12}, dt);
      check_values(sum(x, -1, true), {2, 1}, {9, 12}, dt);
      check_values(mean(x), {}, {3.5}, dt);
      check_values(mean(x, 0), {3}, {2.5, 3.5, 4.5}, dt);
      check_values(mean(x, -1, true), {2, 1}, {3, 4}, dt);
      check_values(max(x, 1), {2}, {5, 6}, dt);
      check_values(max(x, 0, true), {1, 3}, {4, 5, 6}, dt);
      MaxResult m = max_with_indices(x, 1);
      CHECK(m.indices.dtype() == DType::I64);
      CHECK(m.indices.to_ids() == std::vector<int64_t>{1, 2});
      // ties: the first maximal element wins
      Tensor tie = T({2, 7, 7, 3, 3, 1, -1, -1, -1}, {3, 3}, dt);
      MaxResult mt = max_with_indices(tie, -1);
      check_values(mt.values, {3}, {7, 3, -1}, dt);
      CHECK(mt.indices.to_ids() == std::vector<int64_t>{1, 0, 0});
      MaxResult m0 = max_with_indices(T({5, 1, 5, 9}, {2, 2}, dt), 0, true);
      CHECK(shape_str(m0.indices.shape()) == "(1, 2)");
      CHECK(m0.indices.to_ids() == std::vector<int64_t>{0, 1});
      // 3-d, middle axis
      Tensor x3 = T({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}, dt);
      check_values(sum(x3, 1), {2, 2}, {4, 6, 12, 14}, dt);
      check_values(max(x3, 1), {2, 2}, {3, 4, 7, 8}, dt);
    }
  }

  TEST_CASE("softmax rows, including all -inf and partly masked rows; log_softmax") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor x = T({1, 2, 3, -kInf, -kInf, -kInf, 1, -kInf, 3}, {3, 3}, dt);
      Tensor y = softmax(x);
      check_values(y, {3, 3},
                   {0.09003057317038045, 0.2447284710547976, 0.6652409557748218,  // open row
                    0, 0, 0,                                                        // all -inf: zeros, not NaN
                    0.11920292202211755, 0.0, 0.8807970779778823},                  // partly masked
                   dt);
      for (double v : y.to_vector()) CHECK_FALSE(std::isnan(v));
      // softmax is shift-invariant and handles large logits without overflow
      check_values(softmax(T({1001, 1002, 1003}, {1, 3}, dt)), {1, 3},
                   {0.09003057317038045, 0.2447284710547976, 0.6652409557748218}, dt);
      Tensor ls = log_softmax(T({1, 2, 3, 0, 0, 0}, {2, 3}, dt));
      check_values(ls, {2, 3},
                   {-2.4076059644443806, -1.4076059644443804, -0.4076059644443804, -1.0986122886681098,
                    -1.0986122886681098, -1.0986122886681098},
                   dt);
      // an all -inf row gives zeros in log_softmax too (documented in ops.h)
      Tensor ls_masked = log_softmax(T({-kInf, -kInf}, {1, 2}, dt));
      check_values(ls_masked, {1, 2}, {0, 0}, dt);
    }
  }

  TEST_CASE("masked_fill with a broadcast 0/1 mask") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor x = T({1, 2, 3, 4, 5, 6}, {2, 3}, dt);
      // mask (3,) broadcasts over the rows; 0 means "fill"
      check_values(masked_fill(x, T({1, 0, 1}, {3}, dt), -7), {2, 3}, {1, -7, 3, 4, -7, 6}, dt);
      // mask (2,1) broadcasts over the columns
      check_values(masked_fill(x, T({0, 1}, {2, 1}, dt), 0.5), {2, 3}, {0.5, 0.5, 0.5, 4, 5, 6}, dt);
      // a causal (T,T) mask broadcast over a batch, filled with -inf
      Tensor scores = T({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}, dt);
      Tensor causal = T({1, 0, 1, 1}, {2, 2}, dt);
      check_values(masked_fill(scores, causal, -kInf), {2, 2, 2}, {1, -kInf, 3, 4, 5, -kInf, 7, 8}, dt);
      // an int64 mask works too
      check_values(masked_fill(x, Tensor::from_ids({0, 1, 1}, {3}), 9), {2, 3}, {9, 2, 3, 9, 5, 6}, dt);
    }
  }

  TEST_CASE("embedding picks rows") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor table = T({0, 1, 10, 11, 20, 21, 30, 31}, {4, 2}, dt);
      Tensor ids = Tensor::from_ids({3, 0, 1, 1}, {2, 2});
      check_values(embedding(table, ids), {2, 2, 2}, {30, 31, 0, 1, 10, 11, 10, 11}, dt);
      check_values(embedding(table, Tensor::from_ids({2}, {1})), {1, 2}, {20, 21}, dt);
    }
  }

  TEST_CASE("layer_norm against hand-computed values") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor x = T({1, 2, 4, -1, 0, 3}, {2, 3}, dt);
      // row 0: mean 7/3, biased var 14/9; row 1: mean 2/3, biased var 26/9; eps 1e-5
      check_values(layer_norm(x, Tensor(), Tensor()), {2, 3},
                   {-1.069041531450298, -0.2672603828625746, 1.3363019143128718, -0.9805789785364645,
                    -0.3922315914145858, 1.37281056995105},
                   dt);
      Tensor w = T({1, 2, 0.5}, {3}, dt), b = T({0, 1, -1}, {3}, dt);
      check_values(layer_norm(x, w, b), {2, 3},
                   {-1.069041531450298, 0.46547923427485083, -0.3318490428435641, -0.9805789785364645,
                    0.2155368171708284, -0.313594715024475},
                   dt);
      // a constant row normalises to zeros (variance 0, eps keeps it finite)
      check_values(layer_norm(T({5, 5, 5, 5}, {1, 4}, dt), Tensor(), Tensor()), {1, 4}, {0, 0, 0, 0}, dt);
      // by hand: x = (0, 2): mean 1, var 1, x_hat = (-1, 1) / sqrt(1 + eps)
      const double r = 1.0 / std::sqrt(1.0 + 1e-5);
      check_values(layer_norm(T({0, 2}, {2}, dt), Tensor(), Tensor()), {2}, {-r, r}, dt);
    }
  }

  TEST_CASE("cross_entropy with ignore_index, and the all-ignored case is NaN") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor logits = T({1, 2, 3, 0.5, 0.5, 0.5, 2, -1, 0}, {3, 3}, dt);
      // mean over the two counted rows of -log_softmax[target] (torch: 0.28872599200033294)
      Tensor loss = cross_entropy(logits, Tensor::from_ids({2, -100, 0}, {3}), -100);
      check_values(loss, {}, {0.28872599200033294}, dt);
      // uniform logits: loss = log(3)
      check_values(cross_entropy(T({0.5, 0.5, 0.5}, {1, 3}, dt), Tensor::from_ids({1}, {1})), {},
                   {1.0986122886681098}, dt);
      // a custom ignore index and 3-d logits (B, T, vocab)
      Tensor l3 = T({1, 2, 3, 0, 0, 0, 0.5, 0.5, 0.5, 9, 9, 9}, {2, 2, 3}, dt);
      check_values(cross_entropy(l3, Tensor::from_ids({2, 7, 1, 7}, {2, 2}), 7), {},
                   {(0.4076059644443804 + 1.0986122886681098) / 2}, dt);
      // PyTorch returns NaN when every target is ignored
      Tensor all_ignored = cross_entropy(logits, Tensor::from_ids({-100, -100, -100}, {3}), -100);
      CHECK(std::isnan(all_ignored.item()));
    }
  }

  TEST_CASE("dropout: seeded masks, identity when off, scaling and drop rate") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Tensor x = add_scalar(Tensor::arange(64, dt), 1.0);  // all nonzero
      Generator g1(123), g2(123), g3(124);
      const std::vector<double> a = dropout(x, 0.5, true, g1).to_vector();
      const std::vector<double> b = dropout(x, 0.5, true, g2).to_vector();
      const std::vector<double> c = dropout(x, 0.5, true, g3).to_vector();
      CHECK(a == b);  // same seed, same mask
      CHECK(a != c);  // another seed, another mask (64 coin flips)
      // p = 0 or evaluation mode: identity (and the generator is not consumed)
      Generator g4(5);
      check_values(dropout(x, 0.0, true, g4), {64}, x.to_vector(), dt);
      check_values(dropout(x, 0.7, false, g4), {64}, x.to_vector(), dt);
      Generator g5(5);
      CHECK(g4.next_u64() == g5.next_u64());
      // kept elements are scaled by 1 / (1 - p), dropped ones are exactly 0
      const std::vector<double> xs = x.to_vector();
      Generator g6(9);
      const std::vector<double> d = dropout(x, 0.25, true, g6).to_vector();
      int kept = 0;
      for (size_t i = 0; i < d.size(); ++i) {
        if (d[i] == 0.0) continue;
        ++kept;
        CHECK(d[i] == doctest::Approx(xs[i] / 0.75).epsilon(1e-6));
      }
      CHECK(kept > 0);
      CHECK(kept < 64);
      // about p of a large tensor is zeroed
      Tensor big = Tensor::ones({200000}, dt);
      Generator g7(2024);
      const std::vector<double> dropped = dropout(big, 0.3, true, g7).to_vector();
      int64_t zeros = 0;
      for (double v : dropped) zeros += v == 0.0;
      const double fraction = static_cast<double>(zeros) / static_cast<double>(dropped.size());
      CHECK(std::fabs(fraction - 0.3) < 0.005);  // the standard deviation is 0.001
      double total = 0;
      for (double v : dropped) total += v;
      CHECK(std::fabs(total / dropped.size() - 1.0) < 0.01);  // expectation preserved (std 0.0015)
    }
  }

  TEST_CASE("creation: zeros, ones, full, arange, from_vector, scalar, from_ids") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      check_values(Tensor::zeros({2, 3}, dt), {2, 3}, {0, 0, 0, 0, 0, 0}, dt);
      check_values(Tensor::ones({4}, dt), {4}, {1, 1, 1, 1}, dt);
      check_values(Tensor::full({2, 2}, -2.5, dt), {2, 2}, {-2.5, -2.5, -2.5, -2.5}, dt);
      check_values(Tensor::arange(5, dt), {5}, {0, 1, 2, 3, 4}, dt);
      check_values(Tensor::from_vector({1.5, -2, 3.25, 0}, {2, 1, 2}, dt), {2, 1, 2}, {1.5, -2, 3.25, 0}, dt);
      check_values(Tensor::scalar(7, dt), {}, {7}, dt);
      CHECK(Tensor::scalar(7, dt).item() == 7.0);
      check_values(Tensor::zeros({0, 3}, dt), {0, 3}, {}, dt);
      Tensor t = Tensor::ones({2}, dt);
      CHECK_FALSE(t.requires_grad());
      CHECK(t.is_leaf());
      CHECK(t.device() == Device::cpu());
    }
    // float32 rounds, float64 keeps every bit
    CHECK(Tensor::from_vector({0.1}, {1}, DType::F32).item() == static_cast<double>(0.1f));
    CHECK(Tensor::from_vector({0.1}, {1}, DType::F64).item() == 0.1);
    Tensor ids = Tensor::from_ids({4, -1, 7}, {3});
    CHECK(ids.dtype() == DType::I64);
    CHECK(ids.to_ids() == std::vector<int64_t>{4, -1, 7});
    CHECK(Tensor().defined() == false);
    CHECK(Tensor::zeros({2, 3}).describe() == "float32 (2, 3) on cpu");
  }

  // arange takes a dtype; int64 once went through from_vector, which rejects int64.
  TEST_CASE("arange in int64") {
    CHECK(Tensor::arange(3, DType::I64).to_ids() == std::vector<int64_t>{0, 1, 2});
  }

  TEST_CASE("randn and rand_uniform: seeded, and within their bounds") {
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      Generator g1(42), g2(42), g3(43);
      const std::vector<double> a = randn({1000}, g1, dt).to_vector();
      const std::vector<double> b = randn({1000}, g2, dt).to_vector();
      const std::vector<double> c = randn({1000}, g3, dt).to_vector();
      CHECK(a == b);
      CHECK(a != c);
      // the generator advances: a second draw differs from the first
      CHECK(randn({1000}, g1, dt).to_vector() != a);
      double m = 0, s = 0;
      for (double v : a) m += v;
      m /= a.size();
      for (double v : a) s += (v - m) * (v - m);
      s = std::sqrt(s / a.size());
      CHECK(std::fabs(m) < 0.1);  // 3 standard errors of the mean
      CHECK(std::fabs(s - 1.0) < 0.07);
      // mean/std arguments shift and scale
      Generator g4(42);
      const std::vector<double> shifted = randn({1000}, g4, dt, Device::cpu(), 3.0, 2.0).to_vector();
      for (size_t i = 0; i < a.size(); ++i) CHECK(shifted[i] == doctest::Approx(3.0 + 2.0 * a[i]).epsilon(1e-5));

      Generator u1(7), u2(7);
      const std::vector<double> u = rand_uniform({5000}, u1, -0.25, 0.75, dt).to_vector();
      CHECK(u == rand_uniform({5000}, u2, -0.25, 0.75, dt).to_vector());
      double lo = 1e9, hi = -1e9, total = 0;
      for (double v : u) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        total += v;
      }
      CHECK(lo >= -0.25);
      CHECK(hi <= 0.75);
      CHECK(lo < -0.2);  // the range is actually used
      CHECK(hi > 0.7);
      CHECK(std::fabs(total / u.size() - 0.25) < 0.02);  // the standard deviation is 0.004
    }
  }
}
