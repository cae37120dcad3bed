// framework/scalar_formulas.h — each scalar formula the backends compute, written once and
// compiled by both g++ (the CPU backend) and nvcc (the CUDA kernels): the unary and binary
// elementwise functions (their formulas listed in elementwise_ops.def), the NaN-propagating max and
// argmax, one LayerNorm row forward and backward, one rotary pair, one Adam/AdamW step on one entry;
// and, for the host side of both backends, dimension merging and the dtype dispatch.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend.h"

#if defined(__CUDACC__)
#define QKV_FORMULA __host__ __device__ __forceinline__
#else
#define QKV_FORMULA inline __attribute__((always_inline))
#endif

namespace qkv::formula {

// The row of the m-th dense row of gather_rows or scatter_add_rows (RowRuns in backend.h).
QKV_FORMULA int64_t dense_row(RowRuns rows, int64_t m) {
  return rows.run == 0 ? m : (m / rows.run) * rows.stride + m % rows.run;
}

// The C maths functions in the argument's own precision (expf for float, exp for double), the
// same calls on the host and on the device.
QKV_FORMULA float exp_of(float x) { return ::expf(x); }
QKV_FORMULA double exp_of(double x) { return ::exp(x); }
QKV_FORMULA float log_of(float x) { return ::logf(x); }
QKV_FORMULA double log_of(double x) { return ::log(x); }
QKV_FORMULA float sqrt_of(float x) { return ::sqrtf(x); }
QKV_FORMULA double sqrt_of(double x) { return ::sqrt(x); }
QKV_FORMULA float tanh_of(float x) { return ::tanhf(x); }
QKV_FORMULA double tanh_of(double x) { return ::tanh(x); }
QKV_FORMULA float erf_of(float x) { return ::erff(x); }
QKV_FORMULA double erf_of(double x) { return ::erf(x); }
QKV_FORMULA float pow_of(float x, float s) { return ::powf(x, s); }
QKV_FORMULA double pow_of(double x, double s) { return ::pow(x, s); }

// out = op(x), with `s` the scalar of the *Scalar ops; a op b. One case per line of
// elementwise_ops.def. With `op` a compile-time constant the switch folds away (the CPU backend's
// loops rely on that to vectorise).
template <typename T>
QKV_FORMULA T unary(UnaryOp op, T x, T s) {
  switch (op) {
// (clang-format would join the include to the macro body, here and wherever the list is expanded)
// clang-format off
#define QKV_UNARY_OP(name, formula) \
  case UnaryOp::name: return formula;
#include "elementwise_ops.def"
    // clang-format on
  }
  return x;
}

template <typename T>
QKV_FORMULA T binary(BinaryOp op, T a, T b) {
  switch (op) {
// clang-format off
#define QKV_BINARY_OP(name, formula) \
  case BinaryOp::name: return formula;
#include "elementwise_ops.def"
    // clang-format on
  }
  return a;
}

// max that propagates NaN, as PyTorch's max and softmax do: once a NaN is seen, it stays
// (std::max never takes a NaN second argument, which made an all-NaN softmax row look masked).
template <typename T>
QKV_FORMULA T nan_max(T a, T b) {
  return (a < b || b != b) ? b : a;
}

// LayerNorm of N consecutive rows of `width` entries (each `width` after the last), as PyTorch's
// (biased variance), each row on its own:
//   mean = sum(x) / width,  rstd = 1 / sqrt(sum((x - mean)^2) / width + eps)
//   x_hat = (x - mean) * rstd,  out = x_hat * w + b  (w, b may be null: no affine part)
// With a residual, x is first replaced by x + residual (rounded to T, as the add op rounds it),
// held in `out` until the last loop overwrites each entry after reading it.
// Sums accumulate in double; every entry is computed in the row's own precision. The N rows' sums
// run side by side, each in its own order: N independent chains of additions, which the CPU
// overlaps, and every row's bits are those of the one-row form (N = 1, layer_norm_row).
template <int N, typename T>
QKV_FORMULA void layer_norm_rows_n(const T* x, const T* residual, const T* w, const T* b, int64_t width, double eps,
                                   T* out, T* x_hat, T* rstd) {
  if (residual) {
    for (int64_t c = 0; c < N * width; ++c) out[c] = x[c] + residual[c];
    x = out;
  }
  double total[N] = {};
  for (int64_t c = 0; c < width; ++c)
    for (int r = 0; r < N; ++r) total[r] += x[r * width + c];
  T mean[N];
  for (int r = 0; r < N; ++r) mean[r] = static_cast<T>(total[r] / static_cast<double>(width));
  double squares[N] = {};
  for (int64_t c = 0; c < width; ++c)
    for (int r = 0; r < N; ++r) {
      const T centred = x[r * width + c] - mean[r];
      squares[r] += static_cast<double>(centred) * centred;
    }
  for (int r = 0; r < N; ++r) {
    const T rs = static_cast<T>(1.0 / sqrt_of(squares[r] / static_cast<double>(width) + eps));
    rstd[r] = rs;
    for (int64_t c = r * width; c < (r + 1) * width; ++c) {
      const T h = (x[c] - mean[r]) * rs;
      x_hat[c] = h;
      T y = w ? h * w[c - r * width] : h;
      if (b) y += b[c - r * width];
      out[c] = y;
    }
  }
}

template <typename T>
QKV_FORMULA void layer_norm_row(const T* x, const T* residual, const T* w, const T* b, int64_t width, double eps,
                                T* out, T* x_hat, T* rstd) {
  layer_norm_rows_n<1>(x, residual, w, b, width, eps, out, x_hat, rstd);
}

// The input gradient of layer_norm_rows_n over the same N rows, from the upstream gradient g, x_hat
// and rstd (N values):
//   d_x_hat = g * w,  d_x = rstd * (d_x_hat - mean(d_x_hat) - x_hat * mean(d_x_hat * x_hat))
// (the weight and bias gradients are column sums over rows; the op composes them).
template <int N, typename T>
QKV_FORMULA void layer_norm_backward_rows_n(const T* g, const T* x_hat, const T* rstd, const T* w, int64_t width,
                                            T* d_x) {
  double sum_d[N] = {}, sum_dh[N] = {};
  for (int64_t c = 0; c < width; ++c)
    for (int r = 0; r < N; ++r) {
      const T d = w ? g[r * width + c] * w[c] : g[r * width + c];
      sum_d[r] += d;
      sum_dh[r] += static_cast<double>(d) * x_hat[r * width + c];
    }
  for (int r = 0; r < N; ++r) {
    const T mean_d = static_cast<T>(sum_d[r] / static_cast<double>(width));
    const T mean_dh = static_cast<T>(sum_dh[r] / static_cast<double>(width));
    for (int64_t c = r * width; c < (r + 1) * width; ++c) {
      const T d = w ? g[c] * w[c - r * width] : g[c];
      d_x[c] = rstd[r] * (d - mean_d - x_hat[c] * mean_dh);
    }
  }
}

template <typename T>
QKV_FORMULA void layer_norm_backward_row(const T* g, const T* x_hat, T rstd, const T* w, int64_t width, T* d_x) {
  layer_norm_backward_rows_n<1>(g, x_hat, &rstd, w, width, d_x);
}

// The first of n entries `stride` apart that holds their largest value (a NaN beats any number;
// the first NaN stays), with that value.
template <typename T>
struct Argmax {
  T value;
  int64_t index;
};
template <typename T>
QKV_FORMULA Argmax<T> argmax_strided(const T* x, int64_t n, int64_t stride) {
  Argmax<T> best{x[0], 0};
  for (int64_t j = 1; j < n; ++j) {
    const T candidate = x[j * stride];
    if (candidate > best.value || (candidate != candidate && best.value == best.value)) best = {candidate, j};
  }
  return best;
}

// One rotary pair (x1, x2) turned by the angle whose cos and sin are c and s, as the composed
// [x1 c - x2 s, x2 c + x1 s] rounds it, product by product.
template <typename T>
QKV_FORMULA void rotate_pair(T x1, T x2, T c, T s, T& y1, T& y2) {
  const T a = x1 * c, b = x2 * s, d = x2 * c, e = x1 * s;
  y1 = a - b;
  y2 = d + e;
}

// One Adam or AdamW step on one entry, in the tensor's precision and PyTorch's order:
//   g = grad, plus weight_decay * param unless decoupled;  param *= 1 - lr * weight_decay if decoupled
//   m = m * beta1 + (1 - beta1) * g;   v = v * beta2 + (1 - beta2) * g * g
//   param += -step_size * (m / (sqrt(v) / sqrt_bias_correction2 + eps))
template <typename T>
struct AdamEntry {
  T weight_decay, decay, beta1, one_minus_beta1, beta2, one_minus_beta2, sqrt_bias_correction2, eps, minus_step;
  bool l2, shrink;

  static AdamEntry from(const AdamStep& s) {
    const auto t = [](double x) { return static_cast<T>(x); };
    const bool decay = s.weight_decay != 0;
    return {t(s.weight_decay),   t(1.0 - s.lr * s.weight_decay), t(s.beta1), t(1.0 - s.beta1), t(s.beta2),
            t(1.0 - s.beta2),    t(s.sqrt_bias_correction2),     t(s.eps),   t(-s.step_size),  !s.decoupled && decay,
            s.decoupled && decay};
  }

  // One entry with the weight-decay kind fixed at compile time (a loop over apply_as has no
  // branches, so it vectorises); apply chooses it at run time.
  template <bool L2, bool Shrink>
  QKV_FORMULA void apply_as(T& param, T grad, T& exp_avg, T& exp_avg_sq) const {
    T p = param, g = grad;
    if constexpr (L2) g = g + weight_decay * p;
    if constexpr (Shrink) p = p * decay;
    const T m = exp_avg * beta1 + one_minus_beta1 * g;
    const T v = exp_avg_sq * beta2 + one_minus_beta2 * g * g;
    exp_avg = m;
    exp_avg_sq = v;
    param = p + minus_step * (m / (sqrt_of(v) / sqrt_bias_correction2 + eps));
  }
  QKV_FORMULA void apply(T& param, T grad, T& exp_avg, T& exp_avg_sq) const {
    if (l2)
      apply_as<true, false>(param, grad, exp_avg, exp_avg_sq);
    else if (shrink)
      apply_as<false, true>(param, grad, exp_avg, exp_avg_sq);
    else
      apply_as<false, false>(param, grad, exp_avg, exp_avg_sq);
  }
};

// ---- host side of both backends ----

// An index space read through `sets` stride sets, with size-1 dims dropped and neighbouring dims
// merged where they are contiguous in every set, so that inner loops run as long as possible.
struct MergedDims {
  Shape shape;
  std::vector<Strides> strides;  // one per set, each as long as shape
};
inline MergedDims merge_dimensions(const Shape& shape, const std::vector<const Strides*>& sets) {
  MergedDims merged;
  merged.strides.resize(sets.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool mergeable = !merged.shape.empty();
    for (size_t k = 0; k < sets.size() && mergeable; ++k)
      mergeable = merged.strides[k].back() == (*sets[k])[d] * shape[d];
    if (mergeable) {
      merged.shape.back() *= shape[d];
      for (size_t k = 0; k < sets.size(); ++k) merged.strides[k].back() = (*sets[k])[d];
    } else {
      merged.shape.push_back(shape[d]);
      for (size_t k = 0; k < sets.size(); ++k) merged.strides[k].push_back((*sets[k])[d]);
    }
  }
  return merged;
}

// Calls body(float{}), body(double{}) or body(int64_t{}) for the dtype.
template <typename Body>
void dispatch_dtype(DType dtype, Body&& body) {
  if (dtype == DType::F32)
    body(float{});
  else if (dtype == DType::F64)
    body(double{});
  else
    body(int64_t{});
}

// Calls body(float{}) or body(double{}) for a float dtype; any other names the backend and call.
template <typename Body>
void dispatch_float(DType dtype, const char* backend, const char* what, Body&& body) {
  if (dtype == DType::F32)
    body(float{});
  else if (dtype == DType::F64)
    body(double{});
  else
    throw std::runtime_error(std::string(backend) + " backend: " + what + " does not support " + dtype_name(dtype));
}

}  // namespace qkv::formula
