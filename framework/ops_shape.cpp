// framework/ops_shape.cpp — transpose, reshape/view, concat and slice, with their backwards.
// All of them are strided copies (or shared-storage views) on the backend.
#include "ops_common.h"

namespace qkv {
using namespace detail;

Tensor transpose(const Tensor& x) {
  check_defined(x, "transpose");
  if (x.dim() < 2) throw std::runtime_error("transpose: needs at least 2 dims, got " + shape_str(x.shape()));
  Shape out_shape = x.shape();
  std::swap(out_shape[out_shape.size() - 1], out_shape[out_shape.size() - 2]);
  Strides in_strides = contiguous_strides(x.shape());
  std::swap(in_strides[in_strides.size() - 1], in_strides[in_strides.size() - 2]);
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  backend_of(x).strided_copy(x.dtype(), x.data_ptr(), in_strides, out.data_ptr(), contiguous_strides(out_shape),
                             out_shape);
  // d(x^T) = g^T
  return record(out, "transpose", {x}, [](const Tensor& g) -> std::vector<Tensor> { return {transpose(g)}; });
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  check_defined(x, "reshape");
  Shape resolved = shape;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer_at >= 0) throw std::runtime_error("reshape: only one dim can be -1 in " + shape_str(shape));
      infer_at = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      throw std::runtime_error("reshape: invalid dim in " + shape_str(shape));
    } else {
      known *= shape[i];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || x.numel() % known != 0)
      throw std::runtime_error(
          fmt::format("reshape: cannot reshape {} into {}", shape_str(x.shape()), shape_str(shape)));
    resolved[infer_at] = x.numel() / known;
  }
  if (shape_numel(resolved) != x.numel())
    throw std::runtime_error(fmt::format("reshape: cannot reshape {} ({} elements) into {}", shape_str(x.shape()),
                                         x.numel(), shape_str(shape)));
  Tensor out = x.view_as_shape(resolved);
  const Shape x_shape = x.shape();
  return record(out, "reshape", {x},
                [x_shape](const Tensor& g) -> std::vector<Tensor> { return {reshape(g, x_shape)}; });
}

Tensor view(const Tensor& x, const Shape& shape) { return reshape(x, shape); }

Tensor slice(const Tensor& x, int64_t axis, int64_t begin, int64_t end) {
  check_defined(x, "slice");
  const int64_t a = normalize_axis(axis, x.dim(), "slice");
  const int64_t n = x.shape()[a];
  if (begin < 0 || end < begin || end > n)
    throw std::runtime_error(
        fmt::format("slice: range [{}, {}) out of bounds for axis {} of {}", begin, end, axis, shape_str(x.shape())));
  Shape out_shape = x.shape();
  out_shape[a] = end - begin;
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  const Strides in_strides = contiguous_strides(x.shape());
  const size_t elem = dtype_size(x.dtype());
  backend_of(x).strided_copy(x.dtype(), static_cast<const char*>(x.data_ptr()) + begin * in_strides[a] * elem,
                             in_strides, out.data_ptr(), contiguous_strides(out_shape), out_shape);
  const Shape x_shape = x.shape();
  // d slice = g placed back into a zero tensor of x's shape
  return record(out, "slice", {x}, [x_shape, a, begin](const Tensor& g) -> std::vector<Tensor> {
    Tensor d_x = Tensor::zeros(x_shape, g.dtype(), g.device());
    d_x.write_at_(a, begin, g);
    return {d_x};
  });
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) throw std::runtime_error("concat: no tensors given");
  check_defined(xs[0], "concat");
  const int64_t a = normalize_axis(axis, xs[0].dim(), "concat");
  Shape out_shape = xs[0].shape();
  out_shape[a] = 0;
  for (const Tensor& x : xs) {
    check_defined(x, "concat");
    if (x.dtype() != xs[0].dtype() || x.device() != xs[0].device())
      throw std::runtime_error("concat: mixed tensors " + xs[0].describe() + " and " + x.describe());
    Shape expect = xs[0].shape(), got = x.shape();
    if (expect.size() != got.size())
      throw std::runtime_error(fmt::format("concat: ranks differ: {} and {}", shape_str(expect), shape_str(got)));
    expect[a] = got[a] = 0;
    if (expect != got)
      throw std::runtime_error(fmt::format("concat: shapes {} and {} differ outside axis {}", shape_str(xs[0].shape()),
                                           shape_str(x.shape()), axis));
    out_shape[a] += x.shape()[a];
  }
  Tensor out = Tensor::empty(out_shape, xs[0].dtype(), xs[0].device());
  std::vector<int64_t> starts, sizes;
  for (const Tensor& x : xs) {
    starts.push_back(sizes.empty() ? 0 : starts.back() + sizes.back());
    sizes.push_back(x.shape()[a]);
    out.write_at_(a, starts.back(), x);
  }
  // d concat = the matching slices of g
  return record(out, "concat", xs, [a, starts, sizes](const Tensor& g) -> std::vector<Tensor> {
    std::vector<Tensor> grads;
    for (size_t i = 0; i < starts.size(); ++i) grads.push_back(slice(g, a, starts[i], starts[i] + sizes[i]));
    return grads;
  });
}

}  // namespace qkv
