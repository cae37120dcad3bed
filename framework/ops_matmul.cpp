// framework/ops_matmul.cpp — batched matmul on the backend's gemm. Transposed operands and the
// transposes in the backward pass are expressed as gemm flags, never as copies.
#include "ops_common.h"

namespace qkv {
using namespace detail;

namespace {

// How one matmul call maps onto gemm: op(A) is (M, K), op(B) is (K, N), over `batch` matrices.
struct GemmPlan {
  Shape batch_shape;
  int64_t batch = 1, M = 0, N = 0, K = 0;
  bool a_shared = false, b_shared = false;  // a plain matrix reused by every batch entry
};

Shape leading(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

// out (batch or single) = op(X) @ op(Y). With sum_batches the batch products are added into one
// (rows, cols) result: the gradient of an operand that was shared across the batch.
Tensor gemm_product(const Tensor& X, bool tx, int64_t x_stride, const Tensor& Y, bool ty, int64_t y_stride,
                    int64_t batch, int64_t rows, int64_t cols, int64_t inner, const Shape& out_shape,
                    bool sum_batches) {
  Tensor out = Tensor::empty(out_shape, X.dtype(), X.device());
  Backend& be = backend_of(X);
  if (!sum_batches) {
    be.gemm_batched(X.dtype(), tx, ty, batch, rows, cols, inner, 1.0, X.data_ptr(), x_stride, Y.data_ptr(), y_stride,
                    0.0, out.data_ptr(), rows * cols);
    return out;
  }
  const size_t elem = dtype_size(X.dtype());
  for (int64_t b = 0; b < batch; ++b) {
    be.gemm_batched(
        X.dtype(), tx, ty, 1, rows, cols, inner, 1.0, static_cast<const char*>(X.data_ptr()) + b * x_stride * elem, 0,
        static_cast<const char*>(Y.data_ptr()) + b * y_stride * elem, 0, b == 0 ? 0.0 : 1.0, out.data_ptr(), 0);
  }
  if (batch == 0) out.fill_(0.0);
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  check_pair(a, b, "matmul");
  if (a.dim() < 2 || b.dim() < 2)
    throw std::runtime_error(fmt::format("matmul: both operands need at least 2 dims, got {} @ {}",
                                         shape_str(a.shape()), shape_str(b.shape())));
  // A batched activation times a shared weight matrix is one big gemm over the flattened rows:
  // (B, T, D) @ (D, K) == (B*T, D) @ (D, K). reshape keeps the graph.
  if (b.dim() == 2 && a.dim() > 2 && !transpose_a) {
    Shape out_shape = leading(a.shape());
    const int64_t rows = shape_numel(out_shape) * a.size(-2);
    Tensor flat = matmul(reshape(a, {rows, a.size(-1)}), b, false, transpose_b);
    out_shape.push_back(a.size(-2));
    out_shape.push_back(flat.size(-1));
    return reshape(flat, out_shape);
  }

  GemmPlan p;
  const int64_t a_rows = a.size(-2), a_cols = a.size(-1);
  const int64_t b_rows = b.size(-2), b_cols = b.size(-1);
  p.M = transpose_a ? a_cols : a_rows;
  p.K = transpose_a ? a_rows : a_cols;
  const int64_t k_b = transpose_b ? b_cols : b_rows;
  p.N = transpose_b ? b_rows : b_cols;
  if (p.K != k_b)
    throw std::runtime_error(fmt::format("matmul: inner dims differ: {}{} @ {}{}", shape_str(a.shape()),
                                         transpose_a ? "^T" : "", shape_str(b.shape()), transpose_b ? "^T" : ""));
  const Shape batch_a = leading(a.shape()), batch_b = leading(b.shape());
  if (batch_a == batch_b) {
    p.batch_shape = batch_a;
  } else if (batch_a.empty()) {
    p.batch_shape = batch_b;
    p.a_shared = true;
  } else if (batch_b.empty()) {
    p.batch_shape = batch_a;
    p.b_shared = true;
  } else {
    throw std::runtime_error(fmt::format("matmul: batch dims of {} and {} must match, or one operand must be 2-d",
                                         shape_str(a.shape()), shape_str(b.shape())));
  }
  p.batch = shape_numel(p.batch_shape);
  const int64_t stride_a = p.a_shared ? 0 : a_rows * a_cols;
  const int64_t stride_b = p.b_shared ? 0 : b_rows * b_cols;

  Shape out_shape = p.batch_shape;
  out_shape.push_back(p.M);
  out_shape.push_back(p.N);
  // (..., M, K) @ (..., K, N) -> (..., M, N)
  Tensor out =
      gemm_product(a, transpose_a, stride_a, b, transpose_b, stride_b, p.batch, p.M, p.N, p.K, out_shape, false);

  Tensor ca = a.detach(), cb = b.detach();
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  return record(out, "matmul", {a, b},
                [ca, cb, p, transpose_a, transpose_b, stride_a, stride_b, need_a,
                 need_b](const Tensor& g) -> std::vector<Tensor> {
                  const int64_t stride_g = p.M * p.N;
                  Tensor d_a, d_b;
                  if (need_a) {
                    // C = op(A) op(B):  d op(A) = G op(B)^T.  Stored A^T when transposed: d A = op(B) G^T.
                    if (!transpose_a)
                      d_a = gemm_product(g, false, stride_g, cb, !transpose_b, stride_b, p.batch, p.M, p.K, p.N,
                                         ca.shape(), p.a_shared);
                    else
                      d_a = gemm_product(cb, transpose_b, stride_b, g, true, stride_g, p.batch, p.K, p.M, p.N,
                                         ca.shape(), p.a_shared);
                  }
                  if (need_b) {
                    // d op(B) = op(A)^T G.  Stored B^T when transposed: d B = G^T op(A).
                    if (!transpose_b)
                      d_b = gemm_product(ca, !transpose_a, stride_a, g, false, stride_g, p.batch, p.K, p.N, p.M,
                                         cb.shape(), p.b_shared);
                    else
                      d_b = gemm_product(g, true, stride_g, ca, transpose_a, stride_a, p.batch, p.N, p.K, p.M,
                                         cb.shape(), p.b_shared);
                  }
                  return {d_a, d_b};
                });
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_pair(x, weight, "linear");
  if (bias.defined()) check_pair(x, bias, "linear");
  if (x.dim() < 1 || weight.dim() != 2 || x.size(-1) != weight.size(1) ||
      (bias.defined() && bias.shape() != Shape{weight.size(0)}))
    throw std::runtime_error(fmt::format("linear: input {} does not fit weight {} (out, in) and bias {} (out,)",
                                         shape_str(x.shape()), shape_str(weight.shape()),
                                         bias.defined() ? shape_str(bias.shape()) : "none"));
  const int64_t in = weight.size(1), out_features = weight.size(0);
  Shape out_shape(x.shape().begin(), x.shape().end() - 1);
  const int64_t rows = shape_numel(out_shape);  // every leading dim flattened
  out_shape.push_back(out_features);
  // out = bias in every row, then out += x W^T on the gemm (beta = 1); without bias out = x W^T
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  Backend& be = backend_of(x);
  if (bias.defined())
    be.strided_copy(x.dtype(), bias.data_ptr(), Strides{0, 1}, out.data_ptr(), Strides{out_features, 1},
                    Shape{rows, out_features});
  be.gemm_batched(x.dtype(), false, true, 1, rows, out_features, in, 1.0, x.data_ptr(), 0, weight.data_ptr(), 0,
                  bias.defined() ? 1.0 : 0.0, out.data_ptr(), 0);
  Tensor cx = x.detach(), cw = weight.detach();
  const bool need_x = x.requires_grad(), need_w = weight.requires_grad(), need_b = bias.defined();
  return record(out, "linear", {x, weight, bias},
                [cx, cw, rows, in, out_features, need_x, need_w, need_b](const Tensor& g) -> std::vector<Tensor> {
                  // y = x W^T + b:  d x = g W,  d W = g^T x,  d b = sum of g over rows
                  Tensor d_x, d_w, d_b;
                  if (need_x)
                    d_x = gemm_product(g, false, 0, cw, false, 0, 1, rows, in, out_features, cx.shape(), false);
                  if (need_w)
                    d_w = gemm_product(g, true, 0, cx, false, 0, 1, out_features, in, rows, cw.shape(), false);
                  if (need_b) d_b = sum_to(reshape(g, {rows, out_features}), Shape{out_features});
                  return {d_x, d_w, d_b};
                });
}

}  // namespace qkv
