// tests/engine/test_autograd.cpp — the reverse-mode engine's semantics: gradient values on small graphs,
// accumulation, single-use graphs, no-grad scopes, seeds, deep chains, detach and dtype rules.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/autograd.h"
#include "framework/ops.h"
#include "tests/test_util.h"

using namespace qkv;
using qkv::testing::error_of;

namespace {

Tensor leaf(const std::vector<double>& v, const Shape& s, DType dt = DType::F64) {
  Tensor t = Tensor::from_vector(v, s, dt);
  t.set_requires_grad(true);
  return t;
}

}  // namespace

TEST_SUITE("autograd") {
TEST_CASE("made_counts and graph_counts count what the engine makes: tensors, allocations, op calls, graph nodes") {
  const MadeCounts m0 = made_counts();
  const Tensor a = Tensor::zeros({2, 3}, DType::F64);
  const MadeCounts m1 = made_counts();
  CHECK(m1.tensors - m0.tensors == 1);
  CHECK(m1.storages - m0.storages == 1);
  CHECK(m1.storage_bytes - m0.storage_bytes == 2 * 3 * 8);
  const Tensor view = a.view_as_shape({3, 2});  // a new header over the same storage
  const MadeCounts m2 = made_counts();
  CHECK(m2.tensors - m1.tensors == 1);
  CHECK(m2.storages == m1.storages);
  Tensor b = Tensor::ones({2, 3}, DType::F64);
  const GraphCounts g0 = graph_counts();
  (void)add(a, b);  // no input needs a gradient: an op call, no node
  const GraphCounts g1 = graph_counts();
  CHECK(g1.ops - g0.ops == 1);
  CHECK(g1.nodes == g0.nodes);
  b.set_requires_grad(true);
  (void)add(a, b);
  const GraphCounts g2 = graph_counts();
  CHECK(g2.ops - g1.ops == 1);
  CHECK(g2.nodes - g1.nodes == 1);
}

TEST_CASE("x * x gives 2x") {
  for (DType dt : {DType::F32, DType::F64}) {
    CAPTURE(dtype_name(dt));
    Tensor x = leaf({-1.5, 0.0, 2.0, 3.25}, {2, 2}, dt);
    sum(mul(x, x)).backward();
    REQUIRE(x.grad().defined());
    CHECK(x.grad().dtype() == dt);
    CHECK(shape_str(x.grad().shape()) == "(2, 2)");
    CHECK(x.grad().to_vector() == std::vector<double>{-3.0, 0.0, 4.0, 6.5});
  }
}

TEST_CASE("diamond graph: a -> b, a -> c, b * c") {
  // b = 3a, c = a + 2, y = b * c = 3a^2 + 6a, dy/da = 6a + 6
  Tensor a = leaf({1.0, -2.0, 0.5}, {3});
  Tensor b = mul_scalar(a, 3.0);
  Tensor c = add_scalar(a, 2.0);
  Tensor y = sum(mul(b, c));
  CHECK(y.item() == doctest::Approx(3 * 1 + 6 * 1 + 3 * 4 - 12 + 3 * 0.25 + 3));
  y.backward();
  CHECK(a.grad().to_vector() == std::vector<double>{12.0, -6.0, 9.0});
  // the interior tensors are not leaves and get no .grad()
  CHECK_FALSE(b.grad().defined());
  CHECK_FALSE(c.grad().defined());
  CHECK_FALSE(b.is_leaf());
}

TEST_CASE("a tensor used several times sums its gradients") {
  // y = a * a * a + a  ->  3a^2 + 1
  Tensor a = leaf({2.0}, {1});
  sum(add(mul(mul(a, a), a), a)).backward();
  CHECK(a.grad().item() == doctest::Approx(13.0));
}

TEST_CASE("the engine keeps a gradient in place only where nothing else can see it") {
  // A gradient nothing else holds becomes .grad() as it is, and sums at a fork go into it in
  // place; one that the caller or another tensor still holds is copied first.
  Tensor x = leaf({1.0, 2.0}, {2});
  Tensor seed = Tensor::from_vector({5.0, 7.0}, {2}, DType::F64);
  x.backward(seed);  // the caller keeps the seed: .grad() must be a copy
  seed.mul_(Tensor::from_vector({0.0, 0.0}, {2}, DType::F64));
  CHECK(x.grad().to_vector() == std::vector<double>{5.0, 7.0});
  CHECK(x.grad().data_ptr() != seed.data_ptr());
  x.zero_grad();
  // x + x: add's backward hands the same tensor to both inputs, so the fork must not add in place
  Tensor y = leaf({3.0}, {1});
  sum(add(add(y, y), mul(y, y))).backward();  // 2 + 2y = 8
  CHECK(y.grad().item() == doctest::Approx(8.0));
}

TEST_CASE("relu of a tensor the caller gives up reuses its storage; one held elsewhere is left as it was") {
  Tensor x = leaf({-2.0, -0.5, 0.5, 3.0}, {4});
  // held alone: relu writes over it, and the gradient is still d/dx sum(relu(2x)) = 2 [x > 0]
  Tensor h = mul_scalar(x, 2.0);
  const void* storage = h.data_ptr();
  const MadeCounts before = made_counts();
  Tensor r = relu(std::move(h));
  CHECK(made_counts().storages == before.storages);  // no new storage
  CHECK(r.data_ptr() == storage);
  CHECK(r.to_vector() == std::vector<double>{0.0, 0.0, 1.0, 6.0});
  sum(r).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{0.0, 0.0, 2.0, 2.0});
  x.zero_grad();
  // another handle on the tensor: its values stay
  Tensor kept = mul_scalar(x, 2.0);
  Tensor copy = kept;
  Tensor r2 = relu(std::move(copy));
  CHECK(r2.data_ptr() != kept.data_ptr());
  CHECK(kept.to_vector() == std::vector<double>{-4.0, -1.0, 1.0, 6.0});
  // an op that saved the tensor for its backward (mul reads h there): relu must not write over it.
  // d/dx sum(relu(h) + h * h), h = 2x: 2 [x > 0] + 8x
  Tensor h3 = mul_scalar(x, 2.0);
  Tensor square = mul(h3, h3);
  sum(add(relu(std::move(h3)), square)).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{-16.0, -4.0, 6.0, 26.0});
}

TEST_CASE("relu's backward writes into its incoming gradient only where nothing else holds it") {
  Tensor x = leaf({-1.0, 2.0, -3.0, 4.0}, {4});
  Tensor seed = Tensor::from_vector({5.0, 6.0, 7.0, 8.0}, {4}, DType::F64);
  relu(x).backward(seed);  // the caller keeps the seed: it must come back as it went in
  CHECK(seed.to_vector() == std::vector<double>{5.0, 6.0, 7.0, 8.0});
  CHECK(x.grad().to_vector() == std::vector<double>{0.0, 6.0, 0.0, 8.0});
  x.zero_grad();
  // a fork: add's backward hands one gradient to both of its inputs, so neither relu may write in it
  Tensor y = leaf({-1.0, 2.0}, {2});
  Tensor z = leaf({3.0, -4.0}, {2});
  add(relu(y), relu(z)).backward(Tensor::from_vector({10.0, 20.0}, {2}, DType::F64));
  CHECK(y.grad().to_vector() == std::vector<double>{0.0, 20.0});
  CHECK(z.grad().to_vector() == std::vector<double>{10.0, 0.0});
  // a gradient only the engine holds (mul_scalar's backward makes it): relu's backward writes into
  // it, so the whole backward makes one storage (mul_scalar's), and x's .grad() is that storage
  Tensor w = leaf({-1.0, 2.0, -3.0, 4.0}, {4});
  Tensor tripled = mul_scalar(relu(w), 3.0);
  const MadeCounts before = made_counts();
  tripled.backward(Tensor::from_vector({1.0, 1.0, 1.0, 1.0}, {4}, DType::F64));
  CHECK(made_counts().storages - before.storages == 2);  // the seed, and mul_scalar's gradient
  CHECK(w.grad().to_vector() == std::vector<double>{0.0, 3.0, 0.0, 3.0});
}

TEST_CASE("gradients accumulate across backward passes until zero_grad (on purpose, as in PyTorch)") {
  // Two separate forward+backward passes add into .grad(): this is deliberate, so that
  // gradients can be accumulated over micro-batches; zero_grad() resets between steps.
  Tensor x = leaf({1.0, 2.0}, {2});
  sum(mul(x, x)).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{2.0, 4.0});
  sum(mul(x, x)).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{4.0, 8.0});
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
  sum(mul(x, x)).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{2.0, 4.0});
}

TEST_CASE("backward twice through the same graph throws 'already freed'") {
  Tensor x = leaf({1.0, 2.0}, {2});
  Tensor y = sum(exp(x));
  y.backward();
  const std::vector<double> first = x.grad().to_vector();
  const std::string msg = error_of([&] { y.backward(); });
  CHECK(msg.find("already freed") != std::string::npos);
  // the failed second pass did not change the gradient
  CHECK(x.grad().to_vector() == first);
}

TEST_CASE("NoGradGuard records nothing, and nesting restores the state") {
  Tensor x = leaf({1.0, 2.0}, {2});
  CHECK(grad_enabled());
  {
    NoGradGuard outer;
    CHECK_FALSE(grad_enabled());
    Tensor y = mul(x, x);
    CHECK(y.grad_fn() == nullptr);
    CHECK_FALSE(y.requires_grad());
    {
      NoGradGuard inner;
      CHECK_FALSE(grad_enabled());
    }
    CHECK_FALSE(grad_enabled());  // the inner guard restored "off", not "on"
    CHECK(mul(x, x).grad_fn() == nullptr);
  }
  CHECK(grad_enabled());
  Tensor z = mul(x, x);
  CHECK(z.grad_fn() != nullptr);
  CHECK(z.requires_grad());
  CHECK(z.grad_fn()->op_name == "mul");
}

TEST_CASE("backward on a non-scalar needs a gradient; an explicit one must match the shape") {
  Tensor x = leaf({1.0, 2.0, 3.0}, {3});
  Tensor y = mul_scalar(x, 2.0);
  const std::string msg = error_of([&] { y.backward(); });
  CHECK(msg.find("scalar") != std::string::npos);
  // the right shape works: dy/dx^T g = 2 g
  y.backward(Tensor::from_vector({1.0, 0.5, -1.0}, {3}, DType::F64));
  CHECK(x.grad().to_vector() == std::vector<double>{2.0, 1.0, -2.0});
  // a wrong shape (or dtype) is rejected
  Tensor y2 = mul_scalar(x, 2.0);
  CHECK_THROWS_AS(y2.backward(Tensor::ones({2}, DType::F64)), std::runtime_error);
  CHECK_THROWS_AS(y2.backward(Tensor::ones({3, 1}, DType::F64)), std::runtime_error);
  CHECK_THROWS_AS(y2.backward(Tensor::ones({3}, DType::F32)), std::runtime_error);
  // a one-element tensor of any rank is seeded with 1
  Tensor z = reshape(sum(x), {1, 1});
  x.zero_grad();
  z.backward();
  CHECK(x.grad().to_vector() == std::vector<double>{1.0, 1.0, 1.0});
}

TEST_CASE("a chain of 100000 add_scalar ops backpropagates without stack overflow") {
  Tensor x = leaf({0.5}, {1});
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = add_scalar(y, 1.0);
  CHECK(y.item() == doctest::Approx(100000.5));
  y.backward();
  REQUIRE(x.grad().defined());
  CHECK(x.grad().item() == 1.0);
  // releasing the graph must not recurse either (y's destructor frees 100000 nodes)
  y = Tensor();
  CHECK(x.defined());
}

// Dropping a deep graph that was never backpropagated must tear it down iteratively: freeing it by
// recursion (~TensorImpl -> ~Node -> ~Tensor) overflowed an 8 MiB stack near 105000 levels.
// Run in a forked child so that a crash cannot take the whole test binary down.
TEST_CASE("a 1000000-deep graph dropped without backward does not overflow the stack") {
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGSEGV, SIG_DFL);  // die quietly, not through doctest's crash report
    {
      Tensor x = leaf({0.5}, {1});
      Tensor y = x;
      for (int i = 0; i < 1000000; ++i) y = add_scalar(y, 1.0);
    }  // y and its graph are released here
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  const bool clean_exit = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  INFO("child ", WIFSIGNALED(status) ? "died from signal " + std::to_string(WTERMSIG(status)) : "exited");
  CHECK(clean_exit);
}

TEST_CASE("detach cuts the graph") {
  Tensor x = leaf({3.0}, {1});
  Tensor d = x.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.grad_fn() == nullptr);
  CHECK(d.data_ptr() == x.data_ptr());  // same storage
  // y = x * detach(x): dy/dx = detach(x) = 3, not 2x = 6
  sum(mul(x, d)).backward();
  CHECK(x.grad().item() == 3.0);
  // detaching an interior tensor stops the flow to the leaf entirely
  Tensor w = leaf({2.0}, {1});
  Tensor inner = mul(w, w).detach();
  CHECK_FALSE(inner.requires_grad());
  CHECK_THROWS_AS(sum(inner).backward(), std::runtime_error);
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("a tensor that does not require grad gets no .grad()") {
  Tensor x = leaf({1.0, 2.0}, {2});
  Tensor c = Tensor::from_vector({5.0, 7.0}, {2}, DType::F64);  // a constant
  sum(mul(x, c)).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{5.0, 7.0});
  CHECK_FALSE(c.requires_grad());
  CHECK_FALSE(c.grad().defined());
  // backward from a result that never needed a graph is an error, not a silent no-op
  Tensor k = mul(c, c);
  CHECK_FALSE(k.requires_grad());
  CHECK_THROWS_AS(sum(k).backward(), std::runtime_error);
}

TEST_CASE("int64 tensors cannot require grad; set_requires_grad is for leaves") {
  Tensor ids = Tensor::from_ids({1, 2}, {2});
  CHECK_THROWS_AS(ids.set_requires_grad(true), std::runtime_error);
  CHECK_FALSE(ids.requires_grad());
  ids.set_requires_grad(false);  // turning it off is fine
  Tensor x = leaf({1.0}, {1});
  Tensor y = mul(x, x);
  CHECK_THROWS_AS(y.set_requires_grad(false), std::runtime_error);
  CHECK(x.is_leaf());
  CHECK_FALSE(y.is_leaf());
}
}
