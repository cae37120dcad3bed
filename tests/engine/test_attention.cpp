// tests/engine/test_attention.cpp — the fused attention op beyond its cases in tests/op_cases.h (gradchecks
// of every mask kind): the composed softmax(q k^T) v path, the ragged form against the padded one,
// thread-count bit-identity, argument errors.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "framework/autograd.h"
#include "framework/backend.h"
#include "framework/ops.h"
#include "framework/random.h"
#include "tests/test_util.h"

using namespace qkv;
using qkv::testing::error_of;
using V = std::vector<Tensor>;

namespace {

// The mask as a (B, Tq, Tk) 0/1 tensor, written from the rule in ops.h independently of the kernels.
Tensor keep_tensor(const AttentionMask& m, int64_t B, int64_t Tq, int64_t Tk, DType dtype) {
  std::vector<double> keep(static_cast<size_t>(B * Tq * Tk), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Tq; ++i)
      for (int64_t j = 0; j < Tk; ++j) {
        const int64_t length = m.key_lengths.empty() ? Tk : m.key_lengths[b];
        const bool visible = j < m.prefix ? j < length : j <= m.query_offset + i;
        keep[(b * Tq + i) * Tk + j] = visible ? 1.0 : 0.0;
      }
  return Tensor::from_vector(keep, {B, Tq, Tk}, dtype);
}

// softmax(q k^T * scale, masked) v with the (Tq, Tk) matrix formed: the reference.
Tensor composed(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& m, double scale) {
  Tensor scores = mul_scalar(matmul(q, k, false, true), scale);
  Tensor keep = keep_tensor(m, q.size(0), q.size(1), k.size(1), q.dtype());
  return matmul(softmax(masked_fill(scores, keep, -std::numeric_limits<double>::infinity())), v);
}

struct Case {
  const char* name;
  AttentionMask mask;
  int64_t B, Tq, Tk, K, Kv;
};

std::vector<Case> cases() {
  return {
      {"none", AttentionMask::none(), 2, 4, 4, 3, 2},
      {"causal", AttentionMask::causal(), 2, 5, 5, 3, 2},
      {"key padding", AttentionMask::padding({2, 4}), 2, 4, 4, 3, 2},
      // the second entry has no source words: its source queries see nothing (zeros)
      {"prefix (the translator's)", AttentionMask::prefix_lm(3, {2, 0}), 2, 6, 6, 3, 2},
      {"causal queries after a cache", AttentionMask{0, {}, 3}, 2, 2, 5, 3, 2},
      {"prefix with a query offset", AttentionMask{3, {1, 3}, 4}, 2, 2, 6, 2, 3},
      // more than one 64-key tile: the online softmax rescales across tiles
      {"causal over two tiles", AttentionMask::causal(), 1, 70, 70, 2, 1},
      // more than four tiles: the backward's two passes (one task per key tile, then per query tile)
      // instead of one pass per batch entry
      {"causal over five tiles", AttentionMask::causal(), 1, 300, 300, 2, 1},
  };
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

bool bitwise_same(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

// A translator-like batch for the ragged form: entry b's n_src[b] source positions at [0, S) and
// n_tgt[b] target positions at [S, S + Tt) of a padded (B, T, H) tensor, and the same real
// positions as rows back to back.
struct Packing {
  int64_t S = 6, Tt = 5, T = 11;
  std::vector<int64_t> n_src = {6, 3, 0, 2, 4}, n_tgt = {5, 2, 4, 0, 1};
  int64_t B() const { return static_cast<int64_t>(n_src.size()); }
  // b * T + p of each real position, in row order (every one, or the target ones alone)
  Tensor positions(bool target_only) const {
    std::vector<int64_t> ids;
    for (int64_t b = 0; b < B(); ++b) {
      if (!target_only)
        for (int64_t p = 0; p < n_src[b]; ++p) ids.push_back(b * T + p);
      for (int64_t t = 0; t < n_tgt[b]; ++t) ids.push_back(b * T + S + t);
    }
    return Tensor::from_ids(ids, {static_cast<int64_t>(ids.size())});
  }
  RaggedLayout layout(bool target_only) const {
    RaggedLayout r{{0}, {0}, n_src};
    for (int64_t b = 0; b < B(); ++b) {
      r.query_starts.push_back(r.query_starts.back() + (target_only ? 0 : n_src[b]) + n_tgt[b]);
      r.key_starts.push_back(r.key_starts.back() + n_src[b] + n_tgt[b]);
    }
    return r;
  }
};

// The rows of x (B, T, H) at positions (N) -> (N, H).
Tensor rows_at(const Tensor& x, const Tensor& positions) {
  return embedding(reshape(x, {x.size(0) * x.size(1), x.size(2)}), positions);
}

}  // namespace

TEST_SUITE("attention") {
TEST_CASE("the ragged form gives the padded op's bits on the real rows, forward and backward") {
  // The padded op runs on (B, T, H) with random values at the padding too and a zero upstream
  // gradient there (what the translator's gather back gives); the ragged one on the real rows.
  const Packing pack;
  Generator gen(16);
  for (DType dtype : {DType::F32, DType::F64}) {
    for (bool target_only : {false, true}) {
      const std::string dtype_text = dtype_name(dtype);
      CAPTURE(dtype_text);
      CAPTURE(target_only);
      const int64_t B = pack.B(), T = pack.T, Tq = target_only ? pack.Tt : T, H = 8, Hv = 4;
      const Tensor q = randn({B, Tq, H}, gen, dtype), k = randn({B, T, H}, gen, dtype);
      const Tensor v = randn({B, T, Hv}, gen, dtype);
      // query rows: every real position, or the target ones of a (B, Tt, H) tensor
      Packing query_pack = pack;
      if (target_only) query_pack = Packing{0, pack.Tt, pack.Tt, std::vector<int64_t>(B, 0), pack.n_tgt};
      const Tensor query_positions = query_pack.positions(false), key_positions = pack.positions(false);
      const Tensor g_rows = randn({query_positions.size(0), Hv}, gen, dtype);
      AttentionMask mask = AttentionMask::prefix_lm(pack.S, pack.n_src);
      if (target_only) mask.query_offset = pack.S;
      const double scale = 0.35;

      V padded{q.clone(), k.clone(), v.clone()};
      for (Tensor& x : padded) x.set_requires_grad(true);
      const Tensor padded_out = rows_at(attention(padded[0], padded[1], padded[2], mask, scale), query_positions);
      padded_out.backward(g_rows);

      V ragged{rows_at(q, query_positions), rows_at(k, key_positions), rows_at(v, key_positions)};
      for (Tensor& x : ragged) x.set_requires_grad(true);
      const Tensor ragged_out = attention_ragged(ragged[0], ragged[1], ragged[2], pack.layout(target_only), scale);
      ragged_out.backward(g_rows);

      CHECK(bitwise_same(ragged_out, padded_out));
      CHECK(bitwise_same(ragged[0].grad(), rows_at(padded[0].grad(), query_positions)));
      CHECK(bitwise_same(ragged[1].grad(), rows_at(padded[1].grad(), key_positions)));
      CHECK(bitwise_same(ragged[2].grad(), rows_at(padded[2].grad(), key_positions)));
    }
  }
}

TEST_CASE("the ragged form is bit-identical for one and two threads") {
  Generator gen(17);
  const RaggedLayout layout{{0, 130, 200, 210}, {0, 130, 260, 270}, {50, 20, 10}};
  Tensor q = randn({210, 16}, gen), k = randn({270, 16}, gen), v = randn({270, 8}, gen), g = randn({210, 8}, gen);
  Tensor results[2][4];
  for (int t = 0; t < 2; ++t) {
    set_cpu_threads(t + 1);
    V x{q.clone(), k.clone(), v.clone()};
    for (Tensor& y : x) y.set_requires_grad(true);
    results[t][0] = attention_ragged(x[0], x[1], x[2], layout, 0.25);
    results[t][0].backward(g);
    for (int i = 0; i < 3; ++i) results[t][i + 1] = x[i].grad();
  }
  set_cpu_threads(0);
  for (int i = 0; i < 4; ++i) CHECK(bitwise_same(results[0][i], results[1][i]));
}

TEST_CASE("the packed projections give attention_ragged's bits on their column blocks, forward and backward") {
  Generator gen(23);
  // entries past one key tile, three short ones, and one of 300 rows: past four tiles (the
  // backward's two passes) and large enough for the pool's threads (2 of them here)
  const std::vector<RaggedLayout> layouts = {{{0, 70, 75}, {0, 70, 75}, {20, 2}, 0.0},
                                             {{0, 5, 9, 12}, {0, 5, 9, 12}, {2, 0, 3}, 0.25},
                                             {{0, 300, 310}, {0, 300, 310}, {40, 3}, 0.0}};
  set_cpu_threads(2);
  for (DType dtype : {DType::F32, DType::F64})
    for (const RaggedLayout& layout : layouts)
      for (int form : {0, 1, 2}) {  // no turn; rotary's bits, turned in a copy or (moved in, held alone) in place
        const std::string dtype_text = dtype_name(dtype);
        CAPTURE(dtype_text);
        CAPTURE(form);
        const int64_t N = layout.query_starts.back(), H = 16, Hv = 32;
        const Tensor qkv_values = randn({N, 2 * H + Hv}, gen, dtype), g = randn({N, Hv}, gen, dtype);
        std::vector<int64_t> positions;
        for (int64_t r = 0; r < N; ++r) positions.push_back(r * 7 % 40);
        const RotaryTables t = form > 0 ? rotary_tables(positions, {N}, H / 2, dtype, Device::cpu()) : RotaryTables{};
        const auto turn = [&](Tensor x) { return form > 0 ? rotary(std::move(x), t.cos, t.sin) : x; };
        const auto fed = [&](const Tensor& x) { return form == 2 ? mul_scalar(x, 1.0) : x; };  // held alone, or not
        // apart: the three column blocks as tensors of their own
        V apart{slice(qkv_values, 1, 0, H), slice(qkv_values, 1, H, 2 * H), slice(qkv_values, 1, 2 * H, 2 * H + Hv)};
        for (Tensor& x : apart) x.set_requires_grad(true);
        const Tensor apart_out = attention_ragged(turn(apart[0]), turn(apart[1]), apart[2], layout, 0.3);
        apart_out.backward(g);
        const Tensor apart_grad = concat({apart[0].grad(), apart[1].grad(), apart[2].grad()}, 1);
        // all three packed
        Tensor qkv = qkv_values.clone();
        qkv.set_requires_grad(true);
        const Tensor qkv_out = attention_ragged_qkv(fed(qkv), H, layout, 0.3, t);
        qkv_out.backward(g);
        CHECK(bitwise_same(qkv_out, apart_out));
        CHECK(bitwise_same(qkv.grad(), apart_grad));
        // keys and values packed, queries apart
        Tensor q = apart[0].detach().clone(), kv = slice(qkv_values, 1, H, 2 * H + Hv);
        q.set_requires_grad(true);
        kv.set_requires_grad(true);
        const Tensor kv_out = attention_ragged_kv(turn(fed(q)), fed(kv), layout, 0.3, t);
        kv_out.backward(g);
        CHECK(bitwise_same(kv_out, apart_out));
        CHECK(bitwise_same(q.grad(), apart[0].grad()));
        CHECK(bitwise_same(kv.grad(), slice(apart_grad, 1, H, 2 * H + Hv)));
      }
  set_cpu_threads(0);
}

TEST_CASE("the padded packed forms give attention's bits on their column blocks, forward and backward") {
  Generator gen(29);
  // the translator's prefix mask over two key tiles, and a knockout with ALiBi over one
  AttentionMask two_tiles = AttentionMask::prefix_lm(40, {33, 40});
  AttentionMask knocked = AttentionMask::prefix_lm(5, {4, 2});
  knocked.knockout_key = 1, knocked.knockout_from = 5, knocked.knockout_to = 9;
  knocked.distance_slope = 0.25;
  for (DType dtype : {DType::F32, DType::F64})
    for (const auto& [mask, T] : {std::pair{two_tiles, int64_t{70}}, std::pair{knocked, int64_t{9}}}) {
      const std::string dtype_text = dtype_name(dtype);
      CAPTURE(dtype_text);
      const int64_t B = 2, H = 32, Hv = 16, S = mask.prefix;
      const Tensor qkv_values = randn({B, T, 2 * H + Hv}, gen, dtype), g = randn({B, T, Hv}, gen, dtype);
      V apart{slice(qkv_values, 2, 0, H), slice(qkv_values, 2, H, 2 * H), slice(qkv_values, 2, 2 * H, 2 * H + Hv)};
      for (Tensor& x : apart) x.set_requires_grad(true);
      const Tensor apart_out = attention(apart[0], apart[1], apart[2], mask, 0.2);
      apart_out.backward(g);
      const Tensor apart_grad = concat({apart[0].grad(), apart[1].grad(), apart[2].grad()}, 2);
      Tensor qkv = qkv_values.clone();
      qkv.set_requires_grad(true);
      const Tensor qkv_out = attention_qkv(qkv, H, mask, 0.2);
      qkv_out.backward(g);
      CHECK(bitwise_same(qkv_out, apart_out));
      CHECK(bitwise_same(qkv.grad(), apart_grad));
      // the last layer's form: the target queries apart, placed after the prefix
      AttentionMask target_mask = mask;
      target_mask.query_offset = S;
      const Tensor g_target = slice(g, 1, S, T);
      V sep{slice(slice(qkv_values, 1, S, T), 2, 0, H), slice(qkv_values, 2, H, 2 * H),
            slice(qkv_values, 2, 2 * H, 2 * H + Hv)};
      for (Tensor& x : sep) x.set_requires_grad(true);
      const Tensor sep_out = attention(sep[0], sep[1], sep[2], target_mask, 0.2);
      sep_out.backward(g_target);
      Tensor q = sep[0].detach().clone(), kv = slice(qkv_values, 2, H, 2 * H + Hv);
      q.set_requires_grad(true);
      kv.set_requires_grad(true);
      const Tensor kv_out = attention_kv(q, kv, target_mask, 0.2);
      kv_out.backward(g_target);
      CHECK(bitwise_same(kv_out, sep_out));
      CHECK(bitwise_same(q.grad(), sep[0].grad()));
      CHECK(bitwise_same(kv.grad(), concat({sep[1].grad(), sep[2].grad()}, 2)));
    }
}

TEST_CASE("the packed forms name a width that does not fit") {
  const RaggedLayout layout{{0, 1, 4}, {0, 1, 4}, {1, 0}};
  CHECK(error_of([&] {
          attention_ragged_qkv(Tensor::zeros({4, 6}), 3, layout, 1.0);
        }) == "attention_ragged_qkv: qkv (4, 6) is not (N, 2 H + Hv) with H = 3 and Hv >= 1");
  CHECK(error_of([&] {
          attention_ragged_qkv(Tensor::zeros({4, 7}), 0, layout, 1.0);
        }) == "attention_ragged_qkv: qkv (4, 7) is not (N, 2 H + Hv) with H = 0 and Hv >= 1");
  CHECK(error_of([&] {
          attention_ragged_kv(Tensor::zeros({4, 3}), Tensor::zeros({4, 3}), layout, 1.0);
        }) == "attention_ragged_kv: q (4, 3) and kv (4, 3) do not fit (Nq, H) and (Nk, H + Hv)");
  CHECK(error_of([&] {
          attention_ragged_kv(Tensor::zeros({4, 3}), Tensor::zeros({3, 5}), layout, 1.0);
        }) == "attention_ragged_kv: key starts 0, 1, 4 must be 3 offsets from 0 to the 3 rows");
  CHECK(error_of([&] {
          attention_ragged_qkv(Tensor::zeros({4, 7}), 3, layout, std::nan(""));
        }) == "attention_ragged_qkv: scale must be finite, got nan");
  CHECK(error_of([&] {
          attention_ragged_qkv(Tensor::zeros({4, 7}), 3, {{0, 1, 4}, {0, 2, 4}, {1, 0}}, 1.0);
        }) ==
        "attention_ragged_qkv: query starts 0, 1, 4 differ from key starts 0, 2, 4 (every row of qkv is a query and a "
        "key)");
  CHECK(error_of([&] {
          attention_ragged_qkv(Tensor::from_ids({1, 2, 3, 4, 5, 6, 7}, {1, 7}), 3, {{0, 1}, {0, 1}, {0}}, 1.0);
        }).starts_with("attention_ragged_qkv: expected a float32 or float64 tensor, got"));
  // a width so large that 2 H would overflow is refused, not read past the tensor
  CHECK(error_of([&] {
          attention_ragged_qkv(Tensor::zeros({4, 7}), int64_t{1} << 62, layout, 1.0);
        }) == "attention_ragged_qkv: qkv (4, 7) is not (N, 2 H + Hv) with H = 4611686018427387904 and Hv >= 1");
  // the padded forms
  const AttentionMask causal = AttentionMask::causal();
  CHECK(error_of([&] {
          attention_qkv(Tensor::zeros({1, 4, 7}), int64_t{1} << 62, causal, 1.0);
        }) == "attention_qkv: qkv (1, 4, 7) is not (B, T, 2 H + Hv) with H = 4611686018427387904 and Hv >= 1");
  CHECK(error_of([&] {
          attention_qkv(Tensor::zeros({2, 4, 6}), 3, causal, 1.0);
        }) == "attention_qkv: qkv (2, 4, 6) is not (B, T, 2 H + Hv) with H = 3 and Hv >= 1");
  CHECK(error_of([&] { attention_qkv(Tensor(), 3, causal, 1.0); }) == "attention_qkv: input tensor is undefined");
  CHECK(error_of([&] {
          attention_kv(Tensor::zeros({2, 4, 3}), Tensor::zeros({3, 4, 5}), causal, 1.0);
        }) == "attention_kv: q (2, 4, 3) and kv (3, 4, 5) do not fit (B, Tq, H) and (B, Tk, H + Hv)");
  CHECK(error_of([&] {
          attention_kv(Tensor::zeros({2, 4, 3}), Tensor::zeros({2, 4, 5}, DType::F64), causal, 1.0);
        }) == "attention_kv: dtype mismatch: float32 and float64");
  CHECK(error_of([&] {
          attention_kv(Tensor::zeros({2, 4, 3}), Tensor::zeros({2, 4, 5}), AttentionMask::padding({1}), 1.0);
        }) == "attention_kv: 1 key lengths for a batch of 2");
}

TEST_CASE("bad ragged layouts name the offsets and values") {
  Tensor q = Tensor::zeros({4, 3}), k = Tensor::zeros({5, 3}), v = Tensor::zeros({5, 2});
  const RaggedLayout good{{0, 1, 4}, {0, 2, 5}, {1, 0}};
  CHECK_NOTHROW(attention_ragged(q, k, v, good, 1.0));
  CHECK(error_of([&] {
          attention_ragged(q, Tensor::zeros({5, 2}), v, good, 1.0);
        }) == "attention_ragged: q (4, 3), k (5, 2) and v (5, 2) do not fit (Nq, H), (Nk, H), (Nk, Hv)");
  CHECK(error_of([&] {
          attention_ragged(q, k, v, {{0, 1, 3}, {0, 2, 5}, {1, 0}}, 1.0);
        }) == "attention_ragged: query starts 0, 1, 3 must be 3 offsets from 0 to the 4 rows");
  CHECK(error_of([&] {
          attention_ragged(q, k, v, {{0, 1, 4}, {0, 3, 2, 5}, {1, 0}}, 1.0);
        }) == "attention_ragged: key starts 0, 3, 2, 5 must be 3 offsets from 0 to the 5 rows");
  CHECK(error_of([&] {
          attention_ragged(q, k, v, {{0, 1, 4}, {0, 3, 2}, {1, 0}}, 1.0);
        }) == "attention_ragged: key starts 0, 3, 2 must be 3 offsets from 0 to the 5 rows");
  const Tensor k2 = Tensor::zeros({2, 3}), v2 = Tensor::zeros({2, 2});
  CHECK(error_of([&] {
          attention_ragged(q, k2, v2, {{0, 1, 4}, {0, 3, 2}, {1, 0}}, 1.0);
        }) == "attention_ragged: key starts 0, 3, 2 go back at entry 1");
  CHECK(error_of([&] {
          attention_ragged(q, k, v, {{0, 1, 4}, {0, 2, 5}, {3, 0}}, 1.0);
        }) == "attention_ragged: entry 0's prefix 3 is outside [0, 2] (its keys)");
  CHECK(error_of([&] { attention_ragged(q, k, v, good, std::nan("")); }) ==
        "attention_ragged: scale must be finite, got nan");
}

TEST_CASE("the fused op agrees with the composed path in float32, forward and backward") {
  Generator gen(12);
  std::vector<Case> all = cases();
  all.push_back({"prefix, 150 positions", AttentionMask::prefix_lm(40, {40, 7, 0}), 3, 150, 150, 16, 16});
  all.push_back({"none, queries fewer than keys", AttentionMask::none(), 2, 65, 130, 8, 4});
  // widths of 64 and 128: the AVX-512 kernels' widest register blocks (four panels of keys, 64
  // columns), with the diagonal cutting through them
  all.push_back({"prefix, widths 64 and 128", AttentionMask::prefix_lm(30, {30, 12}), 2, 100, 100, 64, 128});
  all.push_back(
      {"prefix, 300 positions (two-pass backward)", AttentionMask::prefix_lm(100, {100, 30}), 2, 300, 300, 8, 8});
  for (const Case& c : all) {
    CAPTURE(c.name);
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.K));
    Tensor q = randn({c.B, c.Tq, c.K}, gen), k = randn({c.B, c.Tk, c.K}, gen), v = randn({c.B, c.Tk, c.Kv}, gen);
    Tensor g = randn({c.B, c.Tq, c.Kv}, gen);
    V grads[2];
    Tensor outs[2];
    for (int path = 0; path < 2; ++path) {
      V x{q.clone(), k.clone(), v.clone()};
      for (Tensor& t : x) t.set_requires_grad(true);
      outs[path] = path == 0 ? attention(x[0], x[1], x[2], c.mask, scale) : composed(x[0], x[1], x[2], c.mask, scale);
      outs[path].backward(g);
      for (Tensor& t : x) grads[path].push_back(t.grad());
    }
    CHECK(max_abs_diff(outs[0], outs[1]) < 2e-6);
    for (int i = 0; i < 3; ++i) {
      CAPTURE(i);
      CHECK(max_abs_diff(grads[0][i], grads[1][i]) < 2e-5);
    }
  }
}

TEST_CASE("a query that sees no key gives zeros and passes no gradient") {
  Generator gen(13);
  Tensor q = randn({1, 3, 2}, gen, DType::F64), k = randn({1, 3, 2}, gen, DType::F64);
  Tensor v = randn({1, 3, 2}, gen, DType::F64);
  q.set_requires_grad(true);
  Tensor out = attention(q, k, v, AttentionMask::padding({0}), 1.0);
  for (double x : out.to_vector()) CHECK(x == 0.0);
  sum(out).backward();
  for (double x : q.grad().to_vector()) CHECK(x == 0.0);
}

TEST_CASE("results are bit-identical for one and two threads") {
  Generator gen(14);
  Tensor q = randn({3, 130, 16}, gen), k = randn({3, 130, 16}, gen), v = randn({3, 130, 8}, gen);
  Tensor g = randn({3, 130, 8}, gen);
  Tensor results[2][4];
  for (int t = 0; t < 2; ++t) {
    set_cpu_threads(t + 1);
    V x{q.clone(), k.clone(), v.clone()};
    for (Tensor& y : x) y.set_requires_grad(true);
    results[t][0] = attention(x[0], x[1], x[2], AttentionMask::prefix_lm(50, {50, 20, 3}), 0.25);
    results[t][0].backward(g);
    for (int i = 0; i < 3; ++i) results[t][i + 1] = x[i].grad();
  }
  set_cpu_threads(0);
  for (int i = 0; i < 4; ++i) CHECK(bitwise_same(results[0][i], results[1][i]));
}

TEST_CASE("the backward's one-pass and two-pass paths give the same bits") {
  // Up to 256 positions the backward runs one pass per batch entry. Past that, with two threads and
  // fewer than 4 batch entries per thread, it runs two passes; on one thread, one pass. Under a
  // causal mask, positions 0-255 of a 260-position run see only keys 0-255, and with a zero
  // upstream gradient at positions 256-259 those queries add exact zeros to d_k and d_v. So the
  // first 256 rows of the 260-position run (two passes) must equal a 256-position run (one pass),
  // and the 260-position run on one thread (one pass) must equal it whole.
  Generator gen(15);
  const int64_t T = 260, kept = 256;
  Tensor q = randn({2, T, 8}, gen), k = randn({2, T, 8}, gen), v = randn({2, T, 4}, gen);
  std::vector<double> upstream = randn({2, T, 4}, gen).to_vector();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = kept; i < T; ++i)
      for (int64_t e = 0; e < 4; ++e) upstream[(b * T + i) * 4 + e] = 0.0;
  const Tensor g = Tensor::from_vector(upstream, {2, T, 4});
  struct Run {
    int64_t length;
    int threads;
  };
  const Run runs[3] = {{T, 2}, {kept, 2}, {T, 1}};  // two passes, one pass, one pass over 260
  Tensor results[3][4];
  for (int run = 0; run < 3; ++run) {
    set_cpu_threads(runs[run].threads);
    const int64_t length = runs[run].length;
    V x{slice(q, 1, 0, length).clone(), slice(k, 1, 0, length).clone(), slice(v, 1, 0, length).clone()};
    for (Tensor& y : x) y.set_requires_grad(true);
    Tensor out = attention(x[0], x[1], x[2], AttentionMask::causal(), 0.3);
    out.backward(slice(g, 1, 0, length).clone());
    const int64_t rows = run == 1 ? kept : T;
    results[run][0] = slice(out, 1, 0, rows).clone();
    for (int i = 0; i < 3; ++i) results[run][i + 1] = slice(x[i].grad(), 1, 0, rows).clone();
  }
  set_cpu_threads(0);
  for (int i = 0; i < 4; ++i) {
    CAPTURE(i);  // 0: the output, then d_q, d_k, d_v
    CHECK(bitwise_same(slice(results[0][i], 1, 0, kept).clone(), results[1][i]));
    CHECK(bitwise_same(results[0][i], results[2][i]));
  }
}

TEST_CASE("bad arguments name the shapes and values") {
  Tensor q = Tensor::zeros({2, 4, 3}), k = Tensor::zeros({2, 4, 3}), v = Tensor::zeros({2, 4, 2});
  CHECK(error_of([&] {
          attention(q, Tensor::zeros({2, 4, 5}), v, AttentionMask::none(), 1.0);
        }) == "attention: q (2, 4, 3), k (2, 4, 5) and v (2, 4, 2) do not fit (B, Tq, H), (B, Tk, H), (B, Tk, Hv)");
  CHECK(error_of([&] {
          attention(Tensor::zeros({4, 3}), k, v, AttentionMask::none(), 1.0);
        }) == "attention: q, k and v must be (B, T, H), got (4, 3), (2, 4, 3) and (2, 4, 2)");
  CHECK(error_of([&] { attention(q, k, v, AttentionMask::padding({1}), 1.0); }) ==
        "attention: 1 key lengths for a batch of 2");
  CHECK(error_of([&] {
          attention(q, k, v, AttentionMask::padding({1, 5}), 1.0);
        }) == "attention: key length 5 is outside [0, 4]");
  CHECK(error_of([&] { attention(q, k, v, AttentionMask::none(), std::nan("")); }) ==
        "attention: scale must be finite, got nan");
  CHECK(error_of([&] { attention(q, k, v.to(DType::F64), AttentionMask::none(), 1.0); }) ==
        "attention: dtype mismatch: float32 and float64");
}
}
