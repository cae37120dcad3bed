// framework/cuda/cuda_kernels.cu — the CUDA backend's compute primitives: the kernels, in float32
// and float64, and the CudaBackend members that launch them (gemm through cuBLAS). Every kernel is
// deterministic: no atomics, and every sum runs in a fixed order that depends only on the shapes
// (float32 sums accumulate in double, as on the CPU).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/attention_visibility.h"
#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/cuda_check.h"
#include "framework/scalar_formulas.h"

namespace qkv::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxRank = 8;

// An index space (a shape) read through up to three stride sets, after dropping size-1 dims and
// merging dims that are contiguous in every set (make_walk). Passed to kernels by value.
struct Walk {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t stride[3][kMaxRank] = {};
};

unsigned grid_for(int64_t n, int64_t per_block = kThreads) {
  const int64_t blocks = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), int64_t{1} << 20));
}

#define QKV_GRID_LOOP(i, n)                                                              \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
// The same with one warp per i (lane: threadIdx.x & 31).
#define QKV_WARP_LOOP(i, n)                                                                     \
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) >> 5; i < (n); \
       i += (static_cast<int64_t>(blockDim.x) * gridDim.x) >> 5)

// Element offsets of linear index i (row-major over w.shape) in the first N stride sets.
template <int N>
__device__ __forceinline__ void offsets(const Walk& w, int64_t i, int64_t (&off)[N]) {
  if (w.rank <= 1) {  // the common case after merging: one strided run, no division
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = w.rank == 0 ? 0 : i * w.stride[k][0];
    return;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = w.rank - 1; d >= 0; --d) {
    const int64_t size = w.shape[d];
    const int64_t c = i % size;
    i /= size;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += c * w.stride[k][d];
  }
}

// The maths in the argument's precision and the elementwise formulas: scalar_formulas.h, shared
// with the CPU backend.
using formula::exp_of;
using formula::log_of;

// ---- kernels ----

template <typename T>
__global__ void fill_kernel(T* out, int64_t n, T value) {
  QKV_GRID_LOOP(i, n) out[i] = value;
}

template <typename From, typename To>
__global__ void cast_kernel(const From* in, To* out, int64_t n) {
  QKV_GRID_LOOP(i, n) out[i] = static_cast<To>(static_cast<double>(in[i]));  // via double, as the CPU
}

template <typename T>
__global__ void unary_kernel(int op, const T* in, T* out, int64_t n, T s) {
  QKV_GRID_LOOP(i, n) out[i] = formula::unary(static_cast<UnaryOp>(op), in[i], s);
}

template <typename T>
__global__ void binary_kernel(int op, const T* a, const T* b, T* out, Walk w, int64_t n) {
  QKV_GRID_LOOP(i, n) {
    int64_t off[2];
    offsets<2>(w, i, off);
    out[i] = formula::binary(static_cast<BinaryOp>(op), a[off[0]], b[off[1]]);
  }
}

template <typename T>
__global__ void masked_fill_kernel(const T* in, const T* keep, T value, T* out, Walk w, int64_t n) {
  QKV_GRID_LOOP(i, n) {
    int64_t off[1];
    offsets<1>(w, i, off);
    out[i] = keep[off[0]] != T(0) ? in[i] : value;
  }
}

template <typename E>
__global__ void strided_copy_kernel(const E* in, E* out, Walk w, int64_t n) {
  QKV_GRID_LOOP(i, n) {
    int64_t off[2];
    offsets<2>(w, i, off);
    out[off[1]] = in[off[0]];
  }
}

// Sum of the reduced elements of output i, in row-major order over the reduced dims.
// `kept` maps i to its input offset; `red` walks the reduced dims (its innermost dim is a loop).
template <typename T>
__device__ __forceinline__ double reduce_range(const T* in, int64_t base, const Walk& red, int64_t begin, int64_t end,
                                               int64_t step) {
  double acc = 0.0;
  for (int64_t j = begin; j < end; j += step) {
    int64_t off[1];
    offsets<1>(red, j, off);
    acc += static_cast<double>(in[base + off[0]]);
  }
  return acc;
}

// One thread per output element: a plain sequential loop.
template <typename T>
__global__ void reduce_thread_kernel(const T* in, T* out, Walk kept, Walk red, int64_t n_out, int64_t nr) {
  QKV_GRID_LOOP(i, n_out) {
    int64_t base[1];
    offsets<1>(kept, i, base);
    out[i] = static_cast<T>(reduce_range<T>(in, base[0], red, 0, nr, 1));
  }
}

constexpr int kReduceThreads = 256;

// One block per output element: strided partial sums, then a fixed shared-memory tree.
template <typename T>
__global__ void reduce_block_kernel(const T* in, T* out, Walk kept, Walk red, int64_t n_out, int64_t nr) {
  __shared__ double partial[kReduceThreads];
  const int t = threadIdx.x;
  for (int64_t i = blockIdx.x; i < n_out; i += gridDim.x) {
    int64_t base[1];
    offsets<1>(kept, i, base);
    partial[t] = reduce_range<T>(in, base[0], red, t, nr, kReduceThreads);
    __syncthreads();
    for (int s = kReduceThreads / 2; s > 0; s >>= 1) {
      if (t < s) partial[t] = partial[t] + partial[t + s];
      __syncthreads();
    }
    if (t == 0) out[i] = static_cast<T>(partial[0]);
    __syncthreads();
  }
}

template <typename T>
__global__ void max_along_kernel(const T* x, int64_t outer, int64_t n, int64_t inner, T* values, int64_t* indices) {
  QKV_GRID_LOOP(k, outer * inner) {
    const int64_t o = k / inner, i = k % inner;
    const formula::Argmax<T> best = formula::argmax_strided(x + o * n * inner + i, n, inner);
    values[k] = best.value;
    indices[k] = best.index;
  }
}

// Each (o, i) owns a distinct destination element, so no two threads touch the same slot.
template <typename T>
__global__ void put_along_add_kernel(T* x, int64_t outer, int64_t n, int64_t inner, const int64_t* index,
                                     const T* values) {
  QKV_GRID_LOOP(k, outer * inner) {
    const int64_t o = k / inner, i = k % inner;
    x[(o * n + index[k]) * inner + i] += values[k];
  }
}

template <typename E>
__global__ void gather_rows_kernel(const E* table, int64_t width, const int64_t* index, int64_t count, E* out,
                                   RowRuns rows) {
  QKV_GRID_LOOP(k, count * width) {
    const int64_t m = k / width, d = k % width;
    out[formula::dense_row(rows, m) * width + d] = table[index[m] * width + d];
  }
}

// Thread (bucket, d) owns column d of every table row r with r % buckets == bucket, and adds the
// entries m = 0, 1, ... in order: the same sequence of additions as the CPU, without atomics.
template <typename T>
__global__ void scatter_add_rows_kernel(T* table, int64_t width, const int64_t* index, int64_t count, const T* values,
                                        RowRuns rows, int64_t buckets) {
  QKV_GRID_LOOP(k, buckets * width) {
    const int64_t bucket = k / width, d = k % width;
    for (int64_t m = 0; m < count; ++m) {
      const int64_t r = index[m];
      if (r % buckets == bucket) table[r * width + d] += values[formula::dense_row(rows, m) * width + d];
    }
  }
}

constexpr int kCheckThreads = 512;

// One block scans every index: writes safe[i] and valid[i], and finds the first bad position
// with a fixed-order tree minimum (no atomics). The first error stays recorded until the host
// reads it (IndexError::site == 0 means none).
template <typename T>
__global__ void check_indices_kernel(const int64_t* index, int64_t count, int64_t limit, bool has_ignore,
                                     int64_t ignore, int64_t site, int64_t* safe, T* valid, IndexError* error) {
  __shared__ int64_t first_bad[kCheckThreads];
  const int t = threadIdx.x;
  int64_t mine = count;
  for (int64_t i = t; i < count; i += kCheckThreads) {
    const int64_t v = index[i];
    const bool ignored = has_ignore && v == ignore;
    const bool bad = !ignored && (v < 0 || v >= limit);
    safe[i] = ignored || bad ? 0 : v;  // bad entries read row 0, so later kernels stay in bounds
    if (valid) valid[i] = ignored ? T(0) : T(1);
    if (bad && i < mine) mine = i;
  }
  first_bad[t] = mine;
  __syncthreads();
  for (int s = kCheckThreads / 2; s > 0; s >>= 1) {
    if (t < s && first_bad[t + s] < first_bad[t]) first_bad[t] = first_bad[t + s];
    __syncthreads();
  }
  if (t == 0 && first_bad[0] < count && error->site == 0) {
    error->value = index[first_bad[0]];
    error->site = site;
  }
}

// One thread per row through the shared row formulas (scalar_formulas.h), so the sums run in
// the CPU's order. Rows are short here (the model width); a warp per row would coalesce better.
template <typename T>
__global__ void layer_norm_kernel(const T* x, const T* residual, const T* w, const T* b, int64_t rows, int64_t width,
                                  double eps, T* out, T* x_hat, T* rstd) {
  QKV_GRID_LOOP(r, rows) {
    formula::layer_norm_row(x + r * width, residual ? residual + r * width : nullptr, w, b, width, eps, out + r * width,
                            x_hat + r * width, rstd + r);
  }
}

template <typename T>
__global__ void layer_norm_backward_kernel(const T* g, const T* x_hat, const T* rstd, const T* w, int64_t rows,
                                           int64_t width, T* d_x) {
  QKV_GRID_LOOP(r, rows) {
    formula::layer_norm_backward_row(g + r * width, x_hat + r * width, rstd[r], w, width, d_x + r * width);
  }
}

// A row's max over a warp, one lane per 32nd entry; butterfly shuffles give every lane the same
// value (fixed order). A NaN anywhere makes it NaN.
template <typename T>
__device__ __forceinline__ T warp_row_max(const T* x, int64_t cols, int lane) {
  T m = -INFINITY;
  for (int64_t c = lane; c < cols; c += 32) m = formula::nan_max(m, x[c]);
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) m = formula::nan_max(m, __shfl_xor_sync(0xffffffffu, m, s));
  return m;
}

// The row's exps exp(x - m) in the tensor's own precision (written to y unless it is null), summed
// in double as on the CPU, over a warp as warp_row_max: every lane gets the same sum.
template <typename T>
__device__ __forceinline__ double warp_row_sum_exp(const T* x, int64_t cols, T m, int lane, T* y) {
  double total = 0.0;
  for (int64_t c = lane; c < cols; c += 32) {
    const T e = exp_of(x[c] - m);
    total += e;
    if (y) y[c] = e;
  }
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) total += __shfl_xor_sync(0xffffffffu, total, s);
  return total;
}

// One warp per row (warp_row_max, warp_row_sum_exp).
template <typename T>
__global__ void softmax_kernel(const T* in, T* out, int64_t rows, int64_t cols, bool log) {
  const int lane = threadIdx.x & 31;
  QKV_WARP_LOOP(r, rows) {
    const T* x = in + r * cols;
    T* y = out + r * cols;
    const T m = warp_row_max(x, cols, lane);
    if (m == -INFINITY) {  // fully masked row: zeros, not NaN
      for (int64_t c = lane; c < cols; c += 32) y[c] = T(0);
      continue;
    }
    const double total = warp_row_sum_exp(x, cols, m, lane, log ? nullptr : y);
    if (log) {
      const T shift = m + static_cast<T>(::log(total));
      for (int64_t c = lane; c < cols; c += 32) y[c] = x[c] - shift;
    } else {
      const T inv = static_cast<T>(1.0 / total);
      for (int64_t c = lane; c < cols; c += 32) y[c] *= inv;  // each lane rescales its own entries
    }
  }
}

// Backend::log_softmax_pick: softmax_kernel's max and sum, one warp per row; lane 0 writes.
template <typename T>
__global__ void log_softmax_pick_kernel(const T* in, int64_t rows, int64_t cols, const int64_t* index, T* shift,
                                        T* picked) {
  const int lane = threadIdx.x & 31;
  QKV_WARP_LOOP(r, rows) {
    const T* x = in + r * cols;
    const T m = warp_row_max(x, cols, lane);
    if (m == -INFINITY) {  // fully masked row: log_softmax's zeros
      if (lane == 0) {
        shift[r] = m;
        picked[r] = T(0);
      }
      continue;
    }
    const double total = warp_row_sum_exp(x, cols, m, lane, static_cast<T*>(nullptr));
    if (lane == 0) {
      const T s = m + static_cast<T>(::log(total));
      shift[r] = s;
      picked[r] = x[index[r]] - s;
    }
  }
}

// Backend::softmax_minus_onehot, one thread per entry.
template <typename T>
__global__ void softmax_minus_onehot_kernel(const T* in, const T* shift, const int64_t* index, const T* factor,
                                            int64_t rows, int64_t cols, T* out) {
  QKV_GRID_LOOP(i, rows * cols) {
    const int64_t r = i / cols;
    const T s = shift[r];
    T p = s == -INFINITY ? T(1) : exp_of(in[i] - s);
    if (i - r * cols == index[r]) p += T(-1);
    out[i] = p * factor[r];
  }
}

// Backend::adam_update, one thread per entry: formula::AdamEntry, as the CPU loop.
template <typename T>
__global__ void adam_kernel(T* param, const T* grad, T* m, T* v, int64_t n, formula::AdamEntry<T> adam) {
  QKV_GRID_LOOP(i, n) adam.apply(param[i], grad[i], m[i], v[i]);
}

// Backend::rotary_rows, one thread per turned pair (so that out may be x).
template <typename T>
__global__ void rotary_kernel(const T* x, const T* cos, const T* sin, int64_t rows, int64_t width, int64_t half,
                              int64_t blocks, T sign, T* out) {
  QKV_GRID_LOOP(e, rows * blocks * half) {
    const int64_t r = e / (blocks * half), b = e % (blocks * half) / half, i = e % half;  // row, block, pair
    const int64_t pair = r * width + b * 2 * half + i;  // x1's entry; x2's is pair + half
    T y1, y2;
    formula::rotate_pair(x[pair], x[pair + half], cos[r * half + i], sin[r * half + i] * sign, y1, y2);
    out[pair] = y1, out[pair + half] = y2;
  }
}

template <typename T>
__global__ void scale_batched_kernel(T* C, int64_t batch, int64_t count, int64_t stride, T beta) {
  QKV_GRID_LOOP(e, count) {
    for (int64_t b = 0; b < batch; ++b) {
      T& c = C[b * stride + e];
      c = beta == T(0) ? T(0) : c * beta;
    }
  }
}

// Runs body (which launches kernels) for dtype's float type, then checks the launches.
template <typename Body>
void launch_float(DType dtype, const char* what, Body&& body) {
  formula::dispatch_float(dtype, "cuda", what, body);
  QKV_CUDA_CHECK_LAUNCH();
}

// launch_float's counterpart for kernels that only move elements: by element size (4 or 8 bytes).
template <typename Body>
void launch_elem(DType dtype, Body&& body) {
  dtype_size(dtype) == 4 ? body(uint32_t{}) : body(uint64_t{});
  QKV_CUDA_CHECK_LAUNCH();
}

// ---- fused attention (Backend::attention_forward / attention_backward) ----
// One thread per query (forward, d_q) or per key (d_k, d_v), 64 to a block; the other side's rows
// are staged through shared memory 16 (8 at the widest) at a time. Each thread owns its outputs:
// no atomics. Each kernel is compiled for three width limits W (64, 128, 256) and launched with
// the smallest that holds K and Kv: a thread's rows of W, indexed by unrolled loops, can then stay
// in registers (a loop to the run-time width would put them in local memory). The loops still
// run over c < K (or Kv) in order, so the arithmetic does not depend on W.
constexpr int kAttnRows = 64;       // queries or keys per block, one per thread
constexpr int kAttnMaxWidth = 256;  // the widest head (K and Kv) the kernels take
template <int W>
constexpr int attn_stage_rows = W > 128 ? 8 : 16;  // staged rows: float64 tiles stay under 48 KB

// The kernels' view of an attention call: its entries (attention_visibility.h, with device copies
// of the shape's vectors), widths and row strides.
struct AttnDims {
  formula::AttentionEntries entries;
  int64_t queries, keys, width, value_width;
  int64_t q_stride, k_stride, v_stride;  // row strides of q and d_q, k and d_k, v and d_v (backend.h)
};

// The rows one block of attention threads owns, one thread per query (or per key): batch entry
// blockIdx.x / tiles, its rows [first, end); `row` is this thread's. A block past a ragged entry's
// last row (one shorter than the longest) is `empty`, the same for the whole block.
struct AttnBlock {
  formula::AttentionEntry e;
  int64_t first, row, end;
  bool empty, active;
};

__device__ __forceinline__ AttnBlock attn_block(const AttnDims& d, bool per_key) {
  const int64_t tiles = ((per_key ? d.keys : d.queries) + kAttnRows - 1) / kAttnRows;
  const formula::AttentionEntry e = d.entries[blockIdx.x / tiles];
  const int64_t count = per_key ? e.nk : e.nq, first = (blockIdx.x % tiles) * kAttnRows;
  const int64_t row = first + threadIdx.x, end = first + kAttnRows < count ? first + kAttnRows : count;
  return {e, first, row, end, first >= count, row < count};
}

// Copies rows [r0, r0 + n) of two matrices, a (rows of a_width, a_stride apart) and b, into their
// tiles (attn_stage_rows<W>, W), each row padded with zeros to W, between barriers (so every thread
// of the block calls it, and the tiles are not overwritten while another thread still reads them).
template <int W, typename T>
__device__ __forceinline__ void attn_stage(int64_t r0, int64_t n, const T* a, int64_t a_width, int64_t a_stride,
                                           T* a_tile, const T* b, int64_t b_width, int64_t b_stride, T* b_tile) {
  __syncthreads();
  for (int64_t x = threadIdx.x; x < n * W; x += blockDim.x) {
    const int64_t r = r0 + x / W, c = x % W;
    a_tile[x] = c < a_width ? a[r * a_stride + c] : T(0);
    b_tile[x] = c < b_width ? b[r * b_stride + c] : T(0);
  }
  __syncthreads();
}

// for (c = 0; c < n; ++c) body(c), unrolled to W so that arrays indexed by c stay in registers
// (the emulator's host compiler takes the plain loop).
#ifdef __CUDACC__
#define QKV_ATTN_UNROLL _Pragma("unroll")
#else
#define QKV_ATTN_UNROLL
#endif
#define QKV_ATTN_FOR(c, n) QKV_ATTN_UNROLL for (int c = 0; c < W; ++c) if (c < (n))
// for (c = 0; c < W; ++c), unguarded: the products and sums over a whole row of W, which read the
// tiles and a thread's rows, zero from the real width to W (a zero product leaves a sum as it
// is), so that the shared-memory reads can go four at a time.
#define QKV_ATTN_ALL(c) QKV_ATTN_UNROLL for (int c = 0; c < W; ++c)

template <typename T, int W>
__global__ void attention_forward_kernel(AttnDims d, T scale, const T* q, const T* k, const T* v, T* out, T* lse) {
  __shared__ __align__(16) T k_tile[attn_stage_rows<W> * W];
  __shared__ __align__(16) T v_tile[attn_stage_rows<W> * W];
  const auto [e, i0, i, i_end, empty, active] = attn_block(d, false);
  if (empty) return;
  const int64_t K = d.width, Kv = d.value_width, qs = d.q_stride, ks = d.k_stride, vs = d.v_stride;
  T q_row[W], acc[W];
  QKV_ATTN_ALL(c) q_row[c] = active && c < K ? q[(e.q0 + i) * qs + c] : T(0);
  QKV_ATTN_ALL(c) acc[c] = T(0);
  T m = -INFINITY, l = T(0);
  for (int64_t j0 = 0; j0 < e.nk; j0 += attn_stage_rows<W>) {
    const int64_t nk = e.nk - j0 < attn_stage_rows<W> ? e.nk - j0 : attn_stage_rows<W>;
    if (!e.vis.any(i_end, j0, j0 + nk)) continue;  // the same for the whole block
    attn_stage<W>(j0, nk, k + e.k0 * ks, K, ks, k_tile, v + e.k0 * vs, Kv, vs, v_tile);
    if (!active) continue;
    for (int64_t jj = 0; jj < nk; ++jj) {
      if (!e.vis(i, j0 + jj)) continue;
      T s = T(0);
      QKV_ATTN_ALL(c) s += q_row[c] * k_tile[jj * W + c];
      s *= scale;
      if (e.vis.distance_slope != 0) s += e.vis.bias<T>(i, j0 + jj);
      if (s > m) {  // a new running max: rescale what was summed so far
        const T rescale = m == -INFINITY ? T(0) : exp_of(m - s);
        l *= rescale;
        QKV_ATTN_ALL(c) acc[c] *= rescale;
        m = s;
      }
      const T p = exp_of(s - m);
      l += p;
      QKV_ATTN_ALL(c) acc[c] += p * v_tile[jj * W + c];
    }
  }
  if (!active) return;
  T* o = out + (e.q0 + i) * Kv;
  QKV_ATTN_FOR(c, Kv) o[c] = l == T(0) ? T(0) : acc[c] / l;  // l == 0: no key visible
  lse[e.q0 + i] = l == T(0) ? T(-INFINITY) : m + log_of(l);
}

// delta_i = d_out_i . out_i, one per query.
template <typename T>
__global__ void attention_delta_kernel(int64_t rows, int64_t width, const T* out, const T* d_out, T* delta) {
  QKV_GRID_LOOP(r, rows) {
    T sum = T(0);
    for (int64_t c = 0; c < width; ++c) sum += d_out[r * width + c] * out[r * width + c];
    delta[r] = sum;
  }
}

// One thread per key j: d_v_j = sum_i P_ij d_out_i and d_k_j = scale * sum_i dS_ij q_i.
template <typename T, int W>
__global__ void attention_dkv_kernel(AttnDims d, T scale, const T* q, const T* k, const T* v, const T* d_out,
                                     const T* lse, const T* delta, T* d_k, T* d_v) {
  __shared__ __align__(16) T q_tile[attn_stage_rows<W> * W];
  __shared__ __align__(16) T g_tile[attn_stage_rows<W> * W];
  const auto [e, j0, j, j_end, empty, active] = attn_block(d, true);
  if (empty) return;
  const int64_t K = d.width, Kv = d.value_width, qs = d.q_stride, ks = d.k_stride, vs = d.v_stride;
  T k_row[W], v_row[W], dk[W], dv[W];
  QKV_ATTN_ALL(c) {
    k_row[c] = active && c < K ? k[(e.k0 + j) * ks + c] : T(0);
    v_row[c] = active && c < Kv ? v[(e.k0 + j) * vs + c] : T(0);
    dk[c] = dv[c] = T(0);
  }
  for (int64_t i0 = 0; i0 < e.nq; i0 += attn_stage_rows<W>) {
    const int64_t nq = e.nq - i0 < attn_stage_rows<W> ? e.nq - i0 : attn_stage_rows<W>;
    if (!e.vis.any(i0 + nq, j0, j_end)) continue;  // the same for the whole block
    attn_stage<W>(i0, nq, q + e.q0 * qs, K, qs, q_tile, d_out + e.q0 * Kv, Kv, Kv, g_tile);
    if (!active) continue;
    for (int64_t ii = 0; ii < nq; ++ii) {
      const int64_t i = i0 + ii;
      const T l = lse[e.q0 + i];
      if (!e.vis(i, j) || l == -INFINITY) continue;
      T s = T(0), dp = T(0);
      QKV_ATTN_ALL(c) s += q_tile[ii * W + c] * k_row[c];
      QKV_ATTN_ALL(c) dp += g_tile[ii * W + c] * v_row[c];
      const T p = e.vis.distance_slope == 0 ? exp_of(s * scale - l) : exp_of((s * scale + e.vis.bias<T>(i, j)) - l);
      const T ds = p * (dp - delta[e.q0 + i]);
      QKV_ATTN_ALL(c) dv[c] += p * g_tile[ii * W + c];
      QKV_ATTN_ALL(c) dk[c] += ds * q_tile[ii * W + c];
    }
  }
  if (!active) return;
  QKV_ATTN_FOR(c, K) d_k[(e.k0 + j) * ks + c] = dk[c] * scale;
  QKV_ATTN_FOR(c, Kv) d_v[(e.k0 + j) * vs + c] = dv[c];
}

// One thread per query i: d_q_i = scale * sum_j dS_ij k_j.
template <typename T, int W>
__global__ void attention_dq_kernel(AttnDims d, T scale, const T* q, const T* k, const T* v, const T* d_out,
                                    const T* lse, const T* delta, T* d_q) {
  __shared__ __align__(16) T k_tile[attn_stage_rows<W> * W];
  __shared__ __align__(16) T v_tile[attn_stage_rows<W> * W];
  const auto [e, i0, i, i_end, empty, active] = attn_block(d, false);
  if (empty) return;
  const int64_t K = d.width, Kv = d.value_width, qs = d.q_stride, ks = d.k_stride, vs = d.v_stride;
  T q_row[W], g_row[W], dq[W];
  QKV_ATTN_ALL(c) {
    q_row[c] = active && c < K ? q[(e.q0 + i) * qs + c] : T(0);
    g_row[c] = active && c < Kv ? d_out[(e.q0 + i) * Kv + c] : T(0);
    dq[c] = T(0);
  }
  const T l = active ? lse[e.q0 + i] : T(0), delta_i = active ? delta[e.q0 + i] : T(0);
  for (int64_t j0 = 0; j0 < e.nk; j0 += attn_stage_rows<W>) {
    const int64_t nk = e.nk - j0 < attn_stage_rows<W> ? e.nk - j0 : attn_stage_rows<W>;
    if (!e.vis.any(i_end, j0, j0 + nk)) continue;  // the same for the whole block
    attn_stage<W>(j0, nk, k + e.k0 * ks, K, ks, k_tile, v + e.k0 * vs, Kv, vs, v_tile);
    if (!active || l == -INFINITY) continue;
    for (int64_t jj = 0; jj < nk; ++jj) {
      if (!e.vis(i, j0 + jj)) continue;
      T s = T(0), dp = T(0);
      QKV_ATTN_ALL(c) s += q_row[c] * k_tile[jj * W + c];
      QKV_ATTN_ALL(c) dp += g_row[c] * v_tile[jj * W + c];
      const T p =
          e.vis.distance_slope == 0 ? exp_of(s * scale - l) : exp_of((s * scale + e.vis.bias<T>(i, j0 + jj)) - l);
      const T ds = p * (dp - delta_i);
      QKV_ATTN_ALL(c) dq[c] += ds * k_tile[jj * W + c];
    }
  }
  if (!active) return;
  QKV_ATTN_FOR(c, K) d_q[(e.q0 + i) * qs + c] = dq[c] * scale;
}

// The host side of binary, masked_fill and strided_copy: `shape` read through up to three stride
// sets, merged (formula::merge_dimensions) into a Walk. Throws when the merged rank is above
// kMaxRank (naming `what` and the shape).
Walk make_walk(const char* what, const Shape& shape, const std::vector<const Strides*>& sets) {
  const formula::MergedDims merged = formula::merge_dimensions(shape, sets);
  if (merged.shape.size() > static_cast<size_t>(kMaxRank))
    throw std::runtime_error(std::string("cuda backend: ") + what + " supports at most " + std::to_string(kMaxRank) +
                             " dims (after merging contiguous ones), got shape " + shape_str(shape));
  Walk w;
  w.rank = static_cast<int>(merged.shape.size());
  for (int d = 0; d < w.rank; ++d) {
    w.shape[d] = merged.shape[d];
    for (size_t k = 0; k < sets.size(); ++k) w.stride[k][d] = merged.strides[k][d];
  }
  return w;
}

// C[b] *= beta for every b (beta == 0 writes zeros); batches run in order, so stride 0 repeats.
void scale_batched(DType dtype, void* C, int64_t batch, int64_t count, int64_t stride, double beta) {
  if (batch <= 0 || count <= 0) return;
  launch_float(dtype, "gemm", [&]<typename T>(T) {
    scale_batched_kernel<<<grid_for(count), kThreads>>>(static_cast<T*>(C), batch, count, stride, static_cast<T>(beta));
  });
}

// The kernels' view of an attention call, with the device copies of s.key_lengths, s.query_starts
// and s.key_starts (each null when empty).
AttnDims attn_dims(const AttentionShape& s, const int64_t* lengths, const int64_t* query_starts,
                   const int64_t* key_starts) {
  if (s.width > kAttnMaxWidth || s.value_width > kAttnMaxWidth)
    throw std::runtime_error("cuda backend: attention supports head widths up to " + std::to_string(kAttnMaxWidth) +
                             ", got " + std::to_string(s.width) + " and " + std::to_string(s.value_width));
  const formula::AttentionEntries entries = formula::attention_entries(s, lengths, query_starts, key_starts);
  return {entries, s.queries, s.keys, s.width, s.value_width, s.q_step(), s.k_step(), s.v_step()};
}

// Device memory for one call, released on every way out: `bytes` of scratch, or a copy of an
// attention call's host values (key lengths, ragged row offsets; null when there are none), which
// travel to the device with each call (one small copy).
struct DeviceScratch {
  DeviceScratch(Backend& owner, size_t bytes) : backend(owner), data(bytes ? backend.allocate(bytes) : nullptr) {}
  DeviceScratch(Backend& owner, const std::vector<int64_t>& host) : DeviceScratch(owner, host.size() * 8) {
    if (data) backend.copy_from_host(data, host.data(), host.size() * 8);
  }
  ~DeviceScratch() { backend.release(data); }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  int64_t* ints() const { return static_cast<int64_t*>(data); }
  Backend& backend;
  void* data;
};

}  // namespace

// ---- the primitives: each checks its arguments on the host, then launches its kernels ----

void CudaBackend::fill(DType dtype, void* out, int64_t n, double value) {
  activate();
  if (n <= 0) return;
  formula::dispatch_dtype(dtype, [&]<typename T>(T) {
    fill_kernel<<<grid_for(n), kThreads>>>(static_cast<T*>(out), n, static_cast<T>(value));
  });
  QKV_CUDA_CHECK_LAUNCH();
}

void CudaBackend::cast(DType from, const void* in, DType to, void* out, int64_t n) {
  activate();
  if (n <= 0) return;
  if (from == to) {
    QKV_CUDA_CHECK(cudaMemcpyAsync(out, in, static_cast<size_t>(n) * dtype_size(to), cudaMemcpyDeviceToDevice, 0));
    return;
  }
  formula::dispatch_dtype(from, [&]<typename From>(From) {
    formula::dispatch_dtype(to, [&]<typename To>(To) {
      cast_kernel<<<grid_for(n), kThreads>>>(static_cast<const From*>(in), static_cast<To*>(out), n);
    });
  });
  QKV_CUDA_CHECK_LAUNCH();
}

void CudaBackend::unary(UnaryOp op, DType dtype, const void* in, void* out, int64_t n, double scalar) {
  activate();
  if (n <= 0) return;
  launch_float(dtype, "unary", [&]<typename T>(T) {
    unary_kernel<<<grid_for(n), kThreads>>>(static_cast<int>(op), static_cast<const T*>(in), static_cast<T*>(out), n,
                                            static_cast<T>(scalar));
  });
}

void CudaBackend::binary(BinaryOp op, DType dtype, const void* a, const Strides& a_strides, const void* b,
                         const Strides& b_strides, void* out, const Shape& out_shape) {
  const int64_t n = shape_numel(out_shape);
  if (n == 0) return;
  activate();
  const Strides s_out = contiguous_strides(out_shape);
  const Walk walk = make_walk("binary", out_shape, {&a_strides, &b_strides, &s_out});
  launch_float(dtype, "binary", [&]<typename T>(T) {
    binary_kernel<<<grid_for(n), kThreads>>>(static_cast<int>(op), static_cast<const T*>(a), static_cast<const T*>(b),
                                             static_cast<T*>(out), walk, n);
  });
}

// keep is read through stride set 0 of the walk; in and out are contiguous.
void CudaBackend::masked_fill(DType dtype, const void* in, const void* keep, const Strides& keep_strides, double value,
                              void* out, const Shape& shape) {
  const int64_t n = shape_numel(shape);
  if (n == 0) return;
  activate();
  const Strides s = contiguous_strides(shape);
  const Walk walk = make_walk("masked_fill", shape, {&keep_strides, &s});
  launch_float(dtype, "masked_fill", [&]<typename T>(T) {
    masked_fill_kernel<<<grid_for(n), kThreads>>>(static_cast<const T*>(in), static_cast<const T*>(keep),
                                                  static_cast<T>(value), static_cast<T*>(out), walk, n);
  });
}

void CudaBackend::strided_copy(DType dtype, const void* in, const Strides& in_strides, void* out,
                               const Strides& out_strides, const Shape& shape) {
  const int64_t n = shape_numel(shape);
  if (n == 0) return;
  activate();
  const Walk walk = make_walk("strided_copy", shape, {&in_strides, &out_strides});
  launch_elem(dtype, [&]<typename E>(E) {
    strided_copy_kernel<<<grid_for(n), kThreads>>>(static_cast<const E*>(in), static_cast<E*>(out), walk, n);
  });
}

void CudaBackend::reduce_sum(DType dtype, const void* in, const Shape& in_shape, void* out, const Shape& out_shape) {
  activate();
  if (in_shape.size() != out_shape.size())
    throw std::runtime_error("cuda backend: reduce of " + shape_str(in_shape) + " to " + shape_str(out_shape) +
                             ": ranks differ");
  // Split the input dims into kept ones (out == in) and reduced ones (out == 1), both read
  // through the input's contiguous strides.
  const Strides s_in = contiguous_strides(in_shape);
  Shape kept_shape, red_shape;
  Strides kept_strides, red_strides;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    const bool kept_dim = out_shape[d] == in_shape[d];
    if (!kept_dim && out_shape[d] != 1)
      throw std::runtime_error("cuda backend: cannot reduce " + shape_str(in_shape) + " to " + shape_str(out_shape));
    (kept_dim ? kept_shape : red_shape).push_back(in_shape[d]);
    (kept_dim ? kept_strides : red_strides).push_back(s_in[d]);
  }
  const Walk kept = make_walk("reduce", kept_shape, {&kept_strides});
  const Walk red = make_walk("reduce", red_shape, {&red_strides});
  const int64_t n_out = shape_numel(out_shape);
  const int64_t nr = shape_numel(red_shape);
  if (n_out == 0) return;
  // Few outputs with long reductions: a block each; otherwise a thread each. The choice depends
  // only on the shapes, so results stay reproducible.
  const bool per_block = nr >= 256 && n_out < 16384;
  launch_float(dtype, "reduce", [&]<typename T>(T) {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    if (per_block) {
      const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(n_out, 65535));
      reduce_block_kernel<T><<<blocks, kReduceThreads>>>(x, y, kept, red, n_out, nr);
    } else {
      reduce_thread_kernel<T><<<grid_for(n_out), kThreads>>>(x, y, kept, red, n_out, nr);
    }
  });
}

// The composed ops' kernels in turn (mul, reduce_sum, then add), so that the bits are
// sum(mul(x, x)) [+ out]'s on this device; a scratch holds the squares and, to be added, their sum.
void CudaBackend::sum_squares(DType dtype, const void* in, int64_t n, bool accumulate, void* out) {
  activate();
  const size_t elem = dtype_size(dtype), count = static_cast<size_t>(std::max<int64_t>(n, 0));
  const DeviceScratch squares(*this, (count + 1) * elem);
  const Shape shape{n};
  const Strides one{1};
  binary(BinaryOp::Mul, dtype, in, one, in, one, squares.data, shape);
  void* total = accumulate ? static_cast<char*>(squares.data) + count * elem : out;
  reduce_sum(dtype, squares.data, shape, total, Shape{1});
  if (accumulate) binary(BinaryOp::Add, dtype, out, Strides{}, total, Strides{}, out, Shape{});
}

void CudaBackend::max_along(DType dtype, const void* in, int64_t outer, int64_t n, int64_t inner, void* out_values,
                            int64_t* out_indices) {
  activate();
  if (outer * inner <= 0 || n <= 0) return;
  launch_float(dtype, "max_along", [&]<typename T>(T) {
    max_along_kernel<<<grid_for(outer * inner), kThreads>>>(static_cast<const T*>(in), outer, n, inner,
                                                            static_cast<T*>(out_values), out_indices);
  });
}

void CudaBackend::put_along_add(DType dtype, void* x, int64_t outer, int64_t n, int64_t inner, const int64_t* index,
                                const void* values) {
  activate();
  if (outer * inner <= 0) return;
  launch_float(dtype, "put_along_add", [&]<typename T>(T) {
    put_along_add_kernel<<<grid_for(outer * inner), kThreads>>>(static_cast<T*>(x), outer, n, inner, index,
                                                                static_cast<const T*>(values));
  });
}

void CudaBackend::gather_rows(DType dtype, const void* table, int64_t width, const int64_t* index, int64_t count,
                              void* out, RowRuns rows) {
  activate();
  if (count * width <= 0) return;
  launch_elem(dtype, [&]<typename E>(E) {
    gather_rows_kernel<<<grid_for(count * width), kThreads>>>(static_cast<const E*>(table), width, index, count,
                                                              static_cast<E*>(out), rows);
  });
}

void CudaBackend::scatter_add_rows(DType dtype, void* table, int64_t width, const int64_t* index, int64_t count,
                                   const void* values, RowRuns rows) {
  activate();
  if (count <= 0 || width <= 0) return;
  // About 16K threads in all; more buckets would only add index scans.
  const int64_t buckets = std::max<int64_t>(1, std::min<int64_t>(count, 16384 / width));
  launch_float(dtype, "scatter_add_rows", [&]<typename T>(T) {
    scatter_add_rows_kernel<<<grid_for(buckets * width), kThreads>>>(static_cast<T*>(table), width, index, count,
                                                                     static_cast<const T*>(values), rows, buckets);
  });
}

// A bad index is recorded on the device (index_error_) and thrown at the next wait for it.
void CudaBackend::check_indices(const IndexCheck& check, const int64_t* index, int64_t count, int64_t* safe,
                                DType valid_dtype, void* valid) {
  activate();
  if (count <= 0) return;
  const int64_t site = site_of(check);
  launch_float(valid ? valid_dtype : DType::F32, "check_indices", [&]<typename T>(T) {
    check_indices_kernel<T><<<1, kCheckThreads>>>(index, count, check.limit, check.has_ignore, check.ignore, site, safe,
                                                  static_cast<T*>(valid), index_error_);
  });
}

void CudaBackend::softmax_rows(DType dtype, const void* in, void* out, int64_t rows, int64_t cols, bool log) {
  activate();
  if (rows <= 0 || cols <= 0) return;
  launch_float(dtype, "softmax_rows", [&]<typename T>(T) {
    softmax_kernel<<<grid_for(rows, kThreads / 32), kThreads>>>(static_cast<const T*>(in), static_cast<T*>(out), rows,
                                                                cols, log);
  });
}

void CudaBackend::log_softmax_pick(DType dtype, const void* x, int64_t rows, int64_t cols, const int64_t* index,
                                   void* shift, void* picked) {
  activate();
  if (rows <= 0 || cols <= 0) return;
  launch_float(dtype, "log_softmax_pick", [&]<typename T>(T) {
    log_softmax_pick_kernel<<<grid_for(rows, kThreads / 32), kThreads>>>(
        static_cast<const T*>(x), rows, cols, index, static_cast<T*>(shift), static_cast<T*>(picked));
  });
}

void CudaBackend::softmax_minus_onehot(DType dtype, const void* x, const void* shift, const int64_t* index,
                                       const void* factor, int64_t rows, int64_t cols, void* out) {
  activate();
  if (rows <= 0 || cols <= 0) return;
  launch_float(dtype, "softmax_minus_onehot", [&]<typename T>(T) {
    softmax_minus_onehot_kernel<<<grid_for(rows * cols), kThreads>>>(
        static_cast<const T*>(x), static_cast<const T*>(shift), index, static_cast<const T*>(factor), rows, cols,
        static_cast<T*>(out));
  });
}

void CudaBackend::layer_norm_rows(DType dtype, const void* x, const void* residual, const void* weight,
                                  const void* bias, int64_t rows, int64_t width, double eps, void* out, void* x_hat,
                                  void* rstd) {
  activate();
  if (rows <= 0) return;
  launch_float(dtype, "layer_norm", [&]<typename T>(T) {
    layer_norm_kernel<<<grid_for(rows), kThreads>>>(static_cast<const T*>(x), static_cast<const T*>(residual),
                                                    static_cast<const T*>(weight), static_cast<const T*>(bias), rows,
                                                    width, eps, static_cast<T*>(out), static_cast<T*>(x_hat),
                                                    static_cast<T*>(rstd));
  });
}

void CudaBackend::layer_norm_backward_rows(DType dtype, const void* g, const void* x_hat, const void* rstd,
                                           const void* weight, int64_t rows, int64_t width, void* d_x) {
  activate();
  if (rows <= 0) return;
  launch_float(dtype, "layer_norm backward", [&]<typename T>(T) {
    layer_norm_backward_kernel<<<grid_for(rows), kThreads>>>(static_cast<const T*>(g), static_cast<const T*>(x_hat),
                                                             static_cast<const T*>(rstd), static_cast<const T*>(weight),
                                                             rows, width, static_cast<T*>(d_x));
  });
}

void CudaBackend::rotary_rows(DType dtype, const void* x, const void* cos, const void* sin, int64_t rows, int64_t width,
                              int64_t half, int64_t blocks, double sign, void* out) {
  activate();
  if (rows * blocks * half <= 0) return;
  launch_float(dtype, "rotary", [&]<typename T>(T) {
    rotary_kernel<T><<<grid_for(rows * blocks * half), kThreads>>>(static_cast<const T*>(x), static_cast<const T*>(cos),
                                                                   static_cast<const T*>(sin), rows, width, half,
                                                                   blocks, static_cast<T>(sign), static_cast<T*>(out));
  });
}

void CudaBackend::adam_update(DType dtype, void* param, const void* grad, void* exp_avg, void* exp_avg_sq, int64_t n,
                              const AdamStep& step) {
  activate();
  if (n <= 0) return;
  launch_float(dtype, "adam_update", [&]<typename T>(T) {
    adam_kernel<T><<<grid_for(n), kThreads>>>(static_cast<T*>(param), static_cast<const T*>(grad),
                                              static_cast<T*>(exp_avg), static_cast<T*>(exp_avg_sq), n,
                                              formula::AdamEntry<T>::from(step));
  });
}

// Calls body.operator()<W>() with the smallest width limit W that holds the
// shape's K and Kv (attn_dims has checked them against kAttnMaxWidth).
template <typename Body>
void with_attention_width(const AttentionShape& shape, Body&& body) {
  const int64_t widest = std::max(shape.width, shape.value_width);
  if (widest <= 64)
    body.template operator()<64>();
  else if (widest <= 128)
    body.template operator()<128>();
  else
    body.template operator()<kAttnMaxWidth>();
}

void CudaBackend::attention_forward(DType dtype, const AttentionShape& shape, const void* q, const void* k,
                                    const void* v, void* out, void* lse) {
  activate();
  const DeviceScratch lengths(*this, shape.key_lengths), query_starts(*this, shape.query_starts),
      key_starts(*this, shape.key_starts);
  const AttnDims d = attn_dims(shape, lengths.ints(), query_starts.ints(), key_starts.ints());
  const int64_t blocks = shape.batch * ((shape.queries + kAttnRows - 1) / kAttnRows);
  if (blocks <= 0) return;
  launch_float(dtype, "attention", [&]<typename T>(T) {
    with_attention_width(shape, [&]<int W>() {
      attention_forward_kernel<T, W><<<static_cast<unsigned>(blocks), kAttnRows>>>(
          d, static_cast<T>(shape.scale), static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
          static_cast<T*>(out), static_cast<T*>(lse));
    });
  });
}

// Three kernels: delta (one per query), then d_k and d_v (a thread per key), then d_q (a thread
// per query), with delta in a device scratch of one per query row.
void CudaBackend::attention_backward(DType dtype, const AttentionShape& shape, const void* q, const void* k,
                                     const void* v, const void* out, const void* d_out, const void* lse, void* d_q,
                                     void* d_k, void* d_v) {
  activate();
  const DeviceScratch lengths(*this, shape.key_lengths), query_starts(*this, shape.query_starts),
      key_starts(*this, shape.key_starts);
  const AttnDims d = attn_dims(shape, lengths.ints(), query_starts.ints(), key_starts.ints());
  const int64_t rows = shape.query_rows();
  const int64_t q_blocks = shape.batch * ((shape.queries + kAttnRows - 1) / kAttnRows);
  const int64_t k_blocks = shape.batch * ((shape.keys + kAttnRows - 1) / kAttnRows);
  const DeviceScratch delta(*this, static_cast<size_t>(std::max<int64_t>(rows, 1)) * dtype_size(dtype));
  launch_float(dtype, "attention", [&]<typename T>(T) {
    const T scale = static_cast<T>(shape.scale);
    const T *q_ = static_cast<const T*>(q), *k_ = static_cast<const T*>(k), *v_ = static_cast<const T*>(v);
    const T *g_ = static_cast<const T*>(d_out), *lse_ = static_cast<const T*>(lse);
    T* delta_ = static_cast<T*>(delta.data);
    if (rows > 0)
      attention_delta_kernel<T>
          <<<grid_for(rows), kThreads>>>(rows, shape.value_width, static_cast<const T*>(out), g_, delta_);
    with_attention_width(shape, [&]<int W>() {
      if (k_blocks > 0)
        attention_dkv_kernel<T, W><<<static_cast<unsigned>(k_blocks), kAttnRows>>>(
            d, scale, q_, k_, v_, g_, lse_, delta_, static_cast<T*>(d_k), static_cast<T*>(d_v));
      if (q_blocks > 0)
        attention_dq_kernel<T, W><<<static_cast<unsigned>(q_blocks), kAttnRows>>>(d, scale, q_, k_, v_, g_, lse_,
                                                                                  delta_, static_cast<T*>(d_q));
    });
  });
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: hand cuBLAS B first.
void CudaBackend::gemm_batched(DType dtype, bool transpose_a, bool transpose_b, int64_t batch, int64_t M, int64_t N,
                               int64_t K, double alpha, const void* A, int64_t stride_a, const void* B,
                               int64_t stride_b, double beta, void* C, int64_t stride_c) {
  if (dtype == DType::I64) throw std::runtime_error("cuda backend: gemm does not support int64");
  if (batch <= 0 || M <= 0 || N <= 0) return;
  activate();
  if (K <= 0) {  // op(A) op(B) is empty: C = beta * C
    scale_batched(dtype, C, batch, M * N, stride_c, beta);
    return;
  }
  const int64_t limit = 0x7fffffff;
  if (M > limit || N > limit || K > limit || batch > limit)
    throw std::runtime_error("cuda backend: gemm dimensions exceed cuBLAS's int range");
  // With a shared output (stride 0) the batches accumulate one after another, as on the CPU.
  const int64_t calls = stride_c == 0 ? batch : 1;
  const int64_t per_call = stride_c == 0 ? 1 : batch;
  const cublasOperation_t op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = static_cast<int>(transpose_b ? K : N);
  const int lda = static_cast<int>(transpose_a ? M : K);
  const int ldc = static_cast<int>(N);
  const size_t elem = dtype_size(dtype);
  for (int64_t call = 0; call < calls; ++call) {  // beta applies at every batch entry, as on the CPU
    const char* a = static_cast<const char*>(A) + call * stride_a * elem;
    const char* b = static_cast<const char*>(B) + call * stride_b * elem;
    void* c = C;  // stride_c is 0 when there are several calls
    if (dtype == DType::F32) {
      const float al = static_cast<float>(alpha), be = static_cast<float>(beta);
      QKV_CUBLAS_CHECK(cublasSgemmStridedBatched(
          cublas_, op_b, op_a, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &al,
          reinterpret_cast<const float*>(b), ldb, stride_b, reinterpret_cast<const float*>(a), lda, stride_a, &be,
          reinterpret_cast<float*>(c), ldc, stride_c, static_cast<int>(per_call)));
    } else {
      const double al = alpha, be = beta;
      QKV_CUBLAS_CHECK(cublasDgemmStridedBatched(
          cublas_, op_b, op_a, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &al,
          reinterpret_cast<const double*>(b), ldb, stride_b, reinterpret_cast<const double*>(a), lda, stride_a, &be,
          reinterpret_cast<double*>(c), ldc, stride_c, static_cast<int>(per_call)));
    }
  }
}

}  // namespace qkv::cuda
