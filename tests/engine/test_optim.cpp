// tests/engine/test_optim.cpp — optimiser updates (SGD, Adam, AdamW) against torch.optim over three steps,
// and clip_grad_norm.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/autograd.h"
#include "framework/nn.h"
#include "framework/ops.h"
#include "framework/optim.h"
#include "framework/random.h"

using namespace qkv;

namespace {

using Rows = std::vector<std::vector<double>>;

// The fixed gradients fed in at steps 1, 2 and 3.
const Rows kGrads = {{0.1, -0.2, 0.3}, {-0.5, 0.4, 0.05}, {0.2, 0.2, -0.1}};

// Starts a float64 parameter at (1, -2, 0.5), runs three steps with kGrads and checks the
// parameter after each step against `expected` (absolute tolerance 1e-6).
void check_three_steps(const std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>& make,
                       const Rows& expected) {
  Tensor p = Tensor::from_vector({1.0, -2.0, 0.5}, {3}, DType::F64);
  p.set_requires_grad(true);
  std::unique_ptr<optim::Optimizer> opt = make({p});
  for (size_t step = 0; step < kGrads.size(); ++step) {
    CAPTURE(step + 1);
    p.set_grad(Tensor::from_vector(kGrads[step], {3}, DType::F64));
    opt->step();
    const std::vector<double> got = p.to_vector();
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CAPTURE(got[i]);
      CAPTURE(expected[step][i]);
      CHECK(std::fabs(got[i] - expected[step][i]) <= 1e-6);
    }
  }
  // the update is in place: p stays a leaf that requires grad
  CHECK(p.is_leaf());
  CHECK(p.requires_grad());
}

}  // namespace

TEST_SUITE("optim") {
// Every expected value below was produced by torch.optim (torch 1.13, float64) with the same
// starting parameter (1, -2, 0.5), learning rate and gradients kGrads, one row per step.

TEST_CASE("SGD plain") {
  check_three_steps(
      [](std::vector<Tensor> ps) { return std::make_unique<optim::SGD>(ps, optim::SGDOptions{.lr = 0.1}); },
      {{0.99, -1.98, 0.47}, {1.04, -2.02, 0.46499999999999997}, {1.02, -2.04, 0.475}});
}

TEST_CASE("SGD momentum 0.9, dampening 0") {
  check_three_steps(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::SGD>(ps, optim::SGDOptions{.lr = 0.1, .momentum = 0.9});
      },
      {{0.99, -1.98, 0.47}, {1.031, -2.002, 0.43799999999999994}, {1.0478999999999998, -2.0418, 0.41919999999999996}});
}

TEST_CASE("SGD Nesterov momentum 0.9") {
  check_three_steps(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::SGD>(ps, optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .nesterov = true});
      },
      {{0.981, -1.962, 0.443}, {1.0679, -2.0218, 0.4092}, {1.06311, -2.07762, 0.40228}});
}

TEST_CASE("SGD weight_decay 0.1") {
  check_three_steps(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::SGD>(ps, optim::SGDOptions{.lr = 0.1, .weight_decay = 0.1});
      },
      {{0.98, -1.96, 0.465}, {1.0202, -1.9804, 0.45535000000000003}, {0.989998, -1.980596, 0.46079650000000005}});
}

TEST_CASE("SGD momentum 0.9, dampening 0.5, weight_decay 0.01") {
  check_three_steps(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::SGD>(
            ps, optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .dampening = 0.5, .weight_decay = 0.01});
      },
      {{0.989, -1.978, 0.4695},
       {1.0036055, -1.977211, 0.43931525},
       {1.0062486472499999, -1.9855122945, 0.416929317375}});
}

TEST_CASE("Adam without weight decay") {
  check_three_steps(
      [](std::vector<Tensor> ps) { return std::make_unique<optim::Adam>(ps, optim::AdamOptions{.lr = 0.1}); },
      {{0.900000009999999, -1.9000000049999999, 0.4000000033333332},
       {0.9598354265523341, -1.9366103565460369, 0.321667272150606},
       {0.9795549188742791, -1.9885344363316624, 0.28412186418272706}});
}

TEST_CASE("Adam with (L2) weight_decay 0.1") {
  check_three_steps(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::Adam>(ps, optim::AdamOptions{.lr = 0.1, .weight_decay = 0.1});
      },
      {{0.9000000049999998, -1.9000000025, 0.40000000285714277},
       {0.937522034544049, -1.87528316883678, 0.31656659378840796},
       {0.9273037988393159, -1.857948684170344, 0.2650792999410155}});
}

TEST_CASE("Adam with other betas and eps") {
  check_three_steps(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::Adam>(ps,
                                             optim::AdamOptions{.lr = 0.01, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-3});
      },
      {{0.9900990099009901, -1.9900497512437811, 0.4900332225913621},
       {0.9965377383772451, -1.9942465280463797, 0.4825586777461088},
       {0.9982939057741884, -1.9999066023823582, 0.4796362956332956}});
}

TEST_CASE("AdamW with decoupled weight_decay 0.01") {
  check_three_steps(
      [](std::vector<Tensor> ps) {
        return std::make_unique<optim::AdamW>(ps, optim::AdamOptions{.lr = 0.1, .weight_decay = 0.01});
      },
      {{0.8990000099999991, -1.8980000049999997, 0.39950000333333324},
       {0.9579364265423342, -1.9327123565410367, 0.3207677721472727},
       {0.976697982437737, -1.982703723970121, 0.2829015964072465}});
}

TEST_CASE("optimisers skip parameters without a gradient; zero_grad drops gradients") {
  Tensor a = Tensor::from_vector({1.0}, {1}, DType::F64), b = Tensor::from_vector({2.0}, {1}, DType::F64);
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  optim::Adam adam({a, b}, optim::AdamOptions{.lr = 0.1});
  a.set_grad(Tensor::from_vector({1.0}, {1}, DType::F64));
  adam.step();
  CHECK(a.item() == doctest::Approx(0.9).epsilon(1e-6));
  CHECK(b.item() == 2.0);  // untouched
  CHECK(adam.steps_taken() == 1);
  adam.zero_grad();
  CHECK_FALSE(a.grad().defined());
  // a parameter that is not a leaf requiring grad is rejected
  Tensor c = Tensor::ones({1}, DType::F64);
  CHECK_THROWS_AS(optim::SGD({c}, optim::SGDOptions{}), std::runtime_error);
  CHECK_THROWS_AS(optim::SGD({a}, optim::SGDOptions{.lr = 0.1, .nesterov = true}), std::runtime_error);
}

TEST_CASE("clip_grad_norm returns the norm and scales only when it exceeds max_norm") {
  auto make = [](std::vector<double> value, std::vector<double> grad) {
    Tensor p = Tensor::from_vector(value, {static_cast<int64_t>(value.size())}, DType::F64);
    p.set_requires_grad(true);
    p.set_grad(Tensor::from_vector(grad, {static_cast<int64_t>(grad.size())}, DType::F64));
    return p;
  };
  // joint norm over both parameters: sqrt(3^2 + 4^2) = 5
  Tensor a = make({0, 0}, {3, 0}), b = make({0}, {4});
  Tensor no_grad = Tensor::zeros({2}, DType::F64);
  no_grad.set_requires_grad(true);  // has no .grad(): skipped
  const double norm = optim::clip_grad_norm({a, b, no_grad}, 1.0).item();
  CHECK(norm == doctest::Approx(5.0).epsilon(1e-12));
  const double coef = 1.0 / (5.0 + 1e-6);
  CHECK(std::fabs(a.grad().to_vector()[0] - 3 * coef) <= 1e-12);
  CHECK(a.grad().to_vector()[1] == 0.0);
  CHECK(std::fabs(b.grad().item() - 4 * coef) <= 1e-12);
  CHECK_FALSE(no_grad.grad().defined());
  // below the limit: returned norm, gradients untouched
  Tensor c = make({0, 0}, {3, 0}), d = make({0}, {4});
  CHECK(optim::clip_grad_norm({c, d}, 10.0).item() == doctest::Approx(5.0).epsilon(1e-12));
  CHECK(c.grad().to_vector() == std::vector<double>{3, 0});
  CHECK(d.grad().item() == 4.0);
  // float32 gradients work too
  Tensor e = Tensor::zeros({2}, DType::F32);
  e.set_requires_grad(true);
  e.set_grad(Tensor::from_vector({6, 8}, {2}, DType::F32));
  CHECK(optim::clip_grad_norm({e}, 5.0).item() == doctest::Approx(10.0).epsilon(1e-6));
  CHECK(e.grad().to_vector()[0] == doctest::Approx(3.0).epsilon(1e-5));
  CHECK(e.grad().to_vector()[1] == doctest::Approx(4.0).epsilon(1e-5));
}

TEST_CASE("WeightAverage: the warm-up decay by hand, swap in place and back, restore and bad arguments") {
  Tensor p = Tensor::from_vector({1, 2}, {2}, DType::F64);
  p.set_requires_grad(true);
  optim::WeightAverage average({p}, 0.9);
  CHECK(average.averages()[0].to_vector() == std::vector<double>{1, 2});  // starts as a copy
  {
    NoGradGuard no_grad;
    p.copy_(Tensor::from_vector({3, 6}, {2}, DType::F64));
  }
  average.update(1);  // the first update starts from the weights: d * p + (1 - d) * p, d = min(0.9, 2 / 11)
  const double d1 = 2.0 / 11.0;
  const std::vector<double> after1 = {d1 * 3 + (1 - d1) * 3, d1 * 6 + (1 - d1) * 6};
  CHECK(average.averages()[0].to_vector() == after1);
  average.update(100);  // d = min(0.9, 101 / 110) = 0.9
  const std::vector<double> after100 = {0.9 * after1[0] + (1 - 0.9) * 3, 0.9 * after1[1] + (1 - 0.9) * 6};
  CHECK(average.averages()[0].to_vector() == after100);
  // swap exchanges the values in place (the parameter's tensor stays the one the optimiser holds)
  const void* storage = p.data_ptr();
  {
    const optim::WeightAverage::SwappedIn averaged(&average);
    CHECK(p.to_vector() == after100);
    CHECK(average.averages()[0].to_vector() == std::vector<double>{3, 6});
    CHECK(p.data_ptr() == storage);
  }
  CHECK(p.to_vector() == std::vector<double>{3, 6});
  CHECK(average.averages()[0].to_vector() == after100);
  { const optim::WeightAverage::SwappedIn nothing(nullptr); }  // no average: nothing happens
  CHECK(p.to_vector() == std::vector<double>{3, 6});
  average.restore({Tensor::from_vector({7, 8}, {2}, DType::F64)});
  CHECK(average.averages()[0].to_vector() == std::vector<double>{7, 8});
  CHECK_THROWS_WITH_AS(average.restore({Tensor::zeros({3}, DType::F64)}),
                       doctest::Contains("does not match its parameter"), std::runtime_error);
  CHECK_THROWS_WITH_AS(average.restore({}), doctest::Contains("0 saved averages for 1 parameters"), std::runtime_error);
  CHECK_THROWS_WITH_AS(average.update(0), doctest::Contains("steps count from 1"), std::runtime_error);
  CHECK_THROWS_WITH_AS(optim::WeightAverage({p}, 1.0), doctest::Contains("decay must be in (0, 1)"),
                       std::runtime_error);
  CHECK_THROWS_AS(optim::WeightAverage({p}, 0.0), std::runtime_error);
}

TEST_CASE("clip_grad_norm scales in place, each gradient once, with mul's bits") {
  // two parameters holding one gradient tensor: scaled once (twice would give 3/25, not 3/5)
  Tensor shared_grad = Tensor::from_vector({3, 4}, {2}, DType::F64);
  Tensor p = Tensor::zeros({2}, DType::F64), q = Tensor::zeros({2}, DType::F64);
  p.set_requires_grad(true);
  q.set_requires_grad(true);
  p.set_grad(shared_grad);
  q.set_grad(shared_grad);
  const void* storage = shared_grad.data_ptr();
  const double norm = optim::clip_grad_norm({p, q}, 1.0).item();
  CHECK(norm == doctest::Approx(std::sqrt(50.0)).epsilon(1e-12));  // the joint norm counts it twice
  const double coef = 1.0 / (std::sqrt(50.0) + 1e-6);
  CHECK(p.grad().data_ptr() == storage);  // in place: no new tensor
  CHECK(std::fabs(p.grad().to_vector()[0] - 3 * coef) <= 1e-12);
  CHECK(std::fabs(q.grad().to_vector()[1] - 4 * coef) <= 1e-12);
}

TEST_CASE("clip_grad_norm's norm has the bits of the composed sum(mul(g, g)) added in turn") {
  // sizes across sum blocks (16,384 entries), a lane tail, an empty gradient; both dtypes
  Generator gen(5);
  for (DType dtype : {DType::F32, DType::F64}) {
    std::vector<Tensor> params;
    Tensor composed;
    for (int64_t n : {int64_t{1}, int64_t{13}, int64_t{0}, int64_t{40000}, int64_t{16384}}) {
      Tensor p = Tensor::zeros({n}, dtype);
      p.set_requires_grad(true);
      p.set_grad(randn({n}, gen, dtype));
      params.push_back(p);
      const Tensor part = sum(mul(p.grad(), p.grad()));
      composed = composed.defined() ? add(composed, part) : part;
    }
    const Tensor norm = optim::clip_grad_norm(params, 1e9);  // far above the norm: nothing scaled
    const Tensor expected = sqrt(composed);
    CAPTURE(dtype_name(dtype));
    CHECK(std::memcmp(norm.data_ptr(), expected.data_ptr(), dtype_size(dtype)) == 0);
  }
}

TEST_CASE("Tensor::mul_ gives mul's bits in place, broadcasting the factor; a factor that does not fit throws") {
  for (DType dtype : {DType::F32, DType::F64}) {
    const Tensor x = Tensor::from_vector({0.1, -2.5, 3.3, 7.75, 1e-3, -0.6}, {2, 3}, dtype);
    for (const Tensor& factor :
         {Tensor::from_vector({0.37}, {1}, dtype), Tensor::from_vector({0.3, -1.7, 2.9}, {3}, dtype),
          Tensor::from_vector({0.5, 3.1}, {2, 1}, dtype)}) {
      Tensor y = x.clone();
      const void* storage = y.data_ptr();
      y.mul_(factor);
      CHECK(y.data_ptr() == storage);
      CHECK(y.to_vector() == mul(x, factor).to_vector());
    }
    Tensor z = x.clone();
    CHECK_THROWS_WITH_AS(z.mul_(Tensor::from_vector({1, 2}, {2}, dtype)), doctest::Contains("does not broadcast"),
                         std::runtime_error);
    CHECK_THROWS_AS(z.mul_(Tensor::from_vector({1}, {1}, dtype == DType::F32 ? DType::F64 : DType::F32)),
                    std::runtime_error);
  }
}

TEST_CASE("scheduled_learning_rate: linear warm-up, cosine decay to 10%, constant; bad arguments throw") {
  using qkv::optim::Schedule;
  using qkv::optim::scheduled_learning_rate;
  const double base = 0.01;
  CHECK(scheduled_learning_rate(0, 100, 4, base, Schedule::Cosine) == doctest::Approx(base / 4 * (0.1 + 0.9)));
  CHECK(scheduled_learning_rate(3, 100, 4, base, Schedule::Cosine) ==
        doctest::Approx(base * (0.1 + 0.45 * (1 + std::cos(M_PI * 0.03)))));
  CHECK(scheduled_learning_rate(50, 100, 4, base, Schedule::Cosine) == doctest::Approx(base * 0.55));
  CHECK(scheduled_learning_rate(100, 100, 4, base, Schedule::Cosine) == doctest::Approx(base * 0.1));
  for (int64_t step : {0, 7, 99}) CHECK(scheduled_learning_rate(step, 100, 4, base, Schedule::Constant) == base);
  CHECK_THROWS_WITH(scheduled_learning_rate(0, 100, 0, base, Schedule::Cosine),
                    "learning-rate schedule: step 0 of 100 with 0 warm-up step(s)");
  CHECK(qkv::optim::default_warmup_steps(938, 938) == 93);
  CHECK(qkv::optim::default_warmup_steps(5, 100) == 5);
  CHECK(qkv::optim::default_warmup_steps(5, 5) == 1);
}
}
