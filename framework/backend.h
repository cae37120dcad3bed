// framework/backend.h — the primitive kernels a device must provide. A backend knows loops,
// gemm and memory; it never knows a derivative. Ops (ops_*.cpp) compose these primitives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_cache.h"
#include "tensor.h"

namespace qkv {

enum class UnaryOp {
  Neg,       // -x
  Exp,       // e^x
  Log,       // ln x
  Sqrt,      // sqrt x
  Tanh,      // tanh x
  Relu,      // max(x, 0)
  NormalCdf, // Phi(x) = (1 + erf(x / sqrt 2)) / 2, the standard normal CDF
  NormalPdf, // phi(x) = exp(-x^2 / 2) / sqrt(2 pi), the standard normal density
  PowScalar, // x ^ scalar
  MulScalar, // x * scalar
  AddScalar, // x + scalar
};

// Each op's formula is written once, in scalar_formulas.h, for both backends.
enum class BinaryOp {
  Add, Sub, Mul, Div,
  ReluBackward,  // a where b > 0, else 0: relu's input gradient from the upstream gradient a and the
                 // input b, in one pass (PyTorch's threshold_backward: b <= 0 gives 0, a NaN b passes a)
};

// Strides in elements, aligned to an output shape; a stride of 0 broadcasts that dim.
using Strides = std::vector<int64_t>;

// One Adam or AdamW step (see adam_update).
struct AdamStep {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  bool decoupled = false;  // AdamW: shrink the parameter instead of adding wd * p to the gradient
  double step_size = 0;               // lr / (1 - beta1^t)
  double sqrt_bias_correction2 = 0;   // sqrt(1 - beta2^t)
};

// What check_indices verifies and how its error reads, e.g. what "embedding: index",
// range "a table of 10 rows".
struct IndexCheck {
  std::string what;
  std::string range;
  int64_t limit = 0;
  bool has_ignore = false;
  int64_t ignore = 0;
};

// The shapes and mask of one fused attention call (see attention() in ops.h for the formulas).
// q (batch, queries, width), k (batch, keys, width), v (batch, keys, value_width), all contiguous.
// Query i sits at key position query_offset + i. Key j is visible to query i iff
//   j < prefix ? (key_lengths empty or j < key_lengths[b]) : j <= query_offset + i,
// and not (j == knockout_key and knockout_from <= query_offset + i < knockout_to).
struct AttentionShape {
  int64_t batch = 0, queries = 0, keys = 0, width = 0, value_width = 0;
  int64_t query_offset = 0;
  int64_t prefix = 0;
  int64_t knockout_key = -1, knockout_from = 0, knockout_to = 0;  // -1: no knockout
  std::vector<int64_t> key_lengths;  // host values, one per batch entry, or empty
  double scale = 1.0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // ---- memory ----
  virtual void* allocate(size_t nbytes) = 0;
  virtual void release(void* ptr) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, size_t nbytes) = 0;
  virtual void copy_from_host(void* dst, const void* host_src, size_t nbytes) = 0;
  virtual void copy(void* dst, const void* src, size_t nbytes) = 0;  // same device
  virtual void synchronize() {}

  // ---- elementwise ----
  virtual void fill(DType dtype, void* out, int64_t n, double value) = 0;
  virtual void cast(DType from, const void* in, DType to, void* out, int64_t n) = 0;
  virtual void unary(UnaryOp op, DType dtype, const void* in, void* out, int64_t n,
                     double scalar) = 0;
  // out[i] = a[i] op b[i] over out_shape, reading a and b through broadcast strides.
  virtual void binary(BinaryOp op, DType dtype, const void* a, const Strides& a_strides,
                      const void* b, const Strides& b_strides, void* out,
                      const Shape& out_shape) = 0;
  // out = keep[i] != 0 ? in[i] : value, keep read through broadcast strides (same dtype as in).
  virtual void masked_fill(DType dtype, const void* in, const void* keep,
                           const Strides& keep_strides, double value, void* out,
                           const Shape& shape) = 0;
  // out[idx . out_strides] = in[idx . in_strides] for every index idx of `shape` (element
  // strides). Covers transpose, slicing, concatenation and broadcasting (stride 0).
  virtual void strided_copy(DType dtype, const void* in, const Strides& in_strides, void* out,
                            const Strides& out_strides, const Shape& shape) = 0;

  // ---- reductions ----
  // Sums `in` (in_shape) down to out_shape, which has the same rank with each dim equal or 1.
  virtual void reduce_sum(DType dtype, const void* in, const Shape& in_shape, void* out, const Shape& out_shape) = 0;
  // Views `in` as (outer, n, inner); writes the max over n and its first index, both (outer, inner).
  virtual void max_along(DType dtype, const void* in, int64_t outer, int64_t n, int64_t inner,
                         void* out_values, int64_t* out_indices) = 0;

  // ---- indexing, viewing x as (outer, n, inner) ----
  // out[o, i] = x[o, index[o, i], i]
  virtual void take_along(DType dtype, const void* x, int64_t outer, int64_t n, int64_t inner,
                          const int64_t* index, void* out) = 0;
  // x[o, index[o, i], i] += values[o, i]  (deterministic: sequential order)
  virtual void put_along_add(DType dtype, void* x, int64_t outer, int64_t n, int64_t inner,
                             const int64_t* index, const void* values) = 0;
  // out[m, :] = table[index[m], :]  for table (rows, width); index already range-checked.
  virtual void gather_rows(DType dtype, const void* table, int64_t width, const int64_t* index,
                           int64_t count, void* out) = 0;
  // table[index[m], :] += values[m, :]  (deterministic: sequential order)
  virtual void scatter_add_rows(DType dtype, void* table, int64_t width, const int64_t* index,
                                int64_t count, const void* values) = 0;
  // Range-checks `count` indices against [0, check.limit), letting entries equal to check.ignore
  // pass when check.has_ignore. Writes safe[i] = index[i], or 0 where the entry is ignored or
  // bad, and, when `valid` is not null, valid[i] = 1 (counted) or 0 (ignored) in valid_dtype.
  // A bad index raises "<check.what> <value> out of range for <check.range>". The CPU throws at
  // once. A GPU records the first bad index on the device and throws at the next copy to the
  // host or synchronize, so that a training step never waits for the check.
  virtual void check_indices(const IndexCheck& check, const int64_t* index, int64_t count,
                             int64_t* safe, DType valid_dtype, void* valid) = 0;

  // ---- optimiser update (not a derivative: torch.optim's arithmetic, fused into one pass) ----
  // In place over n contiguous entries: formula::AdamEntry (scalar_formulas.h) on each.
  virtual void adam_update(DType dtype, void* param, const void* grad, void* exp_avg, void* exp_avg_sq,
                           int64_t n, const AdamStep& step) = 0;

  // ---- row-wise softmax over the last axis, numerically stable ----
  // A row whose entries are all -inf gives zeros (softmax) and zeros (log_softmax).
  virtual void softmax_rows(DType dtype, const void* in, void* out, int64_t rows, int64_t cols,
                            bool log) = 0;

  // ---- LayerNorm over the last axis of a contiguous (rows, width) input ----
  // formula::layer_norm_row on each row: writes out and x_hat (rows, width) and rstd (rows);
  // weight and bias (width) may be null.
  virtual void layer_norm_rows(DType dtype, const void* x, const void* weight, const void* bias, int64_t rows,
                               int64_t width, double eps, void* out, void* x_hat, void* rstd) = 0;
  // formula::layer_norm_backward_row on each row: d_x (rows, width) from g, x_hat and rstd.
  virtual void layer_norm_backward_rows(DType dtype, const void* g, const void* x_hat, const void* rstd,
                                        const void* weight, int64_t rows, int64_t width, void* d_x) = 0;

  // ---- fused attention: the tiled kernels behind ops.h's attention() ----
  // Forward: out = softmax(q k^T * scale, masked) v and lse = the log-sum-exp of each query's
  // visible scores (batch, queries); a query that sees no key gets out = 0 and lse = -inf.
  virtual void attention_forward(DType dtype, const AttentionShape& shape, const void* q, const void* k,
                                 const void* v, void* out, void* lse) = 0;
  // Backward (recomputes the weights from q, k and lse; see ops_attention.cpp for the formula):
  // d_q, d_k, d_v from d_out; every output is written, none accumulated.
  virtual void attention_backward(DType dtype, const AttentionShape& shape, const void* q, const void* k,
                                  const void* v, const void* out, const void* d_out, const void* lse,
                                  void* d_q, void* d_k, void* d_v) = 0;

  // ---- matmul: C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b], row-major ----
  // op(A) is (M, K), op(B) is (K, N), C is (M, N). A stride of 0 reuses one matrix for every b.
  virtual void gemm_batched(DType dtype, bool transpose_a, bool transpose_b, int64_t batch,
                            int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                            int64_t stride_a, const void* B, int64_t stride_b, double beta,
                            void* C, int64_t stride_c) = 0;
};

// The backend that owns a device. CUDA throws a clear error when it was not built or no GPU exists.
Backend& backend_for(Device device);
// Registers the CUDA backend (called by the CUDA translation unit's static initialiser).
void register_cuda_backend(Backend* (*factory)(int device_index));

// Sets the number of threads of the CPU backend, the caller included (0: QKV_THREADS when it is
// set, else one per core; a bad QKV_THREADS throws). One pool (framework/cpu/thread_pool.h) splits
// the elementwise, row and Adam loops, the fused attention tiles and each large gemm, while OpenBLAS
// itself runs on one thread; results are the same for any count.
void set_cpu_threads(int threads);
int cpu_threads();  // the number set_cpu_threads chose

// The CPU backend's tensor storage (block_cache.h): bytes handed out now, the most since the last
// reset (what `qkv bench --attention-length` reports as an op's peak memory), bytes cached for
// reuse, and how many blocks it has taken from the system allocator.
MemoryUse cpu_memory_use();
void reset_cpu_memory_peak();

// Contiguous row-major strides for a shape.
Strides contiguous_strides(const Shape& shape);
// Strides for reading `shape` broadcast up to `out_shape` (numpy rules); throws if incompatible.
Strides broadcast_strides(const Shape& shape, const Shape& out_shape);

}  // namespace qkv
