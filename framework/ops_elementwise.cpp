// framework/ops_elementwise.cpp — broadcasting arithmetic and pointwise functions, each forward
// followed directly by its backward. Broadcast gradients are summed back with sum_to.
#include <cmath>

#include "ops_common.h"

namespace qkv {
using namespace detail;

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op_name) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::runtime_error(
          fmt::format("{}: shapes {} and {} cannot be broadcast together", op_name, shape_str(a), shape_str(b)));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// out = a op b with broadcasting; no graph.
static Tensor binary_forward(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
  check_pair(a, b, name);
  const Shape out_shape = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = Tensor::empty(out_shape, a.dtype(), a.device());
  backend_of(a).binary(op, a.dtype(), a.data_ptr(), broadcast_strides(a.shape(), out_shape), b.data_ptr(),
                       broadcast_strides(b.shape(), out_shape), out.data_ptr(), out_shape);
  return out;
}

static Tensor unary_forward(UnaryOp op, const Tensor& x, double scalar, const char* name) {
  check_float(x, name);
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_of(x).unary(op, x.dtype(), x.data_ptr(), out.data_ptr(), x.numel(), scalar);
  return out;
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  if (shape.size() > x.shape().size())
    throw std::runtime_error(
        fmt::format("sum_to: cannot reduce {} to the larger rank {}", shape_str(x.shape()), shape_str(shape)));
  // Pad the target with leading 1s to x's rank, reduce, then drop the padding.
  Shape padded(x.shape().size() - shape.size(), 1);
  padded.insert(padded.end(), shape.begin(), shape.end());
  for (size_t i = 0; i < padded.size(); ++i)
    if (padded[i] != 1 && padded[i] != x.shape()[i])
      throw std::runtime_error(
          fmt::format("sum_to: {} does not broadcast to {}", shape_str(shape), shape_str(x.shape())));
  Tensor out = Tensor::empty(padded, x.dtype(), x.device());
  backend_of(x).reduce_sum(x.dtype(), x.data_ptr(), x.shape(), out.data_ptr(), padded);
  out = out.view_as_shape(shape);
  const Shape x_shape = x.shape();
  return record(out, "sum_to", {x},
                [x_shape](const Tensor& g) -> std::vector<Tensor> { return {broadcast_to(g, x_shape)}; });
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  check_defined(x, "broadcast_to");
  if (x.shape() == shape) return x;
  Tensor out = Tensor::empty(shape, x.dtype(), x.device());
  backend_of(x).strided_copy(x.dtype(), x.data_ptr(), broadcast_strides(x.shape(), shape), out.data_ptr(),
                             contiguous_strides(shape), shape);
  const Shape x_shape = x.shape();
  return record(out, "broadcast_to", {x},
                [x_shape](const Tensor& g) -> std::vector<Tensor> { return {sum_to(g, x_shape)}; });
}

// ---- arithmetic ----

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::Add, a, b, "add");
  const Shape sa = a.shape(), sb = b.shape();
  // d(a + b) = g for both, summed over broadcast dims
  return record(out, "add", {a, b}, [sa, sb](const Tensor& g) -> std::vector<Tensor> {
    return {sum_to(g, sa), sum_to(g, sb)};
  });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::Sub, a, b, "sub");
  const Shape sa = a.shape(), sb = b.shape();
  // d(a - b) = (g, -g)
  return record(out, "sub", {a, b}, [sa, sb](const Tensor& g) -> std::vector<Tensor> {
    return {sum_to(g, sa), neg(sum_to(g, sb))};
  });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::Mul, a, b, "mul");
  Tensor ca = a.detach(), cb = b.detach();
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  // d(a * b) = (g * b, g * a)
  return record(out, "mul", {a, b}, [ca, cb, need_a, need_b](const Tensor& g) -> std::vector<Tensor> {
    return {need_a ? sum_to(mul(g, cb), ca.shape()) : Tensor(), need_b ? sum_to(mul(g, ca), cb.shape()) : Tensor()};
  });
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::Div, a, b, "div");
  Tensor ca = a.detach(), cb = b.detach();
  const bool need_b = b.requires_grad();
  // d(a / b) = (g / b, -g * a / b^2)
  return record(out, "div", {a, b}, [ca, cb, need_b](const Tensor& g) -> std::vector<Tensor> {
    Tensor d_a = sum_to(div(g, cb), ca.shape());
    Tensor d_b = need_b ? sum_to(neg(div(mul(g, ca), mul(cb, cb))), cb.shape()) : Tensor();
    return {d_a, d_b};
  });
}

Tensor neg(const Tensor& x) {
  Tensor out = unary_forward(UnaryOp::Neg, x, 0.0, "neg");
  return record(out, "neg", {x}, [](const Tensor& g) -> std::vector<Tensor> { return {neg(g)}; });
}

Tensor mul_scalar(const Tensor& x, double s) {
  Tensor out = unary_forward(UnaryOp::MulScalar, x, s, "mul_scalar");
  // d(x * s) = g * s
  return record(out, "mul_scalar", {x}, [s](const Tensor& g) -> std::vector<Tensor> { return {mul_scalar(g, s)}; });
}

Tensor add_scalar(const Tensor& x, double s) {
  Tensor out = unary_forward(UnaryOp::AddScalar, x, s, "add_scalar");
  return record(out, "add_scalar", {x}, [](const Tensor& g) -> std::vector<Tensor> { return {g}; });
}

Tensor pow_scalar(const Tensor& x, double exponent) {
  Tensor out = unary_forward(UnaryOp::PowScalar, x, exponent, "pow_scalar");
  Tensor cx = x.detach();
  // d(x^p) = g * p * x^(p-1)
  return record(out, "pow_scalar", {x}, [cx, exponent](const Tensor& g) -> std::vector<Tensor> {
    return {mul(g, mul_scalar(pow_scalar(cx, exponent - 1.0), exponent))};
  });
}

// ---- pointwise functions ----

Tensor exp(const Tensor& x) {
  Tensor out = unary_forward(UnaryOp::Exp, x, 0.0, "exp");
  Tensor y = out.detach();
  // d(e^x) = g * e^x
  return record(out, "exp", {x}, [y](const Tensor& g) -> std::vector<Tensor> { return {mul(g, y)}; });
}

Tensor log(const Tensor& x) {
  Tensor out = unary_forward(UnaryOp::Log, x, 0.0, "log");
  Tensor cx = x.detach();
  // d(ln x) = g / x
  return record(out, "log", {x}, [cx](const Tensor& g) -> std::vector<Tensor> { return {div(g, cx)}; });
}

Tensor sqrt(const Tensor& x) {
  Tensor out = unary_forward(UnaryOp::Sqrt, x, 0.0, "sqrt");
  Tensor y = out.detach();
  // d(sqrt x) = g / (2 sqrt x)
  return record(out, "sqrt", {x}, [y](const Tensor& g) -> std::vector<Tensor> { return {mul_scalar(div(g, y), 0.5)}; });
}

Tensor tanh(const Tensor& x) {
  Tensor out = unary_forward(UnaryOp::Tanh, x, 0.0, "tanh");
  Tensor y = out.detach();
  // d(tanh x) = g * (1 - tanh^2 x)
  return record(out, "tanh", {x},
                [y](const Tensor& g) -> std::vector<Tensor> { return {mul(g, add_scalar(neg(mul(y, y)), 1.0))}; });
}

static Tensor relu_of(const Tensor& x, bool in_place) {
  check_float(x, "relu");
  Tensor out = in_place ? x.detach() : Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_of(x).unary(UnaryOp::Relu, x.dtype(), x.data_ptr(), out.data_ptr(), x.numel(), 0.0);
  Tensor y = out.detach();
  // d(max(x, 0)) = g * [x > 0] = g * [y > 0], one pass (a NaN x, and so y, passes g, as PyTorch's
  // threshold_backward). Into g's own storage where nothing else holds g.
  return record(out, "relu", {x}, [y](const Tensor& g) -> std::vector<Tensor> {
    if (!detail::held_alone(g) || g.shape() != y.shape() || g.dtype() != y.dtype() || g.device() != y.device())
      return {binary_forward(BinaryOp::ReluBackward, g, y, "relu_backward")};
    const Strides s = contiguous_strides(g.shape());
    backend_of(g).binary(BinaryOp::ReluBackward, g.dtype(), g.data_ptr(), s, y.data_ptr(), s, g.data_ptr(), g.shape());
    return {g};
  });
}

Tensor relu(const Tensor& x) { return relu_of(x, false); }
Tensor relu(Tensor&& x) {
  const Tensor consumed = std::move(x);  // the caller's handle goes, so nothing sees the storage change
  return relu_of(consumed, detail::held_alone(consumed));
}

Tensor gelu(const Tensor& x) {
  // gelu(x) = x * Phi(x), Phi the standard normal CDF
  Tensor cdf = unary_forward(UnaryOp::NormalCdf, x, 0.0, "gelu");
  Tensor out = binary_forward(BinaryOp::Mul, x, cdf, "gelu");
  Tensor cx = x.detach();
  // d gelu = g * (Phi(x) + x * phi(x)),  phi the standard normal density
  return record(out, "gelu", {x}, [cx, cdf](const Tensor& g) -> std::vector<Tensor> {
    Tensor density = unary_forward(UnaryOp::NormalPdf, cx, 0.0, "gelu_backward");
    return {mul(g, add(cdf, mul(cx, density)))};
  });
}

}  // namespace qkv
