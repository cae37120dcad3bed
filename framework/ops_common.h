// framework/ops_common.h — small helpers shared by the ops_*.cpp files (argument checks and
// backend lookup). Not part of the public API.
#pragma once

#include <fmt/format.h>

#include <stdexcept>

#include "autograd.h"
#include "backend.h"
#include "ops.h"

namespace qkv::detail {

inline Backend& backend_of(const Tensor& t) { return backend_for(t.device()); }

inline void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) throw std::runtime_error(fmt::format("{}: input tensor is undefined", op));
}

inline void check_float(const Tensor& t, const char* op) {
  check_defined(t, op);
  if (t.dtype() == DType::I64)
    throw std::runtime_error(fmt::format("{}: expected a float32 or float64 tensor, got {}", op, t.describe()));
}

inline void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  if (a.device() != b.device())
    throw std::runtime_error(
        fmt::format("{}: tensors are on different devices: {} and {}", op, a.device().str(), b.device().str()));
}

// Same dtype and device, or a clear error naming both.
inline void check_pair(const Tensor& a, const Tensor& b, const char* op) {
  check_float(a, op);
  check_float(b, op);
  check_same_device(a, b, op);
  if (a.dtype() != b.dtype())
    throw std::runtime_error(
        fmt::format("{}: dtype mismatch: {} and {}", op, dtype_name(a.dtype()), dtype_name(b.dtype())));
}

// Whether `t` is the only handle on its tensor and its tensor the only one on its storage, all of
// which it spans: nothing else can see its values change, so an op may keep or update it in place
// (as PyTorch's AccumulateGrad keeps an incoming gradient that nothing else holds).
inline bool held_alone(const Tensor& t) {
  return t.use_count() == 1 && t.storage().use_count() == 1 && t.offset() == 0 &&
         t.storage()->nbytes == static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
}

// rotary's tables `turn` checked against x's rows and H-wide blocks (H = `width`; `op` names the
// caller) and made one row per row of x, (rows.., H/2) in x's dtype, without gradient (ops_nn.cpp).
RotaryTables rotary_rows_for(const Tensor& x, const RotaryTables& turn, int64_t width, const char* op);
// x's first `blocks` H-wide column blocks turned by such rows into out's (x's shape, or x itself),
// forward (sign 1) or back (-1); out's other columns are left as they are.
inline void turn_blocks(const Tensor& x, const RotaryTables& rows, int64_t blocks, double sign, const Tensor& out) {
  backend_of(x).rotary_rows(x.dtype(), x.data_ptr(), rows.cos.data_ptr(), rows.sin.data_ptr(), x.numel() / x.size(-1),
                            x.size(-1), rows.cos.size(-1), blocks, sign, out.data_ptr());
}

inline int64_t normalize_axis(int64_t axis, int64_t rank, const char* op) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw std::runtime_error(fmt::format("{}: axis {} out of range for a {}-d tensor", op, axis, rank));
  return a;
}

}  // namespace qkv::detail
