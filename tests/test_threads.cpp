// tests/test_threads.cpp — the CPU backend's parallel loops and gemm: every op whose work is split
// across threads gives the same bits, forward and backward, with 1 thread and with several, at sizes
// large enough to be split (the op-table cases are too small to reach the parallel paths).
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "framework/autograd.h"
#include "framework/backend.h"
#include "framework/ops.h"
#include "framework/optim.h"
#include "framework/random.h"

using namespace qkv;

namespace {

using Inputs = std::vector<Tensor>;

// The op's output and the gradients of its inputs for a fixed upstream gradient, as raw bytes.
std::vector<std::vector<char>> run_once(const std::vector<Shape>& shapes, DType dtype,
                                        const std::function<Tensor(const Inputs&)>& op) {
  Generator gen(11);
  Inputs inputs;
  for (const Shape& s : shapes) inputs.push_back(randn(s, gen, dtype).set_requires_grad());
  Tensor out = op(inputs);
  Tensor upstream = randn(out.shape(), gen, dtype);
  out.backward(upstream);
  std::vector<std::vector<char>> bytes;
  auto keep = [&bytes](const Tensor& t) {
    const char* p = static_cast<const char*>(t.data_ptr());
    bytes.emplace_back(p, p + t.numel() * dtype_size(t.dtype()));
  };
  keep(out);
  for (const Tensor& x : inputs) keep(x.grad());
  return bytes;
}

void check_same_bits(const std::string& name, const std::vector<Shape>& shapes,
                     const std::function<Tensor(const Inputs&)>& op) {
  for (DType dtype : {DType::F32, DType::F64}) {
    CAPTURE(name);
    CAPTURE(dtype_name(dtype));
    set_cpu_threads(1);
    const auto one = run_once(shapes, dtype, op);
    for (int threads : {2, 3}) {
      CAPTURE(threads);
      set_cpu_threads(threads);
      const auto many = run_once(shapes, dtype, op);
      REQUIRE(many.size() == one.size());
      for (size_t i = 0; i < one.size(); ++i) {
        CAPTURE(i);  // 0: the output, then each input's gradient
        CHECK(many[i] == one[i]);
      }
    }
  }
  set_cpu_threads(0);
}

}  // namespace

TEST_CASE("parallel CPU loops: the same bits with 1, 2 and 3 threads") {
  // 1,499 rows of 64 (95,936 entries): above the split threshold, and no thread count splits it evenly
  const int64_t rows = 1499, width = 64;
  check_same_bits("exp", {{rows, width}}, [](const Inputs& x) { return exp(x[0]); });
  check_same_bits("gelu", {{rows, width}}, [](const Inputs& x) { return gelu(x[0]); });
  check_same_bits("mul, same shape", {{rows, width}, {rows, width}},
                  [](const Inputs& x) { return mul(x[0], x[1]); });
  check_same_bits("add, a bias row", {{rows, width}, {width}}, [](const Inputs& x) { return add(x[0], x[1]); });
  check_same_bits("div, a column", {{rows, width}, {rows, 1}}, [](const Inputs& x) { return div(x[0], x[1]); });
  check_same_bits("sub, one long row", {{1, 100000}, {1, 100000}},
                  [](const Inputs& x) { return sub(x[0], x[1]); });
  check_same_bits("mul, 3-d broadcast", {{31, 47, width}, {31, 1, width}},
                  [](const Inputs& x) { return mul(x[0], x[1]); });
  check_same_bits("transpose", {{31, 47, width}}, [](const Inputs& x) { return transpose(x[0]); });
  check_same_bits("masked_fill", {{rows, width}}, [](const Inputs& x) {
    std::vector<double> keep(width);
    for (int64_t c = 0; c < width; ++c) keep[c] = c % 3 == 0 ? 0.0 : 1.0;
    return masked_fill(x[0], Tensor::from_vector(keep, {1, width}, x[0].dtype()), -1.0);
  });
  check_same_bits("softmax", {{rows, width}}, [](const Inputs& x) { return softmax(x[0]); });
  check_same_bits("log_softmax", {{rows, 700}}, [](const Inputs& x) { return log_softmax(x[0]); });
  check_same_bits("layer_norm", {{rows, width}, {width}, {width}},
                  [](const Inputs& x) { return layer_norm(x[0], x[1], x[2]); });
  // gemm: OpenBLAS on one thread, the call cut into pieces that do not depend on the thread count
  check_same_bits("matmul, rows split", {{rows, width}, {96, width}},
                  [](const Inputs& x) { return matmul(x[0], x[1], false, true); });
  check_same_bits("matmul, columns split", {{width, rows}, {rows, 700}},
                  [](const Inputs& x) { return matmul(x[0], x[1]); });
  check_same_bits("linear, bias in the gemm", {{rows, width}, {96, width}, {96}},
                  [](const Inputs& x) { return linear(x[0], x[1], x[2]); });
  check_same_bits("matmul, batched", {{6, 130, width}, {6, width, 130}},
                  [](const Inputs& x) { return matmul(x[0], x[1]); });
  check_same_bits("layer_norm, no affine", {{rows, width}}, [](const Inputs& x) {
    return layer_norm(x[0], Tensor(), Tensor());
  });
  // sums: of everything (blocks of 2^14 summed in parallel), of each row (row_sum's lanes), of each column
  check_same_bits("sum of everything", {{rows, width}}, [](const Inputs& x) { return sum(x[0]); });
  check_same_bits("sum of each row", {{rows, 333}}, [](const Inputs& x) { return sum(x[0], 1); });
  check_same_bits("sum of each column", {{rows, width}}, [](const Inputs& x) { return sum(x[0], 0); });
}

TEST_CASE("parallel CPU loops: AdamW steps give the same bits with 1 and 2 threads") {
  auto train = [](int threads) {
    set_cpu_threads(threads);
    Generator gen(3);
    Tensor p = randn({200, 500}, gen).set_requires_grad();
    optim::AdamW opt({p}, optim::AdamOptions{1e-2, 0.9, 0.999, 1e-8, 0.01});
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      sum(mul(p, p)).backward();
      opt.step();
    }
    const char* bytes = static_cast<const char*>(p.data_ptr());
    set_cpu_threads(0);
    return std::vector<char>(bytes, bytes + p.numel() * sizeof(float));
  };
  CHECK(train(2) == train(1));
}
