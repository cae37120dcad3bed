// framework/cpu/cpu_backend.cpp — the CPU backend: OpenBLAS gemm plus plain loops, in float32
// and float64. Loops run in a fixed order, so results are bit-for-bit reproducible.
#include <cblas.h>
#include <malloc.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "../backend.h"
#include "../scalar_formulas.h"
#include "cpu_attention.h"

namespace qkv {

namespace {

std::atomic<int64_t> live_bytes{0}, peak_bytes{0};  // tensor storage (see cpu_memory_use)

// Visits every index of `shape` row by row (the last dim is the inner loop). For each row it
// calls fn(base offsets..., inner length, inner strides...) with up to three stride sets, after
// formula::merge_dimensions (size-1 dims dropped, contiguous neighbours merged).
template <size_t N, typename Fn>
void for_each_row(const Shape& full_shape, const std::array<const Strides*, N>& full_strides, Fn&& fn) {
  if (shape_numel(full_shape) == 0) return;
  const formula::MergedDims merged =
      formula::merge_dimensions(full_shape, std::vector<const Strides*>(full_strides.begin(), full_strides.end()));
  const Shape& shape = merged.shape;
  const std::vector<Strides>& strides = merged.strides;
  const size_t rank = shape.size();
  std::array<int64_t, N> base{};
  std::array<int64_t, N> inner_stride{};
  if (rank == 0) {
    fn(base, int64_t{1}, inner_stride);
    return;
  }
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][rank - 1];
  const int64_t inner = shape[rank - 1];
  std::vector<int64_t> index(rank, 0);
  while (true) {
    fn(base, inner, inner_stride);
    // advance the outer index (all dims but the last), odometer style
    size_t d = rank - 1;
    while (d-- > 0) {
      ++index[d];
      for (size_t k = 0; k < N; ++k) base[k] += strides[k][d];
      if (index[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= strides[k][d] * shape[d];
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

// One unary op with Op fixed at compile time: formula::unary's switch folds away, so each loop
// below is branch-free and vectorisable.
template <UnaryOp Op, typename T>
void unary_fixed(const T* in, T* out, int64_t n, T s) {
  for (int64_t i = 0; i < n; ++i) out[i] = formula::unary(Op, in[i], s);
}

template <typename T>
void unary_loop(UnaryOp op, const T* in, T* out, int64_t n, T s) {
  switch (op) {
#define QKV_UNARY_CASE(name) \
  case UnaryOp::name: return unary_fixed<UnaryOp::name, T>(in, out, n, s);
    QKV_UNARY_CASE(Neg) QKV_UNARY_CASE(Exp) QKV_UNARY_CASE(Log) QKV_UNARY_CASE(Sqrt)
    QKV_UNARY_CASE(Tanh) QKV_UNARY_CASE(Relu) QKV_UNARY_CASE(Step) QKV_UNARY_CASE(NormalCdf)
    QKV_UNARY_CASE(NormalPdf) QKV_UNARY_CASE(PowScalar) QKV_UNARY_CASE(MulScalar) QKV_UNARY_CASE(AddScalar)
#undef QKV_UNARY_CASE
  }
}

template <typename T, typename F>
void binary_loop(const T* a, const Strides& sa, const T* b, const Strides& sb, T* out,
                 const Shape& shape, F f) {
  const Strides so = contiguous_strides(shape);
  for_each_row<3>(shape, {&sa, &sb, &so}, [&](auto base, int64_t n, auto step) {
    const T* pa = a + base[0];
    const T* pb = b + base[1];
    T* po = out + base[2];
    if (step[0] == 1 && step[1] == 1) {
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
    } else if (step[0] == 1 && step[1] == 0) {
      const T vb = *pb;
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], vb);
    } else {
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i * step[0]], pb[i * step[1]]);
    }
  });
}

template <typename T>
void binary_typed(BinaryOp op, const T* a, const Strides& sa, const T* b, const Strides& sb,
                  T* out, const Shape& shape) {
  // Op fixed per loop (formula::binary's switch folds away inside each).
  switch (op) {
#define QKV_BINARY_CASE(name) \
  case BinaryOp::name: return binary_loop(a, sa, b, sb, out, shape, [](T x, T y) { return formula::binary(BinaryOp::name, x, y); });
    QKV_BINARY_CASE(Add) QKV_BINARY_CASE(Sub) QKV_BINARY_CASE(Mul) QKV_BINARY_CASE(Div)
#undef QKV_BINARY_CASE
  }
}

template <typename T>
void reduce_sum_typed(const T* in, const Shape& in_shape, T* out, const Shape& out_shape) {
  const int64_t n_out = shape_numel(out_shape);
  // Sums accumulate in double; the order is fixed (row-major over the input).
  std::vector<double> acc(static_cast<size_t>(n_out), 0.0);
  const Strides s_in = contiguous_strides(in_shape);
  const Strides s_out = broadcast_strides(out_shape, in_shape);
  for_each_row<2>(in_shape, {&s_in, &s_out}, [&](auto base, int64_t n, auto step) {
    const T* p = in + base[0];
    double* q = acc.data() + base[1];
    if (step[1] == 0) {
      double total = 0.0;
      for (int64_t i = 0; i < n; ++i) total += p[i * step[0]];
      *q += total;
    } else {
      for (int64_t i = 0; i < n; ++i) q[i * step[1]] += p[i * step[0]];
    }
  });
  for (int64_t i = 0; i < n_out; ++i) out[i] = static_cast<T>(acc[i]);
}

template <typename T>
void softmax_typed(const T* in, T* out, int64_t rows, int64_t cols, bool log) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = in + r * cols;
    T* y = out + r * cols;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t c = 0; c < cols; ++c) m = formula::nan_max(m, x[c]);  // a NaN anywhere makes the row NaN
    if (m == -std::numeric_limits<T>::infinity()) {  // fully masked row: zeros, not NaN
      for (int64_t c = 0; c < cols; ++c) y[c] = T(0);
      continue;
    }
    // exp in the tensor's own precision (as PyTorch does), the row sum accumulated in double
    double total = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const T e = std::exp(x[c] - m);
      total += e;
      if (!log) y[c] = e;
    }
    if (log) {
      const T shift = m + static_cast<T>(std::log(total));
      for (int64_t c = 0; c < cols; ++c) y[c] = x[c] - shift;
    } else {
      const T inv = static_cast<T>(1.0 / total);
      for (int64_t c = 0; c < cols; ++c) y[c] *= inv;
    }
  }
}

template <typename T>
void adam_update_typed(T* param, const T* grad, T* m, T* v, int64_t n, const AdamStep& s) {
  const formula::AdamEntry<T> adam = formula::AdamEntry<T>::from(s);
  for (int64_t i = 0; i < n; ++i) {  // through locals, so that the loop vectorises (no aliasing)
    T p = param[i], mi = m[i], vi = v[i];
    adam.apply(p, grad[i], mi, vi);
    param[i] = p;
    m[i] = mi;
    v[i] = vi;
  }
}

template <typename T>
void strided_copy_typed(const T* in, const Strides& si, T* out, const Strides& so, const Shape& shape) {
  for_each_row<2>(shape, {&si, &so}, [&](auto base, int64_t n, auto step) {
    const T* p = in + base[0];
    T* q = out + base[1];
    if (step[0] == 1 && step[1] == 1) std::memcpy(q, p, n * sizeof(T));
    else for (int64_t i = 0; i < n; ++i) q[i * step[1]] = p[i * step[0]];
  });
}

template <typename Body>
void dispatch_float(DType dtype, const char* what, Body&& body) {
  formula::dispatch_float(dtype, "cpu", what, body);
}

class CpuBackend final : public Backend {
 public:
  CpuBackend() {
    // Tensors are allocated and freed constantly. By default glibc serves blocks over 128 KiB
    // with mmap and returns them on free, so every activation costs system calls and fresh
    // zeroed pages. Keeping them in the heap makes a freed block reusable at once.
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
  std::string name() const override { return "cpu"; }

  void* allocate(size_t nbytes) override {
    void* p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
    if (!p) throw std::runtime_error(fmt::format("cpu: out of memory allocating {} bytes", nbytes));
    const int64_t now = live_bytes.fetch_add(static_cast<int64_t>(malloc_usable_size(p))) +
                        static_cast<int64_t>(malloc_usable_size(p));
    int64_t peak = peak_bytes.load();
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
    }
    return p;
  }
  void release(void* ptr) override {
    if (!ptr) return;
    live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(ptr)));
    std::free(ptr);
  }
  void copy_to_host(void* dst, const void* src, size_t n) override { std::memcpy(dst, src, n); }
  void copy_from_host(void* dst, const void* src, size_t n) override { std::memcpy(dst, src, n); }
  void copy(void* dst, const void* src, size_t n) override { std::memmove(dst, src, n); }

  void fill(DType dtype, void* out, int64_t n, double value) override {
    if (dtype == DType::I64) {
      auto* p = static_cast<int64_t*>(out);
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(value);
      return;
    }
    dispatch_float(dtype, "fill", [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(out);
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(value);
    });
  }

  void cast(DType from, const void* in, DType to, void* out, int64_t n) override {
    auto read = [&](int64_t i) -> double {
      switch (from) {
        case DType::F32: return static_cast<const float*>(in)[i];
        case DType::F64: return static_cast<const double*>(in)[i];
        case DType::I64: return static_cast<double>(static_cast<const int64_t*>(in)[i]);
      }
      return 0.0;
    };
    if (from == to) {
      std::memcpy(out, in, n * dtype_size(to));
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      switch (to) {
        case DType::F32: static_cast<float*>(out)[i] = static_cast<float>(read(i)); break;
        case DType::F64: static_cast<double*>(out)[i] = read(i); break;
        case DType::I64: static_cast<int64_t*>(out)[i] = static_cast<int64_t>(read(i)); break;
      }
    }
  }

  void unary(UnaryOp op, DType dtype, const void* in, void* out, int64_t n, double s) override {
    dispatch_float(dtype, "unary", [&](auto zero) {
      using T = decltype(zero);
      unary_loop<T>(op, static_cast<const T*>(in), static_cast<T*>(out), n, static_cast<T>(s));
    });
  }

  void binary(BinaryOp op, DType dtype, const void* a, const Strides& sa, const void* b,
              const Strides& sb, void* out, const Shape& shape) override {
    dispatch_float(dtype, "binary", [&](auto zero) {
      using T = decltype(zero);
      binary_typed<T>(op, static_cast<const T*>(a), sa, static_cast<const T*>(b), sb,
                      static_cast<T*>(out), shape);
    });
  }

  void masked_fill(DType dtype, const void* in, const void* keep, const Strides& keep_strides,
                   double value, void* out, const Shape& shape) override {
    dispatch_float(dtype, "masked_fill", [&](auto zero) {
      using T = decltype(zero);
      const Strides s = contiguous_strides(shape);
      const T* x = static_cast<const T*>(in);
      const T* k = static_cast<const T*>(keep);
      T* y = static_cast<T*>(out);
      const T fill_value = static_cast<T>(value);
      for_each_row<2>(shape, {&s, &keep_strides}, [&](auto base, int64_t n, auto step) {
        for (int64_t i = 0; i < n; ++i)
          y[base[0] + i] = k[base[1] + i * step[1]] != T(0) ? x[base[0] + i] : fill_value;
      });
    });
  }

  void strided_copy(DType dtype, const void* in, const Strides& si, void* out, const Strides& so,
                    const Shape& shape) override {
    switch (dtype_size(dtype)) {
      case 4: return strided_copy_typed(static_cast<const float*>(in), si, static_cast<float*>(out), so, shape);
      case 8: return strided_copy_typed(static_cast<const double*>(in), si, static_cast<double*>(out), so, shape);
    }
  }

  void reduce_sum(DType dtype, const void* in, const Shape& in_shape, void* out, const Shape& out_shape) override {
    dispatch_float(dtype, "reduce_sum", [&](auto zero) {
      using T = decltype(zero);
      reduce_sum_typed<T>(static_cast<const T*>(in), in_shape, static_cast<T*>(out), out_shape);
    });
  }

  void max_along(DType dtype, const void* in, int64_t outer, int64_t n, int64_t inner,
                 void* out_values, int64_t* out_indices) override {
    dispatch_float(dtype, "max_along", [&](auto zero) {
      using T = decltype(zero);
      const T* x = static_cast<const T*>(in);
      T* v = static_cast<T*>(out_values);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t best = 0;
          T best_value = x[o * n * inner + i];
          for (int64_t j = 1; j < n; ++j) {
            const T candidate = x[(o * n + j) * inner + i];
            if (candidate > best_value || (std::isnan(candidate) && !std::isnan(best_value))) {
              best_value = candidate;
              best = j;
            }
          }
          v[o * inner + i] = best_value;
          out_indices[o * inner + i] = best;
        }
    });
  }

  void take_along(DType dtype, const void* x, int64_t outer, int64_t n, int64_t inner,
                  const int64_t* index, void* out) override {
    dispatch_float(dtype, "take_along", [&](auto zero) {
      using T = decltype(zero);
      const T* p = static_cast<const T*>(x);
      T* q = static_cast<T*>(out);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i)
          q[o * inner + i] = p[(o * n + index[o * inner + i]) * inner + i];
    });
  }

  void put_along_add(DType dtype, void* x, int64_t outer, int64_t n, int64_t inner,
                     const int64_t* index, const void* values) override {
    dispatch_float(dtype, "put_along_add", [&](auto zero) {
      using T = decltype(zero);
      T* p = static_cast<T*>(x);
      const T* v = static_cast<const T*>(values);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i)
          p[(o * n + index[o * inner + i]) * inner + i] += v[o * inner + i];
    });
  }

  void gather_rows(DType dtype, const void* table, int64_t width, const int64_t* index,
                   int64_t count, void* out) override {
    const size_t row_bytes = static_cast<size_t>(width) * dtype_size(dtype);
    for (int64_t m = 0; m < count; ++m)
      std::memcpy(static_cast<char*>(out) + m * row_bytes,
                  static_cast<const char*>(table) + index[m] * row_bytes, row_bytes);
  }

  void scatter_add_rows(DType dtype, void* table, int64_t width, const int64_t* index,
                        int64_t count, const void* values) override {
    dispatch_float(dtype, "scatter_add_rows", [&](auto zero) {
      using T = decltype(zero);
      T* t = static_cast<T*>(table);
      const T* v = static_cast<const T*>(values);
      for (int64_t m = 0; m < count; ++m) {
        T* row = t + index[m] * width;
        const T* src = v + m * width;
        for (int64_t d = 0; d < width; ++d) row[d] += src[d];
      }
    });
  }

  void check_indices(const IndexCheck& check, const int64_t* index, int64_t count, int64_t* safe,
                     DType valid_dtype, void* valid) override {
    for (int64_t i = 0; i < count; ++i) {
      const int64_t v = index[i];
      if (check.has_ignore && v == check.ignore) continue;
      if (v < 0 || v >= check.limit)
        throw std::runtime_error(fmt::format("{} {} out of range for {}", check.what, v, check.range));
    }
    for (int64_t i = 0; i < count; ++i) {
      const bool ignored = check.has_ignore && index[i] == check.ignore;
      safe[i] = ignored ? 0 : index[i];
    }
    if (!valid) return;
    dispatch_float(valid_dtype, "check_indices", [&](auto zero) {
      using T = decltype(zero);
      T* out = static_cast<T*>(valid);
      for (int64_t i = 0; i < count; ++i) out[i] = check.has_ignore && index[i] == check.ignore ? T(0) : T(1);
    });
  }

  void adam_update(DType dtype, void* param, const void* grad, void* exp_avg, void* exp_avg_sq, int64_t n,
                   const AdamStep& s) override {
    dispatch_float(dtype, "adam_update", [&](auto zero) {
      using T = decltype(zero);
      adam_update_typed<T>(static_cast<T*>(param), static_cast<const T*>(grad), static_cast<T*>(exp_avg),
                           static_cast<T*>(exp_avg_sq), n, s);
    });
  }

  void softmax_rows(DType dtype, const void* in, void* out, int64_t rows, int64_t cols,
                    bool log) override {
    dispatch_float(dtype, "softmax", [&](auto zero) {
      using T = decltype(zero);
      softmax_typed<T>(static_cast<const T*>(in), static_cast<T*>(out), rows, cols, log);
    });
  }

  void attention_forward(DType dtype, const AttentionShape& shape, const void* q, const void* k, const void* v,
                         void* out, void* lse) override {
    cpu::attention_forward(dtype, shape, q, k, v, out, lse);
  }
  void attention_backward(DType dtype, const AttentionShape& shape, const void* q, const void* k, const void* v,
                          const void* out, const void* d_out, const void* lse, void* d_q, void* d_k,
                          void* d_v) override {
    cpu::attention_backward(dtype, shape, q, k, v, out, d_out, lse, d_q, d_k, d_v);
  }

  void gemm_batched(DType dtype, bool ta, bool tb, int64_t batch, int64_t M, int64_t N, int64_t K,
                    double alpha, const void* A, int64_t stride_a, const void* B, int64_t stride_b,
                    double beta, void* C, int64_t stride_c) override {
    if (M == 0 || N == 0) return;
    const CBLAS_TRANSPOSE op_a = ta ? CblasTrans : CblasNoTrans;
    const CBLAS_TRANSPOSE op_b = tb ? CblasTrans : CblasNoTrans;
    const int lda = static_cast<int>(ta ? M : K);
    const int ldb = static_cast<int>(tb ? K : N);
    const int ldc = static_cast<int>(N);
    for (int64_t b = 0; b < batch; ++b) {
      if (dtype == DType::F32) {
        cblas_sgemm(CblasRowMajor, op_a, op_b, M, N, K, static_cast<float>(alpha),
                    static_cast<const float*>(A) + b * stride_a, std::max(lda, 1),
                    static_cast<const float*>(B) + b * stride_b, std::max(ldb, 1),
                    static_cast<float>(beta), static_cast<float*>(C) + b * stride_c, ldc);
      } else if (dtype == DType::F64) {
        cblas_dgemm(CblasRowMajor, op_a, op_b, M, N, K, alpha,
                    static_cast<const double*>(A) + b * stride_a, std::max(lda, 1),
                    static_cast<const double*>(B) + b * stride_b, std::max(ldb, 1), beta,
                    static_cast<double*>(C) + b * stride_c, ldc);
      } else {
        throw std::runtime_error("cpu backend: gemm does not support int64");
      }
    }
  }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

MemoryUse cpu_memory_use() { return {live_bytes.load(), peak_bytes.load()}; }
void reset_cpu_memory_peak() { peak_bytes.store(live_bytes.load()); }

void set_cpu_threads(int threads) {
  openblas_set_num_threads(threads);
  cpu::set_loop_threads(threads);
}

}  // namespace qkv
