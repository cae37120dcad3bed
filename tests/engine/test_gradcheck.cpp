// tests/engine/test_gradcheck.cpp — the float64 central-difference gradient check (PyTorch's gradcheck
// criterion) of every case in the op table (tests/op_cases.h) that does not say why it cannot have one.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "framework/ops.h"
#include "framework/random.h"
#include "tests/gradcheck.h"
#include "tests/op_cases.h"

using namespace qkv;
using qkv::testing::gradcheck;
using V = std::vector<Tensor>;

TEST_SUITE("gradcheck") {
TEST_CASE("gradcheck of every case in the op table") {
  int checked = 0, skipped = 0;
  for (const qkv::testing::OpCase& c : qkv::testing::op_cases()) {
    if (!c.no_gradcheck.empty()) {
      ++skipped;
      continue;
    }
    CAPTURE(c.name);
    // Only float inputs not marked constant are perturbed; the rest are captured as they are.
    const V inputs = c.make_inputs(DType::F64);
    std::vector<size_t> varied;
    V leaves;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].defined() && inputs[i].dtype() == DType::F64 && !c.is_constant(i)) {
        varied.push_back(i);
        leaves.push_back(inputs[i]);
      }
    REQUIRE_MESSAGE(!leaves.empty(), "a case with no differentiable input needs a no_grad reason");
    auto fn = [&c, &inputs, &varied](const V& x) {
      V all = inputs;
      for (size_t k = 0; k < varied.size(); ++k) all[varied[k]] = x[k];
      return c.fn(all);
    };
    CHECK_GRADCHECK(fn, leaves, qkv::testing::GradcheckOptions{c.grad.eps, c.grad.atol, c.grad.rtol});
    ++checked;
  }
  MESSAGE(checked << " cases gradchecked, " << skipped << " with a reason not to");
  CHECK(checked > 100);
}

TEST_CASE("a gradcheck catches a wrong derivative") {
  // x * detach(x): the analytic gradient sees x, the numeric one 2x, so the check must fail.
  Generator gen(7);
  auto wrong = [](const V& x) { return mul(x[0], x[0].detach()); };
  auto result = gradcheck(wrong, V{randn({3}, gen, DType::F64)});
  CHECK_FALSE(result.ok);
}
}
