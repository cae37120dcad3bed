// tests/engine/test_nn.cpp — the nn layers (Linear, Embedding, LayerNorm) and Module: initialisation,
// forward and the parameter registry; embedding_concat against the ops it fuses.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "framework/autograd.h"
#include "framework/nn.h"
#include "framework/ops.h"
#include "framework/random.h"

using namespace qkv;

TEST_SUITE("nn") {
TEST_CASE("Linear: shapes, default init within +-1/sqrt(in), forward = x W^T + b") {
  Generator gen(11);
  nn::Linear lin(16, 5, true, gen, DType::F64);
  CHECK(shape_str(lin.weight.shape()) == "(5, 16)");
  CHECK(shape_str(lin.bias.shape()) == "(5,)");
  CHECK(lin.weight.requires_grad());
  CHECK(lin.weight.is_leaf());
  const double bound = 1.0 / std::sqrt(16.0);  // 0.25
  double w_max = 0;
  for (double v : lin.weight.to_vector()) {
    CHECK(std::fabs(v) <= bound);
    w_max = std::max(w_max, std::fabs(v));
  }
  CHECK(w_max > 0.2);  // the init uses the range, it is not all zeros
  for (double v : lin.bias.to_vector()) CHECK(std::fabs(v) <= bound);
  CHECK(lin.parameter_count() == 16 * 5 + 5);

  // forward against a hand-written x W^T + b, for a batched (2, 3, 16) input
  Tensor x = randn({2, 3, 16}, gen, DType::F64);
  Tensor y = lin.forward(x);
  CHECK(shape_str(y.shape()) == "(2, 3, 5)");
  const std::vector<double> xv = x.to_vector(), wv = lin.weight.to_vector(), bv = lin.bias.to_vector(),
                            yv = y.to_vector();
  for (int r = 0; r < 6; ++r)
    for (int o = 0; o < 5; ++o) {
      double expect = bv[o];
      for (int i = 0; i < 16; ++i) expect += xv[r * 16 + i] * wv[o * 16 + i];
      CHECK(std::fabs(yv[r * 5 + o] - expect) <= 1e-12);
    }
  // without bias
  nn::Linear no_bias(3, 2, false, gen, DType::F64);
  CHECK_FALSE(no_bias.bias.defined());
  CHECK(no_bias.parameter_count() == 6);
  CHECK(no_bias.named_parameters().size() == 1);
  Tensor ones = Tensor::ones({1, 3}, DType::F64);
  const std::vector<double> w = no_bias.weight.to_vector();
  const std::vector<double> out = no_bias.forward(ones).to_vector();
  CHECK(out[0] == doctest::Approx(w[0] + w[1] + w[2]).epsilon(1e-12));
  CHECK(out[1] == doctest::Approx(w[3] + w[4] + w[5]).epsilon(1e-12));
  // float32 by default
  nn::Linear f32(4, 4, true, gen);
  CHECK(f32.weight.dtype() == DType::F32);
}

TEST_CASE("named_parameters: own names first, then children with prefixes; parameter_count") {
  struct Block : nn::Module {
    nn::Linear proj;
    nn::LayerNorm norm;
    Tensor scale;
    Block(Generator& gen) : proj(4, 3, true, gen), norm(3) {
      register_parameter("scale", scale, Tensor::ones({2}));
      register_module("proj", proj);
      register_module("norm", norm);
    }
  };
  struct Model : nn::Module {
    nn::Embedding embed;
    Block block;
    Model(Generator& gen) : embed(10, 4, gen), block(gen) {
      register_module("embed", embed);
      register_module("block", block);
    }
  };
  Generator gen(3);
  Model model(gen);
  std::vector<std::string> names;
  for (auto& [name, t] : model.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"embed.weight", "block.scale", "block.proj.weight", "block.proj.bias",
                                          "block.norm.weight", "block.norm.bias"});
  CHECK(model.parameter_count() == 10 * 4 + 2 + 4 * 3 + 3 + 3 + 3);
  CHECK(model.parameters().size() == 6);
  // named_parameters hands out the same tensors, not copies
  CHECK(model.named_parameters()[2].second.same_impl(model.block.proj.weight));
  // train() reaches every child
  model.train(false);
  CHECK_FALSE(model.block.norm.training());
  // zero_grad reaches every child
  model.block.proj.weight.set_grad(Tensor::ones({3, 4}));
  model.zero_grad();
  CHECK_FALSE(model.block.proj.weight.grad().defined());
}

TEST_CASE("Embedding init is N(0, 1); LayerNorm starts at weight 1, bias 0") {
  Generator gen(5);
  nn::Embedding emb(1000, 64, gen, DType::F64);
  CHECK(shape_str(emb.weight.shape()) == "(1000, 64)");
  const std::vector<double> v = emb.weight.to_vector();
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= v.size();
  for (double x : v) s += (x - m) * (x - m);
  s = std::sqrt(s / v.size());
  CHECK(std::fabs(m) < 0.02);  // standard error 1/sqrt(64000) = 0.004
  CHECK(std::fabs(s - 1.0) < 0.02);
  Tensor rows = emb.forward(Tensor::from_ids({999, 0}, {2}));
  CHECK(rows.to_vector()[0] == v[999 * 64]);

  nn::LayerNorm ln(7);
  CHECK(ln.weight.to_vector() == std::vector<double>(7, 1.0));
  CHECK(ln.bias.to_vector() == std::vector<double>(7, 0.0));
  CHECK(ln.eps == 1e-5);
  CHECK(ln.parameter_count() == 14);
  std::vector<std::string> names;
  for (auto& [name, t] : ln.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"weight", "bias"});
}

TEST_CASE("the same seed gives identical init; another seed does not") {
  Generator g1(77), g2(77), g3(78);
  nn::Linear a(8, 4, true, g1), b(8, 4, true, g2), c(8, 4, true, g3);
  CHECK(a.weight.to_vector() == b.weight.to_vector());
  CHECK(a.bias.to_vector() == b.bias.to_vector());
  CHECK(a.weight.to_vector() != c.weight.to_vector());
  nn::Embedding e1(5, 3, g1), e2(5, 3, g2);
  CHECK(e1.weight.to_vector() == e2.weight.to_vector());
}

// embedding_concat computes what add(concat(embeddings), addend) does, with the same sums: its
// output and every gradient must match bit for bit (the translator's checkpoints rely on it).
TEST_CASE("embedding_concat gives the composed ops' bits, forward and backward") {
  for (DType dtype : {DType::F32, DType::F64})
    for (bool with_addend : {true, false})
      for (bool second_learns : {true, false}) {
        CAPTURE(dtype_name(dtype));
        CAPTURE(with_addend);
        CAPTURE(second_learns);
        Generator gen(11);
        Tensor a = randn({30, 8}, gen, dtype).set_requires_grad(), b = randn({20, 8}, gen, dtype),
               pos = randn({9, 8}, gen, dtype).set_requires_grad(), weights = randn({5, 9, 8}, gen, dtype);
        b.set_requires_grad(second_learns);
        std::vector<int64_t> ids_a(5 * 4), ids_b(5 * 5);
        for (auto& id : ids_a) id = static_cast<int64_t>(gen.below(30));
        for (auto& id : ids_b) id = static_cast<int64_t>(gen.below(20));
        ids_a[3] = ids_a[7] = 2;  // a repeated id adds two rows into one
        const Tensor source = Tensor::from_ids(ids_a, {5, 4}), target = Tensor::from_ids(ids_b, {5, 5});
        const Tensor addend = with_addend ? pos : Tensor();
        auto grads = [&](const Tensor& out) {
          for (Tensor t : {a, b, pos}) t.zero_grad();
          sum(mul(out, weights)).backward();
          std::vector<std::vector<double>> all;
          for (const Tensor& t : {a, b, pos})
            all.push_back(t.grad().defined() ? t.grad().to_vector() : std::vector<double>{});
          return all;
        };
        const Tensor fused = embedding_concat({a, b}, {source, target}, addend);
        const auto fused_grads = grads(fused);
        Tensor composed = concat({embedding(a, source), embedding(b, target)}, 1);
        if (with_addend) composed = add(composed, pos);
        const auto composed_grads = grads(composed);
        CHECK(fused.shape() == Shape{5, 9, 8});
        CHECK(fused.to_vector() == composed.to_vector());
        CHECK(fused_grads == composed_grads);
        CHECK(fused_grads[1].empty() == !second_learns);
        CHECK(fused_grads[2].empty() == !with_addend);
      }
}

TEST_CASE("embedding_concat with an empty part, and with no sequences") {
  Generator gen(5);
  Tensor a = randn({4, 3}, gen).set_requires_grad(), b = randn({6, 3}, gen).set_requires_grad();
  Tensor pos = randn({2, 3}, gen).set_requires_grad();
  const Tensor none = Tensor::from_ids({}, {2, 0}), two = Tensor::from_ids({5, 1, 0, 5}, {2, 2});
  Tensor out = embedding_concat({a, b}, {none, two}, pos);  // the first part has no positions
  CHECK(out.shape() == Shape{2, 2, 3});
  CHECK(out.to_vector() == add(embedding(b, two), pos).to_vector());
  sum(out).backward();
  CHECK(a.grad().to_vector() == std::vector<double>(12, 0.0));
  const Tensor empty = embedding_concat({a, b}, {Tensor::from_ids({}, {0, 1}), Tensor::from_ids({}, {0, 1})}, pos);
  CHECK(empty.shape() == Shape{0, 2, 3});
}
}

TEST_CASE("Mt19937_64 draws, seeds and writes its state as std::mt19937_64 does") {
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{5489}, uint64_t{123456789}, ~uint64_t{0}}) {
    std::mt19937_64 standard(seed);
    qkv::Mt19937_64 ours(seed);
    std::ostringstream fresh_standard, fresh_ours;
    fresh_standard << standard;
    fresh_ours << ours;
    CHECK(fresh_ours.str() == fresh_standard.str());
    int mismatches = 0;
    for (int i = 0; i < 1000000; ++i) mismatches += standard() != ours();  // 3,205 twists
    CHECK(mismatches == 0);
    std::ostringstream mid_standard, mid_ours;
    mid_standard << standard;
    mid_ours << ours;
    CHECK(mid_ours.str() == mid_standard.str());
    std::istringstream in(mid_standard.str());
    qkv::Mt19937_64 read_back;
    REQUIRE(static_cast<bool>(in >> read_back));
    for (int i = 0; i < 1000; ++i) mismatches += standard() != read_back();
    CHECK(mismatches == 0);
  }
  std::istringstream past_the_end("1 2 3");
  qkv::Mt19937_64 refused(9);
  CHECK_FALSE(static_cast<bool>(past_the_end >> refused));
  CHECK(refused() == qkv::Mt19937_64(9)());  // a failed read leaves the engine as it was
}
