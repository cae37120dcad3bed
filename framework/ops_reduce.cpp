// framework/ops_reduce.cpp — sum, mean and max over one axis or all elements, with backwards.
#include "ops_common.h"

namespace qkv {
using namespace detail;

static Shape keepdim_shape(const Shape& shape, int64_t axis) {
  Shape s = shape;
  s[axis] = 1;
  return s;
}

static Shape drop_axis(const Shape& shape, int64_t axis) {
  Shape s = shape;
  s.erase(s.begin() + axis);
  return s;
}

Tensor sum(const Tensor& x) {
  check_float(x, "sum");
  Tensor all = sum_to(x, Shape(x.dim(), 1));  // differentiable reduction to (1, ..., 1)
  return reshape(all, {});
}

Tensor sum(const Tensor& x, int64_t axis, bool keepdim) {
  check_float(x, "sum");
  const int64_t a = normalize_axis(axis, x.dim(), "sum");
  Tensor kept = sum_to(x, keepdim_shape(x.shape(), a));
  return keepdim ? kept : reshape(kept, drop_axis(x.shape(), a));
}

Tensor mean(const Tensor& x) {
  if (x.numel() == 0) throw std::runtime_error("mean: tensor " + x.describe() + " is empty");
  return mul_scalar(sum(x), 1.0 / static_cast<double>(x.numel()));
}

Tensor mean(const Tensor& x, int64_t axis, bool keepdim) {
  const int64_t a = normalize_axis(axis, x.dim(), "mean");
  if (x.shape()[a] == 0)
    throw std::runtime_error("mean: axis " + std::to_string(axis) + " of " + x.describe() + " is empty");
  return mul_scalar(sum(x, a, keepdim), 1.0 / static_cast<double>(x.shape()[a]));
}

MaxResult max_with_indices(const Tensor& x, int64_t axis, bool keepdim) {
  check_float(x, "max");
  const int64_t a = normalize_axis(axis, x.dim(), "max");
  if (x.shape()[a] == 0)
    throw std::runtime_error("max: axis " + std::to_string(axis) + " of " + x.describe() + " is empty");
  const Shape x_shape = x.shape();  // viewed as (outer, n, inner) around the axis
  const int64_t outer = shape_numel(Shape(x_shape.begin(), x_shape.begin() + a)), n = x_shape[a];
  const int64_t inner = shape_numel(Shape(x_shape.begin() + a + 1, x_shape.end()));
  const Shape kept = keepdim_shape(x_shape, a);
  Tensor values = Tensor::empty(kept, x.dtype(), x.device());
  Tensor indices = Tensor::empty(kept, DType::I64, x.device());
  backend_of(x).max_along(x.dtype(), x.data_ptr(), outer, n, inner, values.data_ptr(), indices.data<int64_t>());
  // d max = g routed to the (first) arg-max position
  values = record(values, "max", {x}, [x_shape, outer, n, inner, indices](const Tensor& g) -> std::vector<Tensor> {
    Tensor d_x = Tensor::zeros(x_shape, g.dtype(), g.device());
    backend_for(g.device())
        .put_along_add(g.dtype(), d_x.data_ptr(), outer, n, inner, indices.data<int64_t>(), g.data_ptr());
    return {d_x};
  });
  if (keepdim) return {values, indices};
  return {reshape(values, drop_axis(x_shape, a)), indices.view_as_shape(drop_axis(x_shape, a))};
}

Tensor max(const Tensor& x, int64_t axis, bool keepdim) { return max_with_indices(x, axis, keepdim).values; }

}  // namespace qkv
