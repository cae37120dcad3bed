// tests/op_cases.h — the one table of op cases (header-only: the framework tests and the GPU parity
// program share it); gradcheck, forward values and CPU/GPU parity loop over op_cases().
#pragma once

// The table is laid out by hand, one case per call with its expected values beneath it, as a
// reader scans it: .clang-format's rules would break each lambda over lines.
// clang-format off

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "framework/ops.h"
#include "framework/random.h"
#include "framework/tensor.h"

namespace qkv::testing {

using Tensors = std::vector<Tensor>;

// Builds one case's inputs in one dtype; the generator is seeded from the case's name, so the
// inputs are the same on every run and in every program.
struct InputMaker {
  DType dtype;
  Generator gen;
  Tensor randn(const Shape& shape) { return qkv::randn(shape, gen, dtype); }
  Tensor uniform(const Shape& shape, double low, double high) { return rand_uniform(shape, gen, low, high, dtype); }
  Tensor positive(const Shape& shape) { return uniform(shape, 0.5, 2.0); }
  Tensor values(const std::vector<double>& v, const Shape& shape) const { return Tensor::from_vector(v, shape, dtype); }
  static Tensor ids(const std::vector<int64_t>& v, const Shape& shape) { return Tensor::from_ids(v, shape); }
};

using InputFn = std::function<Tensors(InputMaker&)>;
using CaseFn = std::function<Tensor(const Tensors&)>;

// PyTorch's gradcheck criterion: eps 1e-6, |analytic - numeric| <= atol + rtol * |numeric|.
struct GradTolerance {
  double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
};

struct Expected {
  Shape shape;
  std::vector<double> values;  // compared at 1e-12 (float64) and 1e-6 (float32), relative
};

struct OpCase {
  std::string name;                 // unique
  std::vector<std::string> covers;  // the framework/ops.h functions it exercises
  InputFn inputs;
  CaseFn fn;
  std::vector<size_t> constants;  // float inputs that are not differentiated (masks); int64 never are
  GradTolerance grad;
  // CPU/GPU parity, relative with an absolute floor of a tenth of it times the largest magnitude
  double parity_rtol_f32 = 1e-5, parity_rtol_f64 = 1e-10;
  std::optional<Expected> expected;  // forward values for the literal inputs, in float32 and float64
  std::string no_gradcheck;          // why the float64 gradient check does not apply (empty: it runs)

  OpCase& expect(const Shape& shape, const std::vector<double>& values) {
    expected = Expected{shape, values};
    return *this;
  }
  OpCase& no_grad(const std::string& reason) {
    no_gradcheck = reason;
    return *this;
  }
  OpCase& constant(std::vector<size_t> indices) {
    constants = std::move(indices);
    return *this;
  }
  bool is_constant(size_t i) const {
    for (size_t c : constants)
      if (c == i) return true;
    return false;
  }
  // The inputs in `dtype` (int64 inputs stay int64), the same for every call.
  Tensors make_inputs(DType dtype) const {
    uint64_t seed = 1469598103934665603ull;  // FNV-1a of the name
    for (unsigned char ch : name) seed = (seed ^ ch) * 1099511628211ull;
    InputMaker maker{dtype, Generator(seed)};
    return inputs(maker);
  }
  double parity_rtol(DType dtype) const { return dtype == DType::F32 ? parity_rtol_f32 : parity_rtol_f64; }
};

namespace op_cases_detail {

inline OpCase make(std::string name, std::vector<std::string> covers, InputFn inputs, CaseFn fn) {
  OpCase c;
  c.name = std::move(name);
  c.covers = std::move(covers);
  c.inputs = std::move(inputs);
  c.fn = std::move(fn);
  return c;
}

// Literal inputs: each (values, shape) becomes a tensor of the case's dtype.
using Literal = std::pair<std::vector<double>, Shape>;
inline InputFn literals(std::vector<Literal> values) {
  return [values](InputMaker& m) {
    Tensors out;
    for (const auto& [v, shape] : values) out.push_back(m.values(v, shape));
    return out;
  };
}
inline InputFn randoms(std::vector<Shape> shapes) {
  return [shapes](InputMaker& m) {
    Tensors out;
    for (const Shape& s : shapes) out.push_back(m.randn(s));
    return out;
  };
}
inline std::string str(const Shape& s) { return shape_str(s); }
inline std::string num(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

const char* const kLarge = "large parity case: a full Jacobian is too slow; the small cases check the same derivative";
const char* const kEmpty = "an empty input or output: there is no element to perturb or compare";
const char* const kNonFinite = "non-finite inputs or outputs: central differences of inf/NaN are NaN";

// The case list the table's sections add to; adder() gives the add_case(...) each section calls.
struct CaseList {
  std::vector<OpCase> cases;
  auto adder() {
    return [this](OpCase c) -> OpCase& {
      cases.push_back(std::move(c));
      return cases.back();
    };
  }
};
using V = Tensors;
inline const double kInf = std::numeric_limits<double>::infinity();
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
// Literal inputs several sections share.
inline const Literal a23{{1, 2, 3, 4, 5, 6}, {2, 3}}, b3{{10, 20, 30}, {3}};
inline const Literal col{{2, 3}, {2, 1}}, row{{1, 10, 100}, {1, 3}};

// The table's sections, in its order.
inline void elementwise_binary_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- elementwise binary ops with broadcasting ----
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{2, 3}, {2, 3}},    {{2, 3}, {3}},          {{4, 1, 3}, {2, 1}},    {{2, 3}, {}},
      {{2, 3, 4}, {4}},    {{2, 3, 4}, {3, 1}},    {{2, 3, 4}, {2, 1, 4}}, {{2, 3, 4}, {1, 3, 1}},
      {{3, 1}, {2, 3, 4}}, {{2, 1}, {1, 3}},  // broadcast on the left; both sides broadcast
  };
  const std::vector<std::pair<std::string, Tensor (*)(const Tensor&, const Tensor&)>> binary = {
      {"add", add}, {"sub", sub}, {"mul", mul}, {"div", div}};
  for (const auto& [op_name, op] : binary)
    for (const auto& [sa, sb] : pairs) {
      const bool positive_b = op_name == "div";
      const Shape a = sa, b = sb;
      add_case(make(op_name + " " + str(a) + " with " + str(b), {op_name},
                    [a, b, positive_b](InputMaker& m) { return V{m.randn(a), positive_b ? m.positive(b) : m.randn(b)}; },
                    [op](const V& x) { return op(x[0], x[1]); }));
    }
  add_case(make("add values", {"add"}, literals({a23, b3}), [](const V& x) { return add(x[0], x[1]); }))
      .expect({2, 3}, {11, 22, 33, 14, 25, 36});
  add_case(make("sub values", {"sub"}, literals({a23, b3}), [](const V& x) { return sub(x[0], x[1]); }))
      .expect({2, 3}, {-9, -18, -27, -6, -15, -24});
  add_case(make("sub values, broadcast on the left", {"sub"}, literals({b3, a23}),
                [](const V& x) { return sub(x[0], x[1]); }))
      .expect({2, 3}, {9, 18, 27, 6, 15, 24});
  add_case(make("mul values", {"mul"}, literals({a23, b3}), [](const V& x) { return mul(x[0], x[1]); }))
      .expect({2, 3}, {10, 40, 90, 40, 100, 180});
  add_case(make("div values", {"div"}, literals({a23, b3}), [](const V& x) { return div(x[0], x[1]); }))
      .expect({2, 3}, {0.1, 0.1, 0.1, 0.4, 0.25, 0.2});
  add_case(make("mul values (2,1) by (1,3)", {"mul"}, literals({col, row}), [](const V& x) { return mul(x[0], x[1]); }))
      .expect({2, 3}, {2, 20, 200, 3, 30, 300});
  add_case(make("add values (2,1) and (1,3)", {"add"}, literals({col, row}), [](const V& x) { return add(x[0], x[1]); }))
      .expect({2, 3}, {3, 12, 102, 4, 13, 103});
  add_case(make("div values (1,3) by (2,1)", {"div"}, literals({row, col}), [](const V& x) { return div(x[0], x[1]); }))
      .expect({2, 3}, {0.5, 5, 50, 1.0 / 3, 10.0 / 3, 100.0 / 3});
  add_case(make("mul values by a 0-d scalar", {"mul"}, literals({a23, {{-2}, {}}}),
                [](const V& x) { return mul(x[0], x[1]); }))
      .expect({2, 3}, {-2, -4, -6, -8, -10, -12});
  add_case(make("operator+ values", {"add"}, literals({a23, b3}), [](const V& x) { return x[0] + x[1]; }))
      .expect({2, 3}, {11, 22, 33, 14, 25, 36});
  add_case(make("unary operator- values", {"neg"}, literals({a23}), [](const V& x) { return -x[0]; }))
      .expect({2, 3}, {-1, -2, -3, -4, -5, -6});
  add_case(make("operator* scalar values", {"mul_scalar"}, literals({a23}), [](const V& x) { return x[0] * 0.5; }))
      .expect({2, 3}, {0.5, 1, 1.5, 2, 2.5, 3});
  add_case(make("operators composed", {"add", "sub", "mul", "div", "neg", "mul_scalar"},
                [](InputMaker& m) { return V{m.randn({5, 7}), m.uniform({5, 7}, 0.2, 3.0)}; },
                [](const V& x) { return -(x[0] * 2.0 + x[1]) / x[1] - x[0]; }));
}

inline void elementwise_unary_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- elementwise unary ops ----
  const std::vector<std::pair<std::string, Tensor (*)(const Tensor&)>> unary = {
      {"neg", neg}, {"exp", exp}, {"tanh", tanh}, {"relu", relu}, {"gelu", gelu}};
  for (const auto& [op_name, op] : unary)
    add_case(make(op_name + " (5,7)", {op_name}, randoms({{5, 7}}), [op](const V& x) { return op(x[0]); }));
  for (const auto& [op_name, op] : std::vector<std::pair<std::string, Tensor (*)(const Tensor&)>>{{"log", log}, {"sqrt", sqrt}})
    add_case(make(op_name + " (5,7)", {op_name}, [](InputMaker& m) { return V{m.uniform({5, 7}, 0.2, 3.0)}; },
                  [op](const V& x) { return op(x[0]); }));
  add_case(make("relu away from the kink", {"relu"}, literals({{{-1.5, -0.3, 0.2, 0.9, 2.0, -2.2}, {2, 3}}}),
                [](const V& x) { return relu(x[0]); }))
      .expect({2, 3}, {0, 0, 0.2, 0.9, 2.0, 0});
  add_case(make("relu at 0, NaN and inf", {"relu"},
                literals({{{-1.0, 0.0, -0.0, 2.0, 0.0, 0.5, kNaN, -kInf, kInf}, {9}}}),
                [](const V& x) { return relu(x[0]); }))
      .no_grad("relu has a kink at 0, and inf/NaN inputs");
  add_case(make("gelu large (300,1000)", {"gelu"}, randoms({{300, 1000}}), [](const V& x) { return gelu(x[0]); }))
      .no_grad(kLarge);
  add_case(make("mul_scalar -2.5", {"mul_scalar"}, randoms({{3, 4}}), [](const V& x) { return mul_scalar(x[0], -2.5); }));
  add_case(make("add_scalar 0.75", {"add_scalar"}, randoms({{3, 4}}), [](const V& x) { return add_scalar(x[0], 0.75); }));
  add_case(make("add_scalar values", {"add_scalar"}, literals({a23}), [](const V& x) { return add_scalar(x[0], -1); }))
      .expect({2, 3}, {0, 1, 2, 3, 4, 5});
  for (double e : {2.0, 1.7, -0.5, 3.0})
    add_case(make("pow_scalar " + num(e), {"pow_scalar"}, [](InputMaker& m) { return V{m.uniform({5, 7}, 0.2, 3.0)}; },
                  [e](const V& x) { return pow_scalar(x[0], e); }));
  add_case(make("pow_scalar values", {"pow_scalar"}, literals({{{4, 9}, {2}}}),
                [](const V& x) { return pow_scalar(x[0], -0.5); }))
      .expect({2}, {0.5, 1.0 / 3});
  const Literal x3{{-1.0, 0.5, 2.0}, {3}}, p3{{0.5, 1.0, 4.0}, {3}};
  add_case(make("exp values", {"exp"}, literals({x3}), [](const V& x) { return exp(x[0]); }))
      .expect({3}, {0.36787944117144233, 1.6487212707001282, 7.38905609893065});
  add_case(make("log values", {"log"}, literals({p3}), [](const V& x) { return log(x[0]); }))
      .expect({3}, {-0.6931471805599453, 0.0, 1.3862943611198906});
  add_case(make("sqrt values", {"sqrt"}, literals({p3}), [](const V& x) { return sqrt(x[0]); }))
      .expect({3}, {0.7071067811865476, 1.0, 2.0});
  add_case(make("tanh values", {"tanh"}, literals({x3}), [](const V& x) { return tanh(x[0]); }))
      .expect({3}, {-0.7615941559557649, 0.46211715726000974, 0.9640275800758169});
  add_case(make("relu values", {"relu"}, literals({{{-2.0, 0.0, 0.5, 3.0}, {2, 2}}}), [](const V& x) { return relu(x[0]); }))
      .expect({2, 2}, {0, 0, 0.5, 3.0})
      .no_grad("an input at relu's kink (0)");
  // exact erf form: gelu(1) = Phi(1) = 0.8413447460685429 (the tanh approximation gives 0.8411920)
  add_case(make("gelu values", {"gelu"}, literals({{{-1.0, 0.0, 1.0, 2.0}, {4}}}), [](const V& x) { return gelu(x[0]); }))
      .expect({4}, {-0.15865525393145702, 0.0, 0.8413447460685429, 1.9544997361036416});
}

inline void broadcasting_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- sum_to, broadcast_to, broadcast_shapes ----
  add_case(make("sum_to (2,3,4) -> (3,1)", {"sum_to"}, randoms({{2, 3, 4}}), [](const V& x) { return sum_to(x[0], {3, 1}); }));
  add_case(make("sum_to (2,3,4) -> (4)", {"sum_to"}, randoms({{2, 3, 4}}), [](const V& x) { return sum_to(x[0], {4}); }));
  add_case(make("sum_to (2,3,4) -> ()", {"sum_to"}, randoms({{2, 3, 4}}), [](const V& x) { return sum_to(x[0], {}); }));
  add_case(make("sum_to values (2,3) -> (1,3)", {"sum_to"}, literals({a23}), [](const V& x) { return sum_to(x[0], {1, 3}); }))
      .expect({1, 3}, {5, 7, 9});
  add_case(make("broadcast_to (3,1) -> (2,3,4)", {"broadcast_to"}, randoms({{3, 1}}),
                [](const V& x) { return broadcast_to(x[0], {2, 3, 4}); }));
  add_case(make("broadcast_to () -> (5,2)", {"broadcast_to"}, randoms({{}}), [](const V& x) { return broadcast_to(x[0], {5, 2}); }));
  add_case(make("broadcast_to values (2,1) -> (2,3)", {"broadcast_to"}, literals({col}),
                [](const V& x) { return broadcast_to(x[0], {2, 3}); }))
      .expect({2, 3}, {2, 2, 2, 3, 3, 3});
  add_case(make("broadcast_to broadcast_shapes((3,1), (2,1,4))", {"broadcast_to", "broadcast_shapes"}, randoms({{3, 1}}),
                [](const V& x) { return broadcast_to(x[0], broadcast_shapes(x[0].shape(), {2, 1, 4}, "test")); }));
}

inline void matmul_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- matmul ----
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const std::string flags = std::string(ta ? " A^T" : "") + (tb ? " B^T" : "");
      auto fn = [ta, tb](const V& x) { return matmul(x[0], x[1], ta, tb); };
      const Shape sa = ta ? Shape{5, 3} : Shape{3, 5}, sb = tb ? Shape{4, 5} : Shape{5, 4};
      const Shape ba = ta ? Shape{2, 3, 5, 3} : Shape{2, 3, 3, 5}, bb = tb ? Shape{2, 3, 4, 5} : Shape{2, 3, 5, 4};
      add_case(make("matmul 2d" + flags, {"matmul"}, randoms({sa, sb}), fn));
      add_case(make("matmul batched 4d" + flags, {"matmul"}, randoms({ba, bb}), fn));
      add_case(make("matmul shared B" + flags, {"matmul"}, randoms({ba, sb}), fn));
      add_case(make("matmul shared A" + flags, {"matmul"}, randoms({sa, bb}), fn));
      const Shape ca = ta ? Shape{2, 3, 2} : Shape{2, 2, 3}, cb = tb ? Shape{2, 4, 3} : Shape{2, 3, 4};
      add_case(make("matmul batched 3d" + flags, {"matmul"}, randoms({ca, cb}), fn));
      add_case(make("matmul shared 2d A, 3d" + flags, {"matmul"}, randoms({ta ? Shape{3, 2} : Shape{2, 3}, cb}), fn));
      add_case(make("matmul 3d, shared 2d B" + flags, {"matmul"}, randoms({ca, tb ? Shape{4, 3} : Shape{3, 4}}), fn));
    }
  add_case(make("matmul Q Q^T with one shared input", {"matmul"}, randoms({{2, 3, 2}}),
                [](const V& x) { return matmul(x[0], x[0], false, true); }));
  add_case(make("matmul attention scores", {"matmul", "softmax", "mul_scalar"}, randoms({{4, 9, 16}, {4, 9, 16}, {4, 9, 16}}),
                [](const V& x) { return matmul(softmax(mul_scalar(matmul(x[0], x[1], false, true), 0.25)), x[2]); }));
  add_case(make("matmul 67x129 @ 129x95", {"matmul"}, randoms({{67, 129}, {129, 95}}),
                [](const V& x) { return matmul(x[0], x[1]); }))
      .no_grad(kLarge);
  add_case(make("matmul K=0", {"matmul"}, randoms({{3, 0}, {0, 4}}), [](const V& x) { return matmul(x[0], x[1]); }))
      .no_grad(kEmpty);
}

inline void linear_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- linear: x W^T + b, with and without bias, 2-d and 3-d inputs ----
  {
    auto lin = [](const V& x) { return linear(x[0], x[1], x[2]); };
    auto lin_no_bias = [](const V& x) { return linear(x[0], x[1], Tensor()); };
    add_case(make("linear (4,3) W (5,3) b (5)", {"linear"}, randoms({{4, 3}, {5, 3}, {5}}), lin));
    add_case(make("linear (2,4,3) W (5,3) b (5)", {"linear"}, randoms({{2, 4, 3}, {5, 3}, {5}}), lin));
    add_case(make("linear no bias (2,4,3) W (5,3)", {"linear"}, randoms({{2, 4, 3}, {5, 3}}), lin_no_bias));
    add_case(make("linear (67,129) W (95,129) b (95)", {"linear"}, randoms({{67, 129}, {95, 129}, {95}}), lin))
        .no_grad(kLarge);
    add_case(make("linear in=0", {"linear"}, randoms({{3, 0}, {4, 0}, {4}}), lin)).no_grad(kEmpty);
    const Literal lx{{1, 2, 3, 4, 5, 6}, {2, 3}}, lw{{1, 0, -1, 2, 1, 0}, {2, 3}}, lb{{10, 20}, {2}};
    add_case(make("linear values", {"linear"}, literals({lx, lw, lb}), lin)).expect({2, 2}, {8, 24, 8, 33});
  }
  {
    const Literal ma{{1, 2, 3, 4, 5, 6}, {2, 3}}, mb{{7, 8, 9, 10, 11, 12}, {3, 2}};
    const Literal ma_t{{1, 4, 2, 5, 3, 6}, {3, 2}}, mb_t{{7, 9, 11, 8, 10, 12}, {2, 3}};  // stored transposed
    const std::vector<double> ab = {58, 64, 139, 154};
    auto mm = [](bool ta, bool tb) { return [ta, tb](const V& x) { return matmul(x[0], x[1], ta, tb); }; };
    add_case(make("matmul values", {"matmul"}, literals({ma, mb}), mm(false, false))).expect({2, 2}, ab);
    add_case(make("matmul values B^T", {"matmul"}, literals({ma, mb_t}), mm(false, true))).expect({2, 2}, ab);
    add_case(make("matmul values A^T", {"matmul"}, literals({ma_t, mb}), mm(true, false))).expect({2, 2}, ab);
    add_case(make("matmul values A^T B^T", {"matmul"}, literals({ma_t, mb_t}), mm(true, true))).expect({2, 2}, ab);
    add_case(make("matmul values (3,2) @ (2,3)", {"matmul"}, literals({mb, ma}), mm(false, false)))
        .expect({3, 3}, {39, 54, 69, 49, 68, 87, 59, 82, 105});
    const Literal bx{{1, 2, 3, 4, 2, 0, 0, 3}, {2, 2, 2}}, by{{5, 6, 7, 8, 1, 2, 3, 4}, {2, 2, 2}};
    add_case(make("matmul values batched", {"matmul"}, literals({bx, by}), mm(false, false)))
        .expect({2, 2, 2}, {19, 22, 43, 50, 2, 4, 9, 12});
    add_case(make("matmul values batched B^T", {"matmul"}, literals({bx, by}), mm(false, true)))
        .expect({2, 2, 2}, {17, 23, 39, 53, 2, 6, 6, 12});
    add_case(make("matmul values batched A^T", {"matmul"}, literals({bx, by}), mm(true, false)))
        .expect({2, 2, 2}, {26, 30, 38, 44, 2, 4, 9, 12});
    const Literal xb{{1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}, {2, 2, 3}};
    const std::vector<double> xb_b = {58, 64, 139, 154, 7, 8, 9, 10};
    add_case(make("matmul values shared B", {"matmul"}, literals({xb, mb}), mm(false, false))).expect({2, 2, 2}, xb_b);
    add_case(make("matmul values shared B^T", {"matmul"}, literals({xb, mb_t}), mm(false, true))).expect({2, 2, 2}, xb_b);
    add_case(make("matmul values shared A", {"matmul"}, literals({ma, {{7, 8, 9, 10, 11, 12, 1, 0, 0, 1, 0, 0}, {2, 3, 2}}}),
                  mm(false, false)))
        .expect({2, 2, 2}, {58, 64, 139, 154, 1, 2, 4, 5});
  }
}

inline void shape_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- shape ops ----
  add_case(make("transpose (2,3,4)", {"transpose"}, randoms({{2, 3, 4}}), [](const V& x) { return transpose(x[0]); }));
  add_case(make("reshape (2,3,2) -> (3,-1) times (3,4)", {"reshape", "mul"}, randoms({{2, 3, 2}, {3, 4}}),
                [](const V& x) { return mul(reshape(x[0], {3, -1}), x[1]); }));
  add_case(make("reshape (2,3,4) -> (4,-1)", {"reshape"}, randoms({{2, 3, 4}}),
                [](const V& x) { return mul_scalar(reshape(x[0], {4, -1}), 3.0); }));
  add_case(make("view (2,3) -> (6)", {"view"}, randoms({{2, 3}}), [](const V& x) { return view(x[0], {6}); }));
  add_case(make("view (2,3,4) -> (6,4)", {"view"}, randoms({{2, 3, 4}}),
                [](const V& x) { return mul_scalar(view(x[0], {6, 4}), 3.0); }));
  add_case(make("concat axis 1 with a repeated input", {"concat"}, randoms({{2, 1, 3}, {2, 2, 3}}),
                [](const V& x) { return concat({x[0], x[1], x[0]}, 1); }));
  add_case(make("concat axis -1", {"concat"}, randoms({{2, 2}, {2, 3}}), [](const V& x) { return concat({x[0], x[1]}, -1); }));
  for (int64_t axis : {0, 1, -1})
    add_case(make("concat (2,3,4) x3 axis " + std::to_string(axis), {"concat"}, randoms({{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}),
                  [axis](const V& x) { return concat({x[0], x[1], x[2]}, axis); }));
  for (auto [axis, begin, end] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 3}, {0, 1, 2}, {-1, 0, 3}})
    add_case(make("slice (2,3,4) axis " + std::to_string(axis) + " [" + std::to_string(begin) + "," + std::to_string(end) + ")",
                  {"slice"}, randoms({{2, 3, 4}}), [axis, begin, end](const V& x) { return slice(x[0], axis, begin, end); }));
  add_case(make("slice (3,2) axis 0 [0,1)", {"slice"}, randoms({{3, 2}}), [](const V& x) { return slice(x[0], 0, 0, 1); }));
  {
    const Literal s3{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 2, 3}};
    add_case(make("transpose values 2d", {"transpose"}, literals({a23}), [](const V& x) { return transpose(x[0]); }))
        .expect({3, 2}, {1, 4, 2, 5, 3, 6});
    add_case(make("transpose values 3d", {"transpose"}, literals({s3}), [](const V& x) { return transpose(x[0]); }))
        .expect({2, 3, 2}, {1, 4, 2, 5, 3, 6, 7, 10, 8, 11, 9, 12});
    add_case(make("reshape values (-1)", {"reshape"}, literals({a23}), [](const V& x) { return reshape(x[0], {-1}); }))
        .expect({6}, {1, 2, 3, 4, 5, 6});
    add_case(make("reshape values (3,-1)", {"reshape"}, literals({a23}), [](const V& x) { return reshape(x[0], {3, -1}); }))
        .expect({3, 2}, {1, 2, 3, 4, 5, 6});
    add_case(make("reshape values (-1,2,2)", {"reshape"}, literals({s3}), [](const V& x) { return reshape(x[0], {-1, 2, 2}); }))
        .expect({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    add_case(make("view values (1,6)", {"view"}, literals({a23}), [](const V& x) { return view(x[0], {1, 6}); }))
        .expect({1, 6}, {1, 2, 3, 4, 5, 6});
    const Literal c2{{-1, -2}, {2, 1}};
    add_case(make("concat values axis 0", {"concat"}, literals({a23, {{7, 8, 9}, {1, 3}}}),
                  [](const V& x) { return concat({x[0], x[1]}, 0); }))
        .expect({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    add_case(make("concat values axis 1", {"concat"}, literals({a23, c2}), [](const V& x) { return concat({x[1], x[0], x[1]}, 1); }))
        .expect({2, 5}, {-1, 1, 2, 3, -1, -2, 4, 5, 6, -2});
    add_case(make("concat values axis -1", {"concat"}, literals({a23, c2}), [](const V& x) { return concat({x[0], x[1]}, -1); }))
        .expect({2, 4}, {1, 2, 3, -1, 4, 5, 6, -2});
    add_case(make("slice values axis 1", {"slice"}, literals({a23}), [](const V& x) { return slice(x[0], 1, 1, 3); }))
        .expect({2, 2}, {2, 3, 5, 6});
    add_case(make("slice values axis 0", {"slice"}, literals({a23}), [](const V& x) { return slice(x[0], 0, 1, 2); }))
        .expect({1, 3}, {4, 5, 6});
    add_case(make("slice values axis -1", {"slice"}, literals({a23}), [](const V& x) { return slice(x[0], -1, 0, 1); }))
        .expect({2, 1}, {1, 4});
    add_case(make("slice values 3d", {"slice"}, literals({s3}), [](const V& x) { return slice(x[0], 1, 1, 2); }))
        .expect({2, 1, 3}, {4, 5, 6, 10, 11, 12});
    add_case(make("slice values, an empty range", {"slice"}, literals({a23}), [](const V& x) { return slice(x[0], 1, 2, 2); }))
        .expect({2, 0}, {})
        .no_grad(kEmpty);
  }
}

inline void reduction_a_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- reductions ----
  add_case(make("sum all", {"sum"}, randoms({{3, 4, 5}}), [](const V& x) { return sum(x[0]); }));
  add_case(make("mean all", {"mean"}, randoms({{3, 4, 5}}), [](const V& x) { return mean(x[0]); }));
  for (int64_t axis : {0, 1, 2, -1})
    for (bool keep : {false, true}) {
      const std::string s = " axis " + std::to_string(axis) + (keep ? " keepdim" : "");
      add_case(make("sum" + s, {"sum"}, randoms({{3, 4, 5}}), [axis, keep](const V& x) { return sum(x[0], axis, keep); }));
      add_case(make("mean" + s, {"mean"}, randoms({{3, 4, 5}}), [axis, keep](const V& x) { return mean(x[0], axis, keep); }));
      add_case(make("max" + s, {"max"}, randoms({{3, 4, 5}}), [axis, keep](const V& x) { return max(x[0], axis, keep); }));
      // the values and the indices (as floats) in one output
      add_case(make("max_with_indices" + s, {"max_with_indices"}, randoms({{3, 4, 5}}), [axis, keep](const V& x) {
        MaxResult r = max_with_indices(x[0], axis, keep);
        return add(r.values, r.indices.to(r.values.dtype()));
      }));
    }
  add_case(make("sum big all", {"sum"}, randoms({{300, 517}}), [](const V& x) { return sum(x[0]); })).no_grad(kLarge);
  add_case(make("sum big axis 0", {"sum"}, randoms({{300, 517}}), [](const V& x) { return sum(x[0], 0); })).no_grad(kLarge);
  add_case(make("sum big axis 1", {"sum"}, randoms({{300, 517}}), [](const V& x) { return sum(x[0], 1); })).no_grad(kLarge);
  add_case(make("max big axis 0", {"max"}, randoms({{300, 517}}), [](const V& x) { return max(x[0], 0); })).no_grad(kLarge);
  add_case(make("mean 4d middle axes", {"sum", "mean"}, randoms({{3, 40, 50, 2}}),
                [](const V& x) { return mean(sum(x[0], 1, true), 2); }))
      .no_grad(kLarge);
  add_case(make("sum of an empty axis", {"sum"}, randoms({{0, 3}}), [](const V& x) { return sum(x[0], 0); })).no_grad(kEmpty);
}

inline void reduction_b_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- reductions (continued) ----
  {
    // ties go to the first index; a NaN wins only where it comes first (as std::max on the CPU)
    const Literal ties{{1, 3, 3, 0, 2, 2, 2, 2, 5, 1, 5, 5}, {3, 4}};
    const Literal nans{{1, kNaN, 3, 0, kNaN, 2, 2, 2, 5, 1, 5, kNaN}, {3, 4}};
    for (int64_t axis : {0, 1})
      for (const auto& [label, input] : {std::pair{"ties", ties}, std::pair{"NaN", nans}}) {
        const std::string s = std::string(" with ") + label + " axis " + std::to_string(axis);
        const bool is_nan = std::string(label) == "NaN";
        add_case(make("max_with_indices" + s, {"max_with_indices"}, literals({input}), [axis](const V& x) {
          MaxResult r = max_with_indices(x[0], axis);
          return add(r.values, r.indices.to(r.values.dtype()));
        })).no_grad(is_nan ? kNonFinite : "ties: max is not differentiable where two elements are maximal");
        // (ties alone leave sum and softmax differentiable)
        add_case(make("sum" + s, {"sum"}, literals({input}), [axis](const V& x) { return sum(x[0], axis); }))
            .no_grad(is_nan ? kNonFinite : "");
        add_case(make("softmax" + s, {"softmax"}, literals({input}), [](const V& x) { return softmax(x[0]); }))
            .no_grad(is_nan ? kNonFinite : "");
      }
    const Literal r23{{1, 5, 3, 4, 2, 6}, {2, 3}};
    add_case(make("sum values all", {"sum"}, literals({r23}), [](const V& x) { return sum(x[0]); })).expect({}, {21});
    add_case(make("sum values axis 0", {"sum"}, literals({r23}), [](const V& x) { return sum(x[0], 0); })).expect({3}, {5, 7, 9});
    add_case(make("sum values axis 1", {"sum"}, literals({r23}), [](const V& x) { return sum(x[0], 1); })).expect({2}, {9, 12});
    add_case(make("sum values axis -1 keepdim", {"sum"}, literals({r23}), [](const V& x) { return sum(x[0], -1, true); }))
        .expect({2, 1}, {9, 12});
    add_case(make("mean values all", {"mean"}, literals({r23}), [](const V& x) { return mean(x[0]); })).expect({}, {3.5});
    add_case(make("mean values axis 0", {"mean"}, literals({r23}), [](const V& x) { return mean(x[0], 0); }))
        .expect({3}, {2.5, 3.5, 4.5});
    add_case(make("mean values axis -1 keepdim", {"mean"}, literals({r23}), [](const V& x) { return mean(x[0], -1, true); }))
        .expect({2, 1}, {3, 4});
    add_case(make("max values axis 1", {"max"}, literals({r23}), [](const V& x) { return max(x[0], 1); })).expect({2}, {5, 6});
    add_case(make("max values axis 0 keepdim", {"max"}, literals({r23}), [](const V& x) { return max(x[0], 0, true); }))
        .expect({1, 3}, {4, 5, 6});
    add_case(make("max_with_indices values indices", {"max_with_indices"}, literals({r23}),
                  [](const V& x) { return max_with_indices(x[0], 1).indices.to(x[0].dtype()); }))
        .expect({2}, {1, 2});
    const Literal tie{{2, 7, 7, 3, 3, 1, -1, -1, -1}, {3, 3}};
    const char* tie_reason = "ties: max is not differentiable where two elements are maximal";
    add_case(make("max_with_indices values with ties", {"max_with_indices"}, literals({tie}),
                  [](const V& x) { return max_with_indices(x[0], -1).values; }))
        .expect({3}, {7, 3, -1})
        .no_grad(tie_reason);
    add_case(make("max_with_indices indices with ties: the first wins", {"max_with_indices"}, literals({tie}),
                  [](const V& x) { return max_with_indices(x[0], -1).indices.to(x[0].dtype()); }))
        .expect({3}, {1, 0, 0})
        .no_grad(tie_reason);
    add_case(make("max_with_indices indices axis 0 keepdim", {"max_with_indices"}, literals({{{5, 1, 5, 9}, {2, 2}}}),
                  [](const V& x) { return max_with_indices(x[0], 0, true).indices.to(x[0].dtype()); }))
        .expect({1, 2}, {0, 1})
        .no_grad(tie_reason);
    const Literal c8{{1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}};
    add_case(make("sum values 3d middle axis", {"sum"}, literals({c8}), [](const V& x) { return sum(x[0], 1); }))
        .expect({2, 2}, {4, 6, 12, 14});
    add_case(make("max values 3d middle axis", {"max"}, literals({c8}), [](const V& x) { return max(x[0], 1); }))
        .expect({2, 2}, {3, 4, 7, 8});
  }
}

inline void softmax_a_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- softmax, log_softmax, masked_fill ----
  add_case(make("softmax (3,4,7)", {"softmax"}, randoms({{3, 4, 7}}), [](const V& x) { return softmax(x[0]); }));
  add_case(make("log_softmax (3,4,7)", {"log_softmax"}, randoms({{3, 4, 7}}), [](const V& x) { return log_softmax(x[0]); }));
  // a causal-style (1,4,7) mask broadcast over the batch, with a fully masked row (row 1)
  std::vector<double> keep(4 * 7, 1.0);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 7; ++c) keep[r * 7 + c] = (c <= r + 2 && r != 1) ? 1.0 : 0.0;
  auto x_and_mask = [keep](InputMaker& m) { return V{m.randn({3, 4, 7}), m.values(keep, {1, 4, 7})}; };
  add_case(make("softmax of masked_fill -inf, with empty rows", {"softmax", "masked_fill"}, x_and_mask,
                [](const V& x) { return softmax(masked_fill(x[0], x[1], -kInf)); }))
      .constant({1});
  add_case(make("log_softmax of masked_fill -inf, with empty rows", {"log_softmax", "masked_fill"}, x_and_mask,
                [](const V& x) { return log_softmax(masked_fill(x[0], x[1], -kInf)); }))
      .constant({1})
      .no_grad("-inf outputs at the masked positions (the case below fills them with 0 for the gradient check)");
  add_case(make("log_softmax of masked_fill -inf, masked outputs set to 0", {"log_softmax", "masked_fill"}, x_and_mask,
                [](const V& x) { return masked_fill(log_softmax(masked_fill(x[0], x[1], -kInf)), x[1], 0.0); }))
      .constant({1});
  add_case(make("masked_fill finite value", {"masked_fill"}, x_and_mask,
                [](const V& x) { return masked_fill(x[0], x[1], -7.5); }))
      .constant({1});
  add_case(make("masked_fill (3,1,1) mask", {"masked_fill"},
                [](InputMaker& m) { return V{m.randn({3, 4, 7}), m.values({1, 0, 1}, {3, 1, 1})}; },
                [](const V& x) { return masked_fill(x[0], x[1], 2.0); }))
      .constant({1});
  add_case(make("masked_fill (3) mask", {"masked_fill"},
                [](InputMaker& m) { return V{m.randn({2, 3}), m.values({1, 0, 1}, {3})}; },
                [](const V& x) { return masked_fill(x[0], x[1], -7.0); }))
      .constant({1});
}

inline void softmax_b_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- softmax, log_softmax, masked_fill (continued) ----
  // NaN propagates as in PyTorch: a row with a NaN is NaN (an all-NaN row is not "fully masked")
  const Literal with_nan{{kNaN, kNaN, kNaN, 1.0, kNaN, 2.0, 1.0, 2.0, 3.0}, {3, 3}};
  add_case(make("softmax with NaN rows", {"softmax"}, literals({with_nan}), [](const V& x) { return softmax(x[0]); }))
      .no_grad(kNonFinite);
  add_case(make("log_softmax with NaN rows", {"log_softmax"}, literals({with_nan}), [](const V& x) { return log_softmax(x[0]); }))
      .no_grad(kNonFinite);
  add_case(make("softmax wide (33,3001)", {"softmax"}, randoms({{33, 3001}}), [](const V& x) { return softmax(x[0]); }))
      .no_grad(kLarge);
  add_case(make("log_softmax wide (33,3001)", {"log_softmax"}, randoms({{33, 3001}}),
                [](const V& x) { return log_softmax(x[0]); }))
      .no_grad(kLarge);
  add_case(make("softmax values with all -inf and partly masked rows", {"softmax"},
                literals({{{1, 2, 3, -kInf, -kInf, -kInf, 1, -kInf, 3}, {3, 3}}}), [](const V& x) { return softmax(x[0]); }))
      .expect({3, 3}, {0.09003057317038045, 0.2447284710547976, 0.6652409557748218,  // open row
                       0, 0, 0,                                                        // all -inf: zeros, not NaN
                       0.11920292202211755, 0.0, 0.8807970779778823})                  // partly masked
      .no_grad(kNonFinite);
  // shift-invariant, and large logits do not overflow
  add_case(make("softmax values of large logits", {"softmax"}, literals({{{1001, 1002, 1003}, {1, 3}}}),
                [](const V& x) { return softmax(x[0]); }))
      .expect({1, 3}, {0.09003057317038045, 0.2447284710547976, 0.6652409557748218});
  add_case(make("log_softmax values", {"log_softmax"}, literals({{{1, 2, 3, 0, 0, 0}, {2, 3}}}),
                [](const V& x) { return log_softmax(x[0]); }))
      .expect({2, 3}, {-2.4076059644443806, -1.4076059644443804, -0.4076059644443804, -1.0986122886681098,
                       -1.0986122886681098, -1.0986122886681098});
  add_case(make("log_softmax values of an all -inf row", {"log_softmax"}, literals({{{-kInf, -kInf}, {1, 2}}}),
                [](const V& x) { return log_softmax(x[0]); }))
      .expect({1, 2}, {0, 0})
      .no_grad(kNonFinite);
  const Literal x6{{1, 2, 3, 4, 5, 6}, {2, 3}};
  add_case(make("masked_fill values, (3) mask", {"masked_fill"}, literals({x6, {{1, 0, 1}, {3}}}),
                [](const V& x) { return masked_fill(x[0], x[1], -7); }))
      .constant({1})
      .expect({2, 3}, {1, -7, 3, 4, -7, 6});
  add_case(make("masked_fill values, (2,1) mask", {"masked_fill"}, literals({x6, {{0, 1}, {2, 1}}}),
                [](const V& x) { return masked_fill(x[0], x[1], 0.5); }))
      .constant({1})
      .expect({2, 3}, {0.5, 0.5, 0.5, 4, 5, 6});
  add_case(make("masked_fill values, causal mask with -inf", {"masked_fill"},
                literals({{{1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}}, {{1, 0, 1, 1}, {2, 2}}}),
                [](const V& x) { return masked_fill(x[0], x[1], -kInf); }))
      .constant({1})
      .expect({2, 2, 2}, {1, -kInf, 3, 4, 5, -kInf, 7, 8})
      .no_grad(kNonFinite);
  add_case(make("masked_fill values, int64 mask", {"masked_fill"},
                [](InputMaker& m) { return V{m.values({1, 2, 3, 4, 5, 6}, {2, 3}), InputMaker::ids({0, 1, 1}, {3})}; },
                [](const V& x) { return masked_fill(x[0], x[1], 9); }))
      .expect({2, 3}, {9, 2, 3, 9, 5, 6});
}

inline void attention_a_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- fused attention ----
  struct Att {
    const char* name;
    AttentionMask mask;
    int64_t B, Tq, Tk, K, Kv;
    double scale;
  };
  // ALiBi: -slope * |pos(i) - pos(j)| on every visible score, positions placed by the prefix
  auto sloped = [](AttentionMask m, double slope) {
    m.distance_slope = slope;
    return m;
  };
  const std::vector<Att> att = {
      {"none", AttentionMask::none(), 2, 4, 4, 3, 2, 0.0},
      {"causal", AttentionMask::causal(), 2, 5, 5, 3, 2, 0.0},
      {"key padding", AttentionMask::padding({2, 4}), 2, 4, 4, 3, 2, 0.0},
      // the second entry has no source words: its source queries see nothing (zeros)
      {"prefix (the translator's)", AttentionMask::prefix_lm(3, {2, 0}), 2, 6, 6, 3, 2, 0.0},
      {"causal queries after a cache", AttentionMask{0, {}, 3}, 2, 2, 5, 3, 2, 0.0},
      {"prefix with a query offset", AttentionMask{3, {1, 3}, 4}, 2, 2, 6, 2, 3, 0.0},
      // more than one 64-key tile: the online softmax rescales across tiles
      {"causal over two tiles", AttentionMask::causal(), 1, 70, 70, 2, 1, 0.0},
      {"none, scale 0.35", AttentionMask::none(), 2, 5, 5, 4, 3, 0.35},
      {"causal, two tiles, K 8", AttentionMask::causal(), 1, 70, 70, 8, 8, 0.35},
      {"key padding with an empty entry", AttentionMask::padding({3, 0}), 2, 6, 6, 4, 2, 0.35},
      {"prefix, 40 positions", AttentionMask::prefix_lm(20, {17, 0, 20}), 3, 40, 40, 8, 8, 0.35},
      {"a decoding step after a cache", AttentionMask{20, {5, 20}, 33}, 2, 1, 34, 8, 8, 0.35},
      // the translator's last layer: only the target queries, placed after the source prefix
      {"target queries after a 40-key prefix, two tiles", AttentionMask{40, {33, 40}, 40}, 2, 30, 70, 4, 2, 0.35},
      // more than four tiles: the CPU backward's two passes instead of one pass per entry
      {"causal over five tiles", AttentionMask::causal(), 1, 260, 260, 2, 1, 0.35},
      {"ALiBi over a prefix", sloped(AttentionMask::prefix_lm(3, {2, 0}), 0.5), 2, 6, 6, 3, 2, 0.0},
      {"ALiBi, a decoding step after a cache", sloped(AttentionMask{20, {5, 20}, 33}, 0.25), 2, 1, 34, 8, 8, 0.35},
      {"ALiBi, target queries after a 40-key prefix, two tiles", sloped(AttentionMask{40, {33, 40}, 40}, 0.3), 2, 30,
       70, 4, 2, 0.35},
      {"ALiBi, causal over five tiles", sloped(AttentionMask::causal(), 0.05), 1, 260, 260, 2, 1, 0.35},
      // heads past 64 and past 128 wide (the CUDA kernels' three width limits), keys past one stage
      {"causal, K 100, Kv 72", AttentionMask::causal(), 1, 18, 18, 100, 72, 0.1},
      {"prefix, K 256, Kv 130", AttentionMask::prefix_lm(4, {3}), 1, 10, 10, 256, 130, 0.06},
  };
  // q = 0: the weights are softmax of the bias alone, 0, -ln 2, -2 ln 2 -> 4/7, 2/7, 1/7 of v = 1, 2, 3
  add_case(make("attention values, ALiBi alone", {"attention"},
                literals({{{0}, {1, 1, 1}}, {{0.5, -1, 2}, {1, 3, 1}}, {{1, 2, 3}, {1, 3, 1}}}),
                [sloped](const V& x) { return attention(x[0], x[1], x[2], sloped(AttentionMask::none(), std::log(2.0)), 1.0); }))
      .expect({1, 1, 1}, {11.0 / 7.0});
  for (const Att& a : att) {
    const AttentionMask mask = a.mask;
    const double scale = a.scale != 0.0 ? a.scale : 1.0 / std::sqrt(static_cast<double>(a.K));
    add_case(make(std::string("attention, ") + a.name, {"attention"},
                  randoms({{a.B, a.Tq, a.K}, {a.B, a.Tk, a.K}, {a.B, a.Tk, a.Kv}}),
                  [mask, scale](const V& x) { return attention(x[0], x[1], x[2], mask, scale); }));
    // the packed forms on the translator's masks, two passes and the CUDA kernels' wider limits
    const std::string name = a.name;
    if (name.starts_with("prefix") || name.starts_with("target queries") || name.starts_with("ALiBi over") ||
        name == "causal over five tiles" || name == "causal, K 100, Kv 72") {
      add_case(make("attention_kv, " + name, {"attention_kv"}, randoms({{a.B, a.Tq, a.K}, {a.B, a.Tk, a.K + a.Kv}}),
                    [mask, scale](const V& x) { return attention_kv(x[0], x[1], mask, scale); }));
      if (a.Tq == a.Tk && mask.query_offset == 0)
        add_case(make("attention_qkv, " + name, {"attention_qkv"}, randoms({{a.B, a.Tk, 2 * a.K + a.Kv}}),
                      [mask, scale, K = a.K](const V& x) { return attention_qkv(x[0], K, mask, scale); }));
    }
  }
}

inline void attention_b_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- fused attention (continued) ----
  // The ragged form: rows back to back, a prefix per entry, the causal part aligned at the end.
  struct Ragged {
    const char* name;
    RaggedLayout layout;
    int64_t K, Kv;
  };
  const std::vector<Ragged> ragged = {
      // entries of 5, 0 and 4 rows, every row a query (the translator's inner layers); the third
      // has no prefix, so its first query sees only itself
      {"every row queries", {{0, 5, 5, 9}, {0, 5, 5, 9}, {2, 0, 0}}, 3, 2},
      // the same keys with only the last rows as queries (the translator's last layer), an entry
      // without queries and one whose keys are all a prefix
      {"the last rows query", {{0, 2, 2, 5, 6}, {0, 5, 5, 9, 12}, {2, 0, 1, 3}}, 3, 2},
      // more than one 64-key tile in one entry, a short one after it
      {"two tiles", {{0, 70, 73}, {0, 70, 73}, {20, 1}}, 2, 1},
      // ALiBi: each entry's rows are its own positions
      {"ALiBi, the last rows query", {{0, 2, 2, 5, 6}, {0, 5, 5, 9, 12}, {2, 0, 1, 3}, 0.5}, 3, 2},
      {"ALiBi, two tiles", {{0, 70, 73}, {0, 70, 73}, {20, 1}, 0.1}, 2, 1},
  };
  for (const Ragged& r : ragged) {
    const RaggedLayout layout = r.layout;
    const double scale = 1.0 / std::sqrt(static_cast<double>(r.K));
    const int64_t Nq = layout.query_starts.back(), Nk = layout.key_starts.back();
    add_case(make(std::string("attention_ragged, ") + r.name, {"attention_ragged"},
                  randoms({{Nq, r.K}, {Nk, r.K}, {Nk, r.Kv}}),
                  [layout, scale](const V& x) { return attention_ragged(x[0], x[1], x[2], layout, scale); }));
    // the packed forms: keys and values side by side in one input, and, where every row queries,
    // queries, keys and values in one
    add_case(make(std::string("attention_ragged_kv, ") + r.name, {"attention_ragged_kv"},
                  randoms({{Nq, r.K}, {Nk, r.K + r.Kv}}),
                  [layout, scale](const V& x) { return attention_ragged_kv(x[0], x[1], layout, scale); }));
    if (layout.query_starts == layout.key_starts)
      add_case(make(std::string("attention_ragged_qkv, ") + r.name, {"attention_ragged_qkv"},
                    randoms({{Nk, 2 * r.K + r.Kv}}), [layout, scale, K = r.K](const V& x) {
                      return attention_ragged_qkv(x[0], K, layout, scale);
                    }));
  }
  // softmax(q k^T / sqrt(2) masked) v composed of ops, with a shared input
  const std::vector<double> keep = {1, 0, 0, 1, 1, 0, 1, 1, 1};
  add_case(make("an attention head composed of ops", {"matmul", "mul_scalar", "masked_fill", "softmax"},
                [keep](InputMaker& m) {
                  return V{m.randn({2, 3, 4}), m.randn({2, 4}), m.randn({2, 4}), m.randn({2, 4}), m.values(keep, {3, 3})};
                },
                [](const V& x) {
                  Tensor q = matmul(x[0], x[1], false, true), k = matmul(x[0], x[2], false, true),
                         v = matmul(x[0], x[3], false, true);
                  Tensor scores = mul_scalar(matmul(q, k, false, true), 1.0 / std::sqrt(2.0));
                  return matmul(softmax(masked_fill(scores, x[4], -kInf)), v);
                }))
      .constant({4});
}

inline void embedding_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- embedding ----
  add_case(make("embedding repeated ids (4,2)", {"embedding"},
                [](InputMaker& m) { return V{m.randn({4, 2}), InputMaker::ids({1, 3, 1, 0, 3, 3}, {2, 3})}; },
                [](const V& x) { return embedding(x[0], x[1]); }));
  add_case(make("embedding repeated ids (10,6)", {"embedding"},
                [](InputMaker& m) {
                  return V{m.randn({10, 6}), InputMaker::ids({3, 3, 0, 9, 3, 1, 1, 0, 9, 9, 5, 3, 3, 2, 3}, {3, 5})};
                },
                [](const V& x) { return embedding(x[0], x[1]); }));
  // many ids into a bigger table (the GPU scatter's bucketed path)
  add_case(make("embedding 4096 ids", {"embedding"},
                [](InputMaker& m) {
                  std::vector<int64_t> many(4096);
                  for (auto& id : many) id = static_cast<int64_t>(m.gen.below(300));
                  return V{m.randn({1000, 64}), InputMaker::ids(many, {64, 64})};
                },
                [](const V& x) { return embedding(x[0], x[1]); }))
      .no_grad(kLarge);
  {
    const Literal table{{0, 1, 10, 11, 20, 21, 30, 31}, {4, 2}};
    add_case(make("embedding values", {"embedding"},
                  [table](InputMaker& m) { return V{m.values(table.first, table.second), InputMaker::ids({3, 0, 1, 1}, {2, 2})}; },
                  [](const V& x) { return embedding(x[0], x[1]); }))
        .expect({2, 2, 2}, {30, 31, 0, 1, 10, 11, 10, 11});
    add_case(make("embedding values, one id", {"embedding"},
                  [table](InputMaker& m) { return V{m.values(table.first, table.second), InputMaker::ids({2}, {1})}; },
                  [](const V& x) { return embedding(x[0], x[1]); }))
        .expect({1, 2}, {20, 21});
  }
}

// ---- embedding_concat: tables side by side along the sequence, plus a position addend ----
inline void embedding_concat_cases(CaseList& t) {
  const auto add_case = t.adder();
  // two tables (source, target) with repeated ids and an addend over both parts
  add_case(make("embedding_concat two tables and an addend", {"embedding_concat"},
                [](InputMaker& m) {
                  return V{m.randn({5, 3}), m.randn({4, 3}), m.randn({5, 3}), InputMaker::ids({1, 4, 1, 0}, {2, 2}),
                           InputMaker::ids({3, 3, 0, 2, 3, 1}, {2, 3})};
                },
                [](const V& x) { return embedding_concat({x[0], x[1]}, {x[3], x[4]}, x[2]); }));
  // three tables without an addend, one part a single position; one sequence
  add_case(make("embedding_concat three tables, no addend", {"embedding_concat"},
                [](InputMaker& m) {
                  return V{m.randn({3, 4}), m.randn({2, 4}), m.randn({6, 4}), InputMaker::ids({2, 2, 0}, {1, 3}),
                           InputMaker::ids({1}, {1, 1}), InputMaker::ids({5, 0, 5, 3}, {1, 4})};
                },
                [](const V& x) { return embedding_concat({x[0], x[1], x[2]}, {x[3], x[4], x[5]}, Tensor()); }));
  // a bigger batch into bigger tables (the GPU scatter's bucketed path with runs of rows)
  add_case(make("embedding_concat 64 sequences", {"embedding_concat"},
                [](InputMaker& m) {
                  std::vector<int64_t> source(64 * 10), target(64 * 11);
                  for (auto& id : source) id = static_cast<int64_t>(m.gen.below(300));
                  for (auto& id : target) id = static_cast<int64_t>(m.gen.below(200));
                  return V{m.randn({300, 32}), m.randn({200, 32}), m.randn({21, 32}), InputMaker::ids(source, {64, 10}),
                           InputMaker::ids(target, {64, 11})};
                },
                [](const V& x) { return embedding_concat({x[0], x[1]}, {x[3], x[4]}, x[2]); }))
      .no_grad(kLarge);
  {
    const Literal first{{0, 1, 10, 11, 20, 21}, {3, 2}}, second{{100, 101, 200, 201}, {2, 2}};
    const Literal addend{{0.5, 0.5, 1, 1, 2, 2}, {3, 2}};
    add_case(make("embedding_concat values", {"embedding_concat"},
                  [first, second, addend](InputMaker& m) {
                    return V{m.values(first.first, first.second), m.values(second.first, second.second),
                             m.values(addend.first, addend.second), InputMaker::ids({2, 0, 1, 1}, {2, 2}),
                             InputMaker::ids({1, 0}, {2, 1})};
                  },
                  [](const V& x) { return embedding_concat({x[0], x[1]}, {x[3], x[4]}, x[2]); }))
        .expect({2, 3, 2}, {20.5, 21.5, 1, 2, 202, 203, 10.5, 11.5, 11, 12, 102, 103});
  }
}

inline void rotary_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- rotary: the tables from positions (constants), broadcast over leading dims ----
  {
    auto turned = [](std::vector<int64_t> positions, Shape rows) {
      return [positions, rows](const V& x) {
        const RotaryTables t = rotary_tables(positions, rows, x[0].size(-1) / 2, x[0].dtype(), x[0].device());
        return rotary(x[0], t.cos, t.sin);
      };
    };
    // (B, T, H) with one table per (b, t), the translator's packed-sequence positions
    add_case(make("rotary (2,3,8), a position per row", {"rotary", "rotary_tables"}, randoms({{2, 3, 8}}),
                  turned({0, 1, 2, 3, 7, 4}, {2, 3})));
    // (B, T, H) with a (T, H/2) table shared by every batch entry, and far positions
    add_case(make("rotary (2,4,6), a table broadcast over the batch", {"rotary", "rotary_tables"},
                  randoms({{2, 4, 6}}), turned({0, 5, 40, 311}, {4})));
    // H = 2, base^0 = 1: row 0 turns by 0, row 1 by 1 radian (3 cos 1 - 4 sin 1, 4 cos 1 + 3 sin 1)
    add_case(make("rotary values (2,2)", {"rotary", "rotary_tables"}, literals({{{1, 2, 3, 4}, {2, 2}}}),
                  turned({0, 1}, {2})))
        .expect({2, 2}, {1, 2, -1.7449770216271667, 4.685622177896248});
  }
  // ---- the packed attention ops with rotary tables: q and k (qkv) or k (kv) read turned ----
  {
    const auto tables = [](std::vector<int64_t> positions, Shape rows, int64_t half, const Tensor& like) {
      return rotary_tables(positions, rows, half, like.dtype(), like.device());
    };
    // qkv (B, T, 3H), H = 4, causal, with a (T, H/2) table shared by every batch entry
    add_case(make("attention_qkv, rotary tables", {"attention_qkv", "rotary_tables"}, randoms({{2, 3, 12}}),
                  [tables](const V& x) { return attention_qkv(x[0], 4, AttentionMask::causal(), 0.5, tables({0, 7, 2}, {3}, 2, x[0])); }));
    // q (Nq, H) apart and kv (Nk, H + Hv), H = 6, Hv = 4: a position per key row
    add_case(make("attention_ragged_kv, rotary tables", {"attention_ragged_kv", "rotary_tables"}, randoms({{3, 6}, {5, 10}}),
                  [tables](const V& x) {
                    return attention_ragged_kv(x[0], x[1], {{0, 1, 3}, {0, 2, 5}, {1, 1}}, 0.4, tables({0, 3, 9, 2, 1}, {5}, 3, x[0]));
                  }));
  }
}

inline void layer_norm_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- layer_norm: weight and bias, either alone, or neither (undefined tensors) ----
  {
    auto ln_all = [](const V& x) { return layer_norm(x[0], x[1], x[2]); };
    auto ln_none = [](const V& x) { return layer_norm(x[0], Tensor(), Tensor()); };
    auto ln_weight = [](const V& x) { return layer_norm(x[0], x[1], Tensor()); };
    auto ln_bias = [](const V& x) { return layer_norm(x[0], Tensor(), x[1]); };
    add_case(make("layer_norm weight and bias (2,3,5)", {"layer_norm"}, randoms({{2, 3, 5}, {5}, {5}}), ln_all));
    add_case(make("layer_norm weight and bias (4,5,8)", {"layer_norm"}, randoms({{4, 5, 8}, {8}, {8}}), ln_all));
    add_case(make("layer_norm no affine (4,3)", {"layer_norm"}, randoms({{4, 3}}), ln_none));
    add_case(make("layer_norm no affine (4,5,8)", {"layer_norm"}, randoms({{4, 5, 8}}), ln_none));
    add_case(make("layer_norm weight only (2,3,5)", {"layer_norm"}, randoms({{2, 3, 5}, {5}}), ln_weight));
    add_case(make("layer_norm bias only (2,3,5)", {"layer_norm"}, randoms({{2, 3, 5}, {5}}), ln_bias));
    // row 0: mean 7/3, biased variance 14/9; row 1: mean 2/3, biased variance 26/9; eps 1e-5
    const Literal lx{{1, 2, 4, -1, 0, 3}, {2, 3}}, lw{{1, 2, 0.5}, {3}}, lb{{0, 1, -1}, {3}};
    add_case(make("layer_norm values, no affine", {"layer_norm"}, literals({lx}), ln_none))
        .expect({2, 3}, {-1.069041531450298, -0.2672603828625746, 1.3363019143128718, -0.9805789785364645,
                         -0.3922315914145858, 1.37281056995105});
    add_case(make("layer_norm values, weight and bias", {"layer_norm"}, literals({lx, lw, lb}), ln_all))
        .expect({2, 3}, {-1.069041531450298, 0.46547923427485083, -0.3318490428435641, -0.9805789785364645,
                         0.2155368171708284, -0.313594715024475});
    add_case(make("layer_norm values, weight only", {"layer_norm"}, literals({lx, lw}), ln_weight))
        .expect({2, 3}, {-1.069041531450298, -0.5345207657251492, 0.6681509571564359, -0.9805789785364645,
                         -0.7844631828291716, 0.686405284975525});
    add_case(make("layer_norm values, bias only", {"layer_norm"}, literals({lx, lb}), ln_bias))
        .expect({2, 3}, {-1.069041531450298, 0.7327396171374254, 0.3363019143128718, -0.9805789785364645,
                         0.6077684085854142, 0.37281056995105});
    // a constant row normalises to zeros (variance 0, eps keeps it finite)
    add_case(make("layer_norm values, a constant row", {"layer_norm"}, literals({{{5, 5, 5, 5}, {1, 4}}}), ln_none))
        .expect({1, 4}, {0, 0, 0, 0});
    // by hand: x = (0, 2): mean 1, variance 1, x_hat = (-1, 1) / sqrt(1 + eps)
    const double r = 1.0 / std::sqrt(1.0 + 1e-5);
    add_case(make("layer_norm values by hand", {"layer_norm"}, literals({{{0, 2}, {2}}}), ln_none)).expect({2}, {-r, r});
    // ---- add_layer_norm: layer_norm(x + residual) in one pass; both inputs get the gradient ----
    auto add_ln_all = [](const V& x) { return add_layer_norm(x[0], x[1], x[2], x[3]); };
    auto add_ln_none = [](const V& x) { return add_layer_norm(x[0], x[1], Tensor(), Tensor()); };
    add_case(make("add_layer_norm weight and bias (2,3,5)", {"add_layer_norm"},
                  randoms({{2, 3, 5}, {2, 3, 5}, {5}, {5}}), add_ln_all));
    add_case(make("add_layer_norm no affine (4,5,8)", {"add_layer_norm"}, randoms({{4, 5, 8}, {4, 5, 8}}), add_ln_none));
    // x + residual = (0, 2): the by-hand row above
    add_case(make("add_layer_norm values by hand", {"add_layer_norm"}, literals({{{-1, 3}, {2}}, {{1, -1}, {2}}}),
                  add_ln_none)).expect({2}, {-r, r});
    // the same values as layer_norm of the sum, with weight and bias
    add_case(make("add_layer_norm values, weight and bias", {"add_layer_norm"},
                  literals({{{1, 2, 3, -1, 0, 4}, {2, 3}}, lx, lw, lb}),
                  [](const V& x) { return sub(add_layer_norm(x[0], x[1], x[2], x[3]),
                                              layer_norm(add(x[0], x[1]), x[2], x[3])); }))
        .expect({2, 3}, {0, 0, 0, 0, 0, 0});
  }
}

inline void cross_entropy_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- cross_entropy ----
  add_case(make("cross_entropy ignore_index -100 (4,5)", {"cross_entropy"},
                [](InputMaker& m) { return V{m.randn({4, 5}), InputMaker::ids({2, -100, 0, 4}, {4})}; },
                [](const V& x) { return cross_entropy(x[0], x[1], -100); }));
  // 37 classes: past the 8-wide vector exp and the 8 summing lanes, with a tail of 5; the targets
  // include the last class
  add_case(make("cross_entropy ignore_index -100 (3,37)", {"cross_entropy"},
                [](InputMaker& m) { return V{m.randn({3, 37}), InputMaker::ids({36, -100, 8}, {3})}; },
                [](const V& x) { return cross_entropy(x[0], x[1], -100); }));
  // label smoothing (PyTorch's): the ignored rows stay out of the smoothing term too
  add_case(make("cross_entropy label_smoothing 0.1, ignore_index -100 (4,5)", {"cross_entropy"},
                [](InputMaker& m) { return V{m.randn({4, 5}), InputMaker::ids({2, -100, 0, 4}, {4})}; },
                [](const V& x) { return cross_entropy(x[0], x[1], -100, 0.1); }));
  // torch.nn.functional.cross_entropy(x, t, ignore_index=1, label_smoothing=0.1) and 1.0
  const Literal smoothed{{1, 2, 3, 0.5, -1, 2, 0, 0, 0, 3, -2, 1}, {4, 3}};
  add_case(make("cross_entropy values, label_smoothing 0.1", {"cross_entropy"},
                [smoothed](InputMaker& m) { return V{m.values(smoothed.first, smoothed.second), InputMaker::ids({2, 0, 1, 1}, {4})}; },
                [](const V& x) { return cross_entropy(x[0], x[1], 1, 0.1); }))
      .expect({}, {1.124458630550769});
  add_case(make("cross_entropy values, label_smoothing 1", {"cross_entropy"},
                [smoothed](InputMaker& m) { return V{m.values(smoothed.first, smoothed.second), InputMaker::ids({2, 0, 1, 1}, {4})}; },
                [](const V& x) { return cross_entropy(x[0], x[1], 1, 1.0); }))
      .expect({}, {1.5744586305507688});
  add_case(make("cross_entropy ignore_index 9 (2,3,3)", {"cross_entropy"},
                [](InputMaker& m) { return V{m.randn({2, 3, 3}), InputMaker::ids({1, 0, 0, 2, 9, 9}, {2, 3})}; },
                [](const V& x) { return cross_entropy(x[0], x[1], 9); }));
  {
    std::vector<int64_t> targets(20);
    for (int i = 0; i < 20; ++i) targets[i] = (i * 7) % 11;
    targets[3] = targets[8] = targets[19] = -100;
    add_case(make("cross_entropy ignore_index -100 (4,5,11)", {"cross_entropy"},
                  [targets](InputMaker& m) { return V{m.randn({4, 5, 11}), InputMaker::ids(targets, {4, 5})}; },
                  [](const V& x) { return cross_entropy(x[0], x[1]); }));
    for (auto& target : targets)
      if (target == -100) target = 0;
    add_case(make("cross_entropy ignore_index 0 (pad) (4,5,11)", {"cross_entropy"},
                  [targets](InputMaker& m) { return V{m.randn({4, 5, 11}), InputMaker::ids(targets, {4, 5})}; },
                  [](const V& x) { return cross_entropy(x[0], x[1], 0); }));
    const Literal logits{{1, 2, 3, 0.5, 0.5, 0.5, 2, -1, 0}, {3, 3}};
    // mean over the two counted rows of -log_softmax[target] (torch: 0.28872599200033294)
    add_case(make("cross_entropy values", {"cross_entropy"},
                  [logits](InputMaker& m) { return V{m.values(logits.first, logits.second), InputMaker::ids({2, -100, 0}, {3})}; },
                  [](const V& x) { return cross_entropy(x[0], x[1], -100); }))
        .expect({}, {0.28872599200033294});
    add_case(make("cross_entropy values, uniform logits", {"cross_entropy"},
                  [](InputMaker& m) { return V{m.values({0.5, 0.5, 0.5}, {1, 3}), InputMaker::ids({1}, {1})}; },
                  [](const V& x) { return cross_entropy(x[0], x[1]); }))
        .expect({}, {1.0986122886681098});
    add_case(make("cross_entropy values, ignore index 7, (B,T,V) logits", {"cross_entropy"},
                  [](InputMaker& m) {
                    return V{m.values({1, 2, 3, 0, 0, 0, 0.5, 0.5, 0.5, 9, 9, 9}, {2, 2, 3}), InputMaker::ids({2, 7, 1, 7}, {2, 2})};
                  },
                  [](const V& x) { return cross_entropy(x[0], x[1], 7); }))
        .expect({}, {(0.4076059644443804 + 1.0986122886681098) / 2});
  }
}

inline void dropout_cases(CaseList& t) {
  const auto add_case = t.adder();
  // ---- dropout: a fixed seed inside the function, so every evaluation draws the same mask ----
  add_case(make("dropout p 0.4", {"dropout"}, randoms({{3, 4}}), [](const V& x) {
    Generator g(42);
    return dropout(x[0], 0.4, true, g);
  }));
  add_case(make("dropout p 0.3 (6,9)", {"dropout"}, randoms({{6, 9}}), [](const V& x) {
    Generator g(96);
    return dropout(x[0], 0.3, true, g);
  }));
  add_case(make("dropout values, p 0 is the identity", {"dropout"}, literals({a23}), [](const V& x) {
    Generator g(5);
    return dropout(x[0], 0.0, true, g);
  })).expect({2, 3}, {1, 2, 3, 4, 5, 6});
  add_case(make("dropout values, evaluation mode is the identity", {"dropout"}, literals({a23}), [](const V& x) {
    Generator g(5);
    return dropout(x[0], 0.7, false, g);
  })).expect({2, 3}, {1, 2, 3, 4, 5, 6});
}
}  // namespace op_cases_detail

// The table. Adding an op to framework/ops.h adds at least one case here (tests/engine/test_op_cases.cpp
// fails otherwise); every case is gradchecked in float64 unless it says why not, compared between
// CPU and GPU in float32 and float64, and checked against its expected values where it has them.
inline const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> table = [] {
    using namespace op_cases_detail;
    CaseList t;
    elementwise_binary_cases(t);
    elementwise_unary_cases(t);
    broadcasting_cases(t);
    matmul_cases(t);
    linear_cases(t);
    shape_cases(t);
    reduction_a_cases(t);
    reduction_b_cases(t);
    softmax_a_cases(t);
    softmax_b_cases(t);
    attention_a_cases(t);
    attention_b_cases(t);
    embedding_cases(t);
    embedding_concat_cases(t);
    rotary_cases(t);
    layer_norm_cases(t);
    cross_entropy_cases(t);
    dropout_cases(t);
    return std::move(t.cases);
  }();
  return table;
}

}  // namespace qkv::testing
