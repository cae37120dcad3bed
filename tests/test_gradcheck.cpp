// tests/test_gradcheck.cpp — a float64 central-difference gradient check for every differentiable
// op (PyTorch's gradcheck criterion), covering broadcasting, masks, shared inputs and transposes.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "framework/ops.h"
#include "framework/random.h"
#include "gradcheck.h"

using namespace qkv;
using qkv::testing::gradcheck;
using V = std::vector<Tensor>;

namespace {
Generator gen(7);
Tensor r(const Shape& s) { return randn(s, gen, DType::F64); }
Tensor positive(const Shape& s) { return add_scalar(mul_scalar(rand_uniform(s, gen, 0, 1, DType::F64), 1.5), 0.5); }
}  // namespace

TEST_SUITE("gradcheck") {
  TEST_CASE("add, sub, mul, div with broadcasting") {
    auto shapes = std::vector<std::pair<Shape, Shape>>{{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{4, 1, 3}, {2, 1}}, {{2, 3}, {}}};
    for (auto [sa, sb] : shapes) {
      CAPTURE(shape_str(sa));
      CAPTURE(shape_str(sb));
      CHECK_GRADCHECK([](const V& x) { return add(x[0], x[1]); }, V{r(sa), r(sb)});
      CHECK_GRADCHECK([](const V& x) { return sub(x[0], x[1]); }, V{r(sa), r(sb)});
      CHECK_GRADCHECK([](const V& x) { return mul(x[0], x[1]); }, V{r(sa), r(sb)});
      CHECK_GRADCHECK([](const V& x) { return div(x[0], x[1]); }, V{r(sa), positive(sb)});
    }
  }

  TEST_CASE("pointwise functions") {
    CHECK_GRADCHECK([](const V& x) { return neg(x[0]); }, V{r({3, 2})});
    CHECK_GRADCHECK([](const V& x) { return exp(x[0]); }, V{r({3, 2})});
    CHECK_GRADCHECK([](const V& x) { return log(x[0]); }, V{positive({3, 2})});
    CHECK_GRADCHECK([](const V& x) { return sqrt(x[0]); }, V{positive({3, 2})});
    CHECK_GRADCHECK([](const V& x) { return tanh(x[0]); }, V{r({3, 2})});
    // relu: keep inputs away from the kink at 0
    Tensor away = Tensor::from_vector({-1.5, -0.3, 0.2, 0.9, 2.0, -2.2}, {2, 3}, DType::F64);
    CHECK_GRADCHECK([](const V& x) { return relu(x[0]); }, V{away});
    CHECK_GRADCHECK([](const V& x) { return gelu(x[0]); }, V{r({3, 4})});
    CHECK_GRADCHECK([](const V& x) { return mul_scalar(x[0], -2.5); }, V{r({3})});
    CHECK_GRADCHECK([](const V& x) { return add_scalar(x[0], 4.0); }, V{r({3})});
    CHECK_GRADCHECK([](const V& x) { return pow_scalar(x[0], -0.5); }, V{positive({3})});
  }

  TEST_CASE("matmul: plain, batched, shared weight, and every transpose flag") {
    CHECK_GRADCHECK([](const V& x) { return matmul(x[0], x[1]); }, V{r({2, 3}), r({3, 4})});
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        CAPTURE(ta);
        CAPTURE(tb);
        Shape sa = ta ? Shape{2, 3, 2} : Shape{2, 2, 3};
        Shape sb = tb ? Shape{2, 4, 3} : Shape{2, 3, 4};
        CHECK_GRADCHECK([ta, tb](const V& x) { return matmul(x[0], x[1], ta, tb); }, V{r(sa), r(sb)});
        // a shared 2-d left operand broadcast across the batch
        Shape sa2 = ta ? Shape{3, 2} : Shape{2, 3};
        CHECK_GRADCHECK([ta, tb](const V& x) { return matmul(x[0], x[1], ta, tb); }, V{r(sa2), r(sb)});
        // a shared 2-d right operand (the Linear layer case)
        Shape sb2 = tb ? Shape{4, 3} : Shape{3, 4};
        CHECK_GRADCHECK([ta, tb](const V& x) { return matmul(x[0], x[1], ta, tb); }, V{r(sa), r(sb2)});
      }
    // Q @ K^T with the same tensor on both sides (a shared input)
    CHECK_GRADCHECK([](const V& x) { return matmul(x[0], x[0], false, true); }, V{r({2, 3, 2})});
  }

  TEST_CASE("transpose, reshape, view, concat, slice") {
    CHECK_GRADCHECK([](const V& x) { return transpose(x[0]); }, V{r({2, 3, 4})});
    CHECK_GRADCHECK([](const V& x) { return mul(reshape(x[0], {3, -1}), x[1]); }, V{r({2, 3, 2}), r({3, 4})});
    CHECK_GRADCHECK([](const V& x) { return view(x[0], {6}); }, V{r({2, 3})});
    CHECK_GRADCHECK([](const V& x) { return concat({x[0], x[1], x[0]}, 1); }, V{r({2, 1, 3}), r({2, 2, 3})});
    CHECK_GRADCHECK([](const V& x) { return concat({x[0], x[1]}, -1); }, V{r({2, 2}), r({2, 3})});
    CHECK_GRADCHECK([](const V& x) { return slice(x[0], 1, 1, 3); }, V{r({2, 4, 2})});
    CHECK_GRADCHECK([](const V& x) { return slice(x[0], 0, 0, 1); }, V{r({3, 2})});
  }

  TEST_CASE("sum, mean, max") {
    CHECK_GRADCHECK([](const V& x) { return sum(x[0]); }, V{r({2, 3})});
    CHECK_GRADCHECK([](const V& x) { return mean(x[0]); }, V{r({2, 3})});
    for (int64_t axis : {0, 1, -1}) {
      CAPTURE(axis);
      CHECK_GRADCHECK([axis](const V& x) { return sum(x[0], axis); }, V{r({2, 3, 4})});
      CHECK_GRADCHECK([axis](const V& x) { return mean(x[0], axis, true); }, V{r({2, 3, 4})});
      CHECK_GRADCHECK([axis](const V& x) { return max(x[0], axis); }, V{r({2, 3, 4})});
    }
  }

  TEST_CASE("softmax and log_softmax, with fully and partly masked rows") {
    CHECK_GRADCHECK([](const V& x) { return softmax(x[0]); }, V{r({3, 4})});
    CHECK_GRADCHECK([](const V& x) { return log_softmax(x[0]); }, V{r({2, 3, 4})});
    // row 0 fully masked, row 1 partly masked (causal), row 2 open
    Tensor mask = Tensor::from_vector({0, 0, 0, 1, 0, 0, 1, 1, 1}, {3, 3}, DType::F64);
    const double ninf = -std::numeric_limits<double>::infinity();
    CHECK_GRADCHECK([mask, ninf](const V& x) { return softmax(masked_fill(x[0], mask, ninf)); }, V{r({2, 3, 3})});
    CHECK_GRADCHECK([mask, ninf](const V& x) { return masked_fill(log_softmax(masked_fill(x[0], mask, ninf)), mask, 0.0); }, V{r({3, 3})});
  }

  TEST_CASE("masked_fill with a broadcast mask") {
    Tensor mask = Tensor::from_vector({1, 0, 1}, {3}, DType::F64);
    CHECK_GRADCHECK([mask](const V& x) { return masked_fill(x[0], mask, -7.0); }, V{r({2, 3})});
  }

  TEST_CASE("embedding scatter-adds repeated ids") {
    Tensor ids = Tensor::from_ids({1, 3, 1, 0, 3, 3}, {2, 3});
    CHECK_GRADCHECK([ids](const V& x) { return embedding(x[0], ids); }, V{r({4, 2})});
  }

  TEST_CASE("layer_norm with and without affine parameters") {
    CHECK_GRADCHECK([](const V& x) { return layer_norm(x[0], x[1], x[2]); }, V{r({2, 3, 5}), r({5}), r({5})});
    CHECK_GRADCHECK([](const V& x) { return layer_norm(x[0], Tensor(), Tensor()); }, V{r({4, 3})});
  }

  TEST_CASE("cross_entropy with ignore_index") {
    Tensor targets = Tensor::from_ids({2, -100, 0, 4}, {4});
    CHECK_GRADCHECK([targets](const V& x) { return cross_entropy(x[0], targets, -100); }, V{r({4, 5})});
    Tensor targets3 = Tensor::from_ids({1, 0, 0, 2, 9, 9}, {2, 3});  // 9 is the ignore index here
    CHECK_GRADCHECK([targets3](const V& x) { return cross_entropy(x[0], targets3, 9); }, V{r({2, 3, 3})});
  }

  TEST_CASE("dropout uses one seeded mask per call") {
    CHECK_GRADCHECK([](const V& x) {
      Generator g(42);  // same mask for every evaluation, so differences are well defined
      return dropout(x[0], 0.4, true, g);
    }, V{r({3, 4})});
  }

  TEST_CASE("a whole attention head composes correctly") {
    Tensor mask = Tensor::from_vector({1, 0, 0, 1, 1, 0, 1, 1, 1}, {3, 3}, DType::F64);
    const double ninf = -std::numeric_limits<double>::infinity();
    CHECK_GRADCHECK([mask, ninf](const V& x) {
      Tensor q = matmul(x[0], x[1], false, true), k = matmul(x[0], x[2], false, true), v = matmul(x[0], x[3], false, true);
      Tensor scores = mul_scalar(matmul(q, k, false, true), 1.0 / std::sqrt(2.0));
      return matmul(softmax(masked_fill(scores, mask, ninf)), v);
    }, V{r({2, 3, 4}), r({2, 4}), r({2, 4}), r({2, 4})});
  }

  TEST_CASE("a gradcheck catches a wrong derivative") {
    // x * detach(x): the analytic gradient sees x, the numeric one 2x, so the check must fail.
    auto wrong = [](const V& x) { return mul(x[0], x[0].detach()); };
    auto result = gradcheck(wrong, V{r({3})});
    CHECK_FALSE(result.ok);
  }
}
