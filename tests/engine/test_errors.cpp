// tests/engine/test_errors.cpp — bad input raises std::runtime_error with a message that names the
// offending shapes, dtypes, indices or values.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "framework/ops.h"
#include "tests/test_util.h"
#include "framework/tensor.h"

using namespace qkv;
using qkv::testing::error_of;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// CHECK that `msg` contains `part`, printing the whole message when it does not.
#define CHECK_MSG_HAS(msg, part) \
  do {                           \
    INFO("message: ", msg);      \
    CHECK(contains(msg, part));  \
  } while (0)

TEST_SUITE("errors") {
TEST_CASE("matmul with mismatched inner dims names both shapes") {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({4, 5});
  const std::string msg = error_of([&] { matmul(a, b); });
  CHECK_MSG_HAS(msg, "inner dims differ: (2, 3) @ (4, 5)");
  // with a transpose flag, and with mismatched batch dims
  CHECK_MSG_HAS(error_of([&] { matmul(a, Tensor::zeros({5, 4}), false, true); }), "(5, 4)^T");
  CHECK_MSG_HAS(error_of([&] { matmul(Tensor::zeros({2, 2, 3}), Tensor::zeros({3, 3, 4})); }), "(3, 3, 4)");
  CHECK_MSG_HAS(error_of([&] { matmul(Tensor::zeros({3}), Tensor::zeros({3, 1})); }), "(3,)");
}

TEST_CASE("dtype and device mismatches") {
  Tensor f32 = Tensor::ones({2}, DType::F32), f64 = Tensor::ones({2}, DType::F64);
  const std::string msg = error_of([&] { add(f32, f64); });
  CHECK_MSG_HAS(msg, "dtype mismatch");
  CHECK_MSG_HAS(msg, "float32");
  CHECK_MSG_HAS(msg, "float64");
  CHECK_MSG_HAS(error_of([&] {
                  matmul(Tensor::ones({2, 2}, DType::F32), Tensor::ones({2, 2}, DType::F64));
                }),
                "dtype mismatch");
  // int64 tensors are not valid maths inputs
  CHECK_MSG_HAS(error_of([&] { exp(Tensor::from_ids({1, 2}, {2})); }), "int64");
}

TEST_CASE("add_layer_norm names a residual of another shape, and a weight of the wrong width") {
  const std::string msg = error_of([&] {
    add_layer_norm(Tensor::zeros({2, 3}), Tensor::zeros({3}), Tensor(), Tensor());
  });
  CHECK_MSG_HAS(msg, "add_layer_norm: residual (3,) must have the shape of x (2, 3)");
  CHECK_MSG_HAS(error_of([&] {
                  add_layer_norm(Tensor::zeros({2, 3}), Tensor::zeros({2, 3}), Tensor::ones({4}), Tensor());
                }),
                "add_layer_norm: weight/bias must be (3,)");
  CHECK_MSG_HAS(error_of([&] {
                  add_layer_norm(Tensor::zeros({2, 3}), Tensor(), Tensor(), Tensor());
                }),
                "residual is undefined");
}

TEST_CASE("broadcasting failure names both shapes") {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({4});
  const std::string msg = error_of([&] { add(a, b); });
  CHECK_MSG_HAS(msg, "(2, 3)");
  CHECK_MSG_HAS(msg, "(4,)");
  CHECK_MSG_HAS(msg, "broadcast");
  CHECK_MSG_HAS(error_of([&] { mul(Tensor::zeros({2, 3}), Tensor::zeros({3, 2})); }), "(3, 2)");
  // masked_fill: a mask that would enlarge the input is rejected
  CHECK_MSG_HAS(error_of([&] { masked_fill(Tensor::zeros({3}), Tensor::ones({2, 3}), 0.0); }), "(2, 3)");
}

TEST_CASE("embedding index out of range names the index and the row count") {
  Tensor table = Tensor::zeros({5, 2});
  const std::string msg = error_of([&] { embedding(table, Tensor::from_ids({0, 7, 2}, {3})); });
  CHECK_MSG_HAS(msg, "7");
  CHECK_MSG_HAS(msg, "5 rows");
  CHECK_MSG_HAS(error_of([&] { embedding(table, Tensor::from_ids({-1}, {1})); }), "-1");
  CHECK_MSG_HAS(error_of([&] { embedding(table, Tensor::from_ids({5}, {1})); }), "index 5");
  // float ids are rejected
  CHECK_MSG_HAS(error_of([&] { embedding(table, Tensor::zeros({2})); }), "int64");
}

TEST_CASE("embedding_concat names the table, the ids and the addend that do not fit") {
  Tensor a = Tensor::zeros({5, 2}), b = Tensor::zeros({4, 2});
  Tensor ids_a = Tensor::from_ids({0, 1, 2, 3}, {2, 2}), ids_b = Tensor::from_ids({0, 3}, {2, 1});
  const std::string range = error_of([&] { embedding_concat({a, b}, {ids_a, Tensor::from_ids({0, 4}, {2, 1})}, {}); });
  CHECK_MSG_HAS(range, "index 4");
  CHECK_MSG_HAS(range, "4 rows");
  CHECK_MSG_HAS(error_of([&] { embedding_concat({a}, {ids_a, ids_b}, {}); }), "1 tables for 2 id tensors");
  CHECK_MSG_HAS(error_of([&] { embedding_concat({a, Tensor::zeros({4, 3})}, {ids_a, ids_b}, {}); }), "(4, 3)");
  CHECK_MSG_HAS(error_of([&] {
                  embedding_concat({a, b}, {ids_a, Tensor::from_ids({0, 1, 2}, {3, 1})}, {});
                }),
                "(3, 1)");
  CHECK_MSG_HAS(error_of([&] { embedding_concat({a, b}, {ids_a, ids_b}, Tensor::zeros({2, 2})); }), "(3, 2)");
  CHECK_MSG_HAS(error_of([&] { embedding_concat({a, b}, {ids_a, Tensor::zeros({2, 1})}, {}); }), "int64");
  CHECK_MSG_HAS(error_of([&] { embedding_concat({}, {}, {}); }), "0 tables");
  CHECK_MSG_HAS(error_of([&] { embedding_concat({Tensor::zeros({5})}, {ids_a}, {}); }),
                "table 0 must be (V, D) and ids 0 (B, L), got (5,) and (2, 2)");
}

TEST_CASE("cross_entropy target out of range or wrong shape") {
  Tensor logits = Tensor::zeros({2, 4});
  const std::string msg = error_of([&] { cross_entropy(logits, Tensor::from_ids({1, 4}, {2})); });
  CHECK_MSG_HAS(msg, "target 4");
  CHECK_MSG_HAS(msg, "4 classes");
  CHECK_MSG_HAS(error_of([&] { cross_entropy(logits, Tensor::from_ids({-3, 0}, {2})); }), "-3");
  CHECK_MSG_HAS(error_of([&] { cross_entropy(logits, Tensor::from_ids({0, 1, 2}, {3})); }), "(3,)");
}

TEST_CASE("reshape with the wrong element count") {
  Tensor x = Tensor::zeros({2, 3});
  const std::string msg = error_of([&] { reshape(x, {4, 2}); });
  CHECK_MSG_HAS(msg, "(2, 3)");
  CHECK_MSG_HAS(msg, "(4, 2)");
  CHECK_MSG_HAS(error_of([&] { reshape(x, {4, -1}); }), "(4, -1)");
  CHECK_MSG_HAS(error_of([&] { reshape(x, {-1, -1}); }), "-1");
  CHECK_MSG_HAS(error_of([&] { x.view_as_shape({7}); }), "(7,)");
}

TEST_CASE("slice out of bounds") {
  Tensor x = Tensor::zeros({2, 3});
  const std::string msg = error_of([&] { slice(x, 1, 1, 4); });
  CHECK_MSG_HAS(msg, "[1, 4)");
  CHECK_MSG_HAS(msg, "(2, 3)");
  CHECK_MSG_HAS(error_of([&] { slice(x, 0, 2, 1); }), "[2, 1)");
  CHECK_MSG_HAS(error_of([&] { slice(x, 0, -1, 1); }), "[-1, 1)");
  CHECK_MSG_HAS(error_of([&] { slice(x, 2, 0, 1); }), "axis 2");
}

TEST_CASE("write_at_ writes a slice in place, and names a source that does not fit") {
  Tensor cache = Tensor::zeros({2, 4, 3});
  cache.write_at_(1, 2, Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 1, 3}));
  const std::vector<double> got = cache.to_vector();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t e = 0; e < 3; ++e) {
        const double expected = t == 2 ? static_cast<double>(b * 3 + e + 1) : 0.0;
        CHECK(got[(b * 4 + t) * 3 + e] == expected);
      }
  const std::string msg = error_of([&] { cache.write_at_(1, 4, Tensor::zeros({2, 1, 3})); });
  CHECK_MSG_HAS(msg, "at 4 along axis 1");
  CHECK_MSG_HAS(msg, "(2, 4, 3)");
  CHECK_MSG_HAS(error_of([&] { cache.write_at_(1, 0, Tensor::zeros({2, 1, 2})); }), "(2, 1, 2)");
  CHECK_MSG_HAS(error_of([&] { cache.write_at_(3, 0, Tensor::zeros({2, 1, 3})); }), "axis 3");
  CHECK_MSG_HAS(error_of([&] { cache.write_at_(1, -1, Tensor::zeros({2, 1, 3})); }), "at -1");
  CHECK_MSG_HAS(error_of([&] { cache.write_at_(1, 0, Tensor::zeros({2, 1, 3}, DType::F64)); }), "float64");
}

TEST_CASE("concat with mismatched shapes") {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({3, 2});
  const std::string msg = error_of([&] { concat({a, b}, 0); });
  CHECK_MSG_HAS(msg, "(2, 3)");
  CHECK_MSG_HAS(msg, "(3, 2)");
  CHECK_MSG_HAS(error_of([&] { concat({a, Tensor::zeros({2, 3, 1})}, 0); }), "(2, 3, 1)");
  CHECK_MSG_HAS(error_of([&] { concat({a, Tensor::zeros({2, 3}, DType::F64)}, 0); }), "float64");
  CHECK_MSG_HAS(error_of([&] { concat({}, 0); }), "no tensors");
}

TEST_CASE("item() on a non-scalar") {
  const std::string msg = error_of([&] { Tensor::zeros({2, 2}).item(); });
  CHECK_MSG_HAS(msg, "(2, 2)");
  CHECK_MSG_HAS(error_of([&] { Tensor::zeros({0}).item(); }), "(0,)");
  CHECK(Tensor::zeros({1, 1}).item() == 0.0);  // any one-element tensor is fine
}

TEST_CASE("Device::parse rejects unknown devices") {
  const std::string msg = error_of([&] { Device::parse("tpu"); });
  CHECK_MSG_HAS(msg, "tpu");
  for (const char* bad : {"cuda:", "cuda:x", "CPU", "", "cuda:-1", "cuda:1:2"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(Device::parse(bad), std::runtime_error);
  }
  CHECK(Device::parse("cpu") == Device::cpu());
  CHECK(Device::parse("cuda") == Device::cuda(0));
  CHECK(Device::parse("cuda:1") == Device::cuda(1));
  CHECK(Device::cuda(1).str() == "cuda:1");
}

TEST_CASE("creation errors: from_vector size, negative dims") {
  CHECK_MSG_HAS(error_of([&] { Tensor::from_vector({1, 2, 3}, {2, 2}); }), "(2, 2)");
  CHECK_MSG_HAS(error_of([&] { Tensor::from_ids({1, 2, 3}, {2}); }), "(2,)");
  CHECK_MSG_HAS(error_of([&] { Tensor::zeros({2, -3}); }), "(2, -3)");
  CHECK_MSG_HAS(error_of([&] { Tensor::ones({2}).to_ids(); }), "float32");
  CHECK_MSG_HAS(error_of([&] { Tensor().shape(); }), "undefined");
}

#ifndef QKV_WITH_CUDA
TEST_CASE("a CUDA tensor in a build without CUDA") {
  const std::string msg = error_of([&] { Tensor::zeros({2}, DType::F32, Device::cuda(0)); });
  CHECK_MSG_HAS(msg, "CUDA");
}
#endif
}

TEST_CASE("rotary and the packed ops name x and tables that do not fit") {
  const RotaryTables t = rotary_tables({0, 1}, {2}, 2, DType::F32, Device::cpu());  // (2, 2): H = 4
  CHECK_MSG_HAS(error_of([&] {
                  rotary(Tensor::zeros({2, 6}), t.cos, t.sin);
                }),
                "rotary: cos and sin must match and be half of 6 wide; got (2, 2) and (2, 2)");
  CHECK_MSG_HAS(error_of([&] { rotary(Tensor::zeros({2, 4}), t.cos, Tensor()); }), "got (2, 2) and none");
  CHECK_MSG_HAS(error_of([&] {
                  attention_ragged_qkv(Tensor::zeros({2, 13}), 5, {{0, 2}, {0, 2}, {0}}, 1.0, t);
                }),
                "attention_ragged_qkv: cos and sin must match and be half of 5 wide");
  CHECK(attention_kv(Tensor::zeros({1, 2, 4}), Tensor::zeros({1, 2, 7}), {}, 1.0, t).shape() == Shape{1, 2, 3});
}
