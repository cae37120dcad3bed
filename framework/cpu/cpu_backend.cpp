// framework/cpu/cpu_backend.cpp — the CPU backend: OpenBLAS gemm plus plain loops, in float32
// and float64, split over one pool of threads (thread_pool.h). Every element is computed in a fixed
// order whatever the thread count, so results are bit-for-bit reproducible on any number of threads.
#include <cblas.h>
#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "../backend.h"
#include "../scalar_formulas.h"
#include "cpu_attention.h"
#include "row_reductions.h"
#include "thread_pool.h"
#include "vector_exp.h"

namespace qkv {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;  // x86-64's transparent huge page

// A block from the system: 64-byte aligned, and from 2 MiB up aligned to 2 MiB and offered to the
// kernel's transparent huge pages (madvise; a no-op where they are off). One TLB entry then covers
// 2 MiB of a large matrix instead of 4 KiB: the gemm's packing walks the rows of its operands, a
// page apart at the large size's widths. The bits do not depend on where the memory lies. (With
// the heap's mmap threshold raised (CpuBackend's mallopt), glibc serves the alignment from the
// heap and leaves up to 2 MiB before each such block free for smaller ones: address space, not
// memory in use.)
void* system_block(size_t bytes) {
  if (bytes < kHugePage) return std::aligned_alloc(64, bytes);
  void* p = nullptr;
  if (posix_memalign(&p, kHugePage, bytes) != 0) return nullptr;
  madvise(p, bytes, MADV_HUGEPAGE);  // advice only: a kernel without it leaves the pages as they are
  return p;
}

// Tensor storage: system_block's blocks (sizes rounded to 64 B, to 64 KiB above 1 MiB), cached on
// release (block_cache.h): at most 256 MiB, and at most the largest working set seen. Never
// destroyed: tensors in other statics may be released during exit.
BlockCache& storage_cache() {
  static BlockCache* cache = new BlockCache({system_block, [](void* p) { std::free(p); }}, /*small_step=*/64,
                                            /*large_step=*/size_t{64} << 10, /*cache_limit=*/size_t{256} << 20);
  return *cache;
}

// Loops over at least this many elements are split across the loop threads (set_cpu_threads).
// Each element is computed by exactly one thread, in the same way whatever the split, so results
// are bit-identical for any thread count. Below it one thread is faster than waking the others.
constexpr int64_t kParallelElements = int64_t{1} << 15;

// A split loop is cut into this many pieces per thread (at most), taken by the threads as they
// come free (thread_pool.h): a thread the kernel has descheduled holds up one piece, not half.
constexpr int64_t kPiecesPerThread = 4;

// Calls fn(begin, end) on contiguous pieces of [0, n), with at least `grain` items in each, or on
// the whole range on the calling thread when n is too small to share or the call would run on the
// caller alone anyway (cpu::runs_alone: one thread, a nested call, a stretch alone after stalls),
// so that the caller does the whole range at once, not piece by piece. Where a piece starts must
// not change what fn computes (each item is computed by one piece, in the same way whatever the cut).
template <typename Fn>
void parallel_ranges(int64_t n, int64_t grain, Fn&& fn) {
  const int64_t most = n / std::max<int64_t>(grain, 1);
  const int64_t threads = most > 1 && !cpu::runs_alone() ? cpu::pool_threads() : 1;
  if (threads <= 1) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  const int64_t pieces = std::min(most, threads * kPiecesPerThread);
  cpu::for_each_piece(pieces, [&](int64_t p) {
    const int64_t begin = n * p / pieces, end = n * (p + 1) / pieces;
    if (end > begin) fn(begin, end);
  });
}

// The rows of `width` entries that make a piece worth a thread.
int64_t row_grain(int64_t width) { return std::max<int64_t>(1, kParallelElements / 2 / std::max<int64_t>(width, 1)); }

// Visits every index of `shape` row by row (the last dim is the inner loop). For each row it
// calls fn(base offsets..., inner length, inner strides...) with up to three stride sets, after
// formula::merge_dimensions (size-1 dims dropped, contiguous neighbours merged). With `parallel`
// (fn must then write different elements for different rows) a large loop is split across the
// loop threads: by rows, or within the row when there is only one.
template <size_t N, typename Fn>
void for_each_row(const Shape& full_shape, const std::array<const Strides*, N>& full_strides, Fn&& fn,
                  bool parallel = false) {
  const int64_t numel = shape_numel(full_shape);
  if (numel == 0) return;
  const formula::MergedDims merged =
      formula::merge_dimensions(full_shape, std::vector<const Strides*>(full_strides.begin(), full_strides.end()));
  const Shape& shape = merged.shape;
  const std::vector<Strides>& strides = merged.strides;
  const size_t rank = shape.size();
  std::array<int64_t, N> inner_stride{};
  if (rank == 0) {
    fn(std::array<int64_t, N>{}, int64_t{1}, inner_stride);
    return;
  }
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][rank - 1];
  const int64_t inner = shape[rank - 1];
  const int64_t rows = numel / inner;
  // rows [row_begin, row_end): the outer index starts at row_begin and advances odometer style
  auto walk_rows = [&](int64_t row_begin, int64_t row_end) {
    std::vector<int64_t> index(rank, 0);
    std::array<int64_t, N> base{};
    int64_t rest = row_begin;
    for (size_t d = rank - 1; d-- > 0;) {
      index[d] = rest % shape[d];
      rest /= shape[d];
      for (size_t k = 0; k < N; ++k) base[k] += index[d] * strides[k][d];
    }
    for (int64_t row = row_begin; row < row_end; ++row) {
      fn(base, inner, inner_stride);
      size_t d = rank - 1;
      while (d-- > 0) {
        ++index[d];
        for (size_t k = 0; k < N; ++k) base[k] += strides[k][d];
        if (index[d] < shape[d]) break;
        for (size_t k = 0; k < N; ++k) base[k] -= strides[k][d] * shape[d];
        index[d] = 0;
      }
    }
  };
  if (!parallel || numel < kParallelElements) return walk_rows(0, rows);
  if (rows == 1) {  // one long row: split it
    parallel_ranges(inner, kParallelElements / 2, [&](int64_t begin, int64_t end) {
      std::array<int64_t, N> base{};
      for (size_t k = 0; k < N; ++k) base[k] = begin * inner_stride[k];
      fn(base, end - begin, inner_stride);
    });
    return;
  }
  parallel_ranges(rows, row_grain(inner), walk_rows);
}

// The contiguous elementwise loops are compiled twice, for the baseline and for AVX2, and the AVX2
// copy runs where the processor has it. Without FMA and with this file's -ffp-contract=off (the
// Makefile) each entry takes the same operations in the same order in both, so they give the same
// bits (flatten inlines the op into the AVX2 copy); so do the LayerNorm and Adam copies below.
template <typename T, typename F>
__attribute__((target("avx2"), flatten)) void map_avx2(const T* a, const T* b, T* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

template <typename T, typename F>
void map(const T* a, const T* b, T* out, int64_t n, F f) {
  if (cpu::cpu_has_avx2()) return map_avx2(a, b, out, n, f);
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

// One unary op with Op fixed at compile time: formula::unary's switch folds away, so each loop
// below is branch-free and vectorisable.
template <UnaryOp Op, typename T>
void unary_fixed(const T* in, T* out, int64_t n, T s) {
  map(in, in, out, n, [s](T x, T) { return formula::unary(Op, x, s); });
}

// One case per line of elementwise_ops.def, each a loop of its own.
template <typename T>
void unary_loop(UnaryOp op, const T* in, T* out, int64_t n, T s) {
  switch (op) {
// clang-format off
#define QKV_UNARY_OP(name, expression) \
  case UnaryOp::name: return unary_fixed<UnaryOp::name, T>(in, out, n, s);
#include "../elementwise_ops.def"
    // clang-format on
  }
}

template <typename T, typename F>
void binary_loop(const T* a, const Strides& sa, const T* b, const Strides& sb, T* out, const Shape& shape, F f) {
  const Strides so = contiguous_strides(shape);
  for_each_row<3>(
      shape, {&sa, &sb, &so},
      [&](auto base, int64_t n, auto step) {
        const T* pa = a + base[0];
        const T* pb = b + base[1];
        T* po = out + base[2];
        if (step[0] == 1 && step[1] == 1) {
          map(pa, pb, po, n, f);
        } else if (step[0] == 1 && step[1] == 0) {
          const T vb = *pb;
          map(pa, pa, po, n, [f, vb](T x, T) { return f(x, vb); });
        } else {
          for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i * step[0]], pb[i * step[1]]);
        }
      },
      /*parallel=*/true);
}

// A full sum is cut into blocks of this many entries (a shape-only split; see reduce_sum_typed).
constexpr int64_t kSumBlock = int64_t{1} << 14;

// A sum whose reduced dims all come before its kept dims (column sums of a (rows, width) view) or
// all after them (row sums), as (rows, width, columns?); else rows == 0. Dims of size 1 are ignored.
struct RowsAndWidth {
  int64_t rows = 0, width = 0;
  bool columns = false;
};
RowsAndWidth two_block_sum(const Shape& in_shape, const Shape& out_shape) {
  RowsAndWidth r{1, 1, false};
  int pattern = 0;  // 0 nothing yet, 1 reduced first, 2 kept first
  int switches = 0;
  int last = 0;  // 1 reduced, 2 kept
  for (size_t d = 0; d < in_shape.size(); ++d) {
    if (in_shape[d] == 1) continue;
    const int kind = out_shape[d] == 1 ? 1 : 2;
    if (pattern == 0) pattern = kind;
    if (last != 0 && kind != last) ++switches;
    last = kind;
    (kind == 1 ? r.rows : r.width) *= in_shape[d];
  }
  if (switches > 1) return {};
  r.columns = pattern == 1;                    // reduced dims first: the sum runs down the columns
  if (!r.columns) std::swap(r.rows, r.width);  // kept dims first: (kept rows, reduced width)
  return r;
}

// A sum of all n entries (of their squares, with Square): blocks of kSumBlock in parallel, each
// row_sum_of's lanes, then the blocks in order, in double.
template <bool Square, typename T>
double sum_all(const T* in, int64_t n) {
  const int64_t blocks = (n + kSumBlock - 1) / kSumBlock;
  std::vector<double> partial(static_cast<size_t>(std::max<int64_t>(blocks, 1)), 0.0);
  parallel_ranges(blocks, kParallelElements / kSumBlock, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      partial[b] = cpu::row_sum_of<Square>(in + b * kSumBlock, std::min(kSumBlock, n - b * kSumBlock));
  });
  double total = 0.0;
  for (double block : partial) total += block;
  return total;
}

template <typename T>
void reduce_sum_typed(const T* in, const Shape& in_shape, T* out, const Shape& out_shape) {
  const int64_t n_out = shape_numel(out_shape);
  if (n_out == 1) {  // a sum of everything
    out[0] = static_cast<T>(sum_all<false>(in, shape_numel(in_shape)));
    return;
  }
  // The two common sums in parallel, each output by one thread in a fixed order (rows in order
  // down a column; row_sum's lanes along a row), so the bits do not depend on the thread count.
  const RowsAndWidth two = two_block_sum(in_shape, out_shape);
  if (two.rows > 0 && two.rows * two.width >= kParallelElements) {
    if (two.columns) {  // (rows, width) -> (width)
      parallel_ranges(two.width, 8, [&](int64_t c0, int64_t c1) {
        std::vector<double> acc(static_cast<size_t>(c1 - c0), 0.0);
        for (int64_t r = 0; r < two.rows; ++r) cpu::add_row(acc.data(), in + r * two.width + c0, c1 - c0);
        for (int64_t c = c0; c < c1; ++c) out[c] = static_cast<T>(acc[c - c0]);
      });
    } else {  // (rows, width) -> (rows)
      parallel_ranges(two.rows, row_grain(two.width), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) out[r] = static_cast<T>(cpu::row_sum(in + r * two.width, two.width));
      });
    }
    return;
  }
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

// Calls fn(N, row) for the rows [begin, end), N (an integral_constant) rows from each `row`: four at a
// time, then the rest one at a time (the LayerNorm formulas of N rows give the bits of one row).
template <typename Fn>
inline void four_rows_at_a_time(int64_t begin, int64_t end, Fn&& fn) {
  int64_t row = begin;
  for (; row + 4 <= end; row += 4) fn(std::integral_constant<int, 4>{}, row);
  for (; row < end; ++row) fn(std::integral_constant<int, 1>{}, row);
}

// One LayerNorm call's arrays (Backend::layer_norm_rows), and its rows [begin, end).
template <typename T>
struct LayerNormRows {
  const T *x, *residual, *w, *b;
  int64_t width;
  double eps;
  T *out, *x_hat, *rstd;
};
template <typename T>
inline void layer_norm_range(const LayerNormRows<T>& a, int64_t begin, int64_t end) {
  four_rows_at_a_time(begin, end, [&](auto rows_at_once, int64_t row) {
    const int64_t at = row * a.width;
    formula::layer_norm_rows_n<decltype(rows_at_once)::value>(a.x + at, a.residual ? a.residual + at : nullptr, a.w,
                                                              a.b, a.width, a.eps, a.out + at, a.x_hat + at,
                                                              a.rstd + row);
  });
}

// The input gradient's arrays (Backend::layer_norm_backward_rows), and its rows [begin, end).
template <typename T>
struct LayerNormBackwardRows {
  const T *g, *x_hat, *rstd, *w;
  int64_t width;
  T* d_x;
};
template <typename T>
inline void layer_norm_range(const LayerNormBackwardRows<T>& a, int64_t begin, int64_t end) {
  four_rows_at_a_time(begin, end, [&](auto rows_at_once, int64_t row) {
    const int64_t at = row * a.width;
    formula::layer_norm_backward_rows_n<decltype(rows_at_once)::value>(a.g + at, a.x_hat + at, a.rstd + row, a.w,
                                                                       a.width, a.d_x + at);
  });
}

// The same loops compiled again for AVX2 (as map_avx2) with GCC's -O3 optimisations. -O3 vectorises
// the four rows' sums side by side, one lane per row, each row's additions still in its own order,
// and the entry loops lane by lane; GCC never reassociates floating-point sums without -ffast-math,
// so the bits are the baseline's (tests/engine/test_cpu_vector_forms.cpp). The speed: RESULTS.md,
// "The LayerNorm rows vectorised".
// Rows: LayerNormRows or LayerNormBackwardRows.
template <typename Rows>
__attribute__((target("avx2"), optimize("O3"), flatten)) void layer_norm_range_avx2(const Rows& a, int64_t begin,
                                                                                    int64_t end) {
  layer_norm_range(a, begin, end);
}

// All `rows` rows of a LayerNorm call (Rows as above), split over the threads.
template <typename Rows>
void layer_norm_all(const Rows& a, int64_t rows) {
  parallel_ranges(rows, row_grain(a.width), [&](int64_t row_begin, int64_t row_end) {
    if (cpu::cpu_has_avx2())
      layer_norm_range_avx2(a, row_begin, row_end);
    else
      layer_norm_range(a, row_begin, row_end);
  });
}

template <typename T, bool L2, bool Shrink>
__attribute__((always_inline)) inline void adam_loop(T* param, const T* grad, T* m, T* v, int64_t begin, int64_t end,
                                                     const formula::AdamEntry<T>& shared_adam) {
  // Everything through locals, so that the loop vectorises: a store to param[i] could otherwise
  // alias the coefficients behind the reference, and they would be reloaded every entry.
  const formula::AdamEntry<T> adam = shared_adam;
  for (int64_t i = begin; i < end; ++i) {
    T p = param[i], mi = m[i], vi = v[i];
    adam.template apply_as<L2, Shrink>(p, grad[i], mi, vi);
    param[i] = p;
    m[i] = mi;
    v[i] = vi;
  }
}

template <typename T>
__attribute__((always_inline)) inline void adam_range(T* param, const T* grad, T* m, T* v, int64_t begin, int64_t end,
                                                      const formula::AdamEntry<T>& adam) {
  if (adam.l2)
    adam_loop<T, true, false>(param, grad, m, v, begin, end, adam);
  else if (adam.shrink)
    adam_loop<T, false, true>(param, grad, m, v, begin, end, adam);
  else
    adam_loop<T, false, false>(param, grad, m, v, begin, end, adam);
}

// The same loops compiled for AVX2 (as map_avx2; sqrt and division are exactly rounded).
template <typename T>
__attribute__((target("avx2"))) void adam_range_avx2(T* param, const T* grad, T* m, T* v, int64_t begin, int64_t end,
                                                     const formula::AdamEntry<T>& adam) {
  adam_range(param, grad, m, v, begin, end, adam);
}

template <typename T>
void adam_update_typed(T* param, const T* grad, T* m, T* v, int64_t n, const AdamStep& s) {
  const formula::AdamEntry<T> adam = formula::AdamEntry<T>::from(s);
  parallel_ranges(n, kParallelElements / 2, [&](int64_t begin, int64_t end) {
    if (cpu::cpu_has_avx2())
      adam_range_avx2(param, grad, m, v, begin, end, adam);
    else
      adam_range(param, grad, m, v, begin, end, adam);
  });
}

// Turns n rotary pairs, (x1[i], x2[i]) by cos c[i] and sin s[i] * turn, 32 bytes of each at a time
// as GCC vectors (each lane takes rotate_pair's operations in its order, so the bits are the scalar
// form's), the rest one by one. y1 and y2 may be x1 and x2.
template <typename T>
void rotate_run(const T* x1, const T* x2, const T* c, const T* s, T turn, int64_t n, T* y1, T* y2) {
  typedef T Lanes __attribute__((vector_size(32)));
  constexpr int64_t kLanes = sizeof(Lanes) / sizeof(T);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Lanes a, b, cos_i, sin_i, out1, out2;
    std::memcpy(&a, x1 + i, sizeof(Lanes));
    std::memcpy(&b, x2 + i, sizeof(Lanes));
    std::memcpy(&cos_i, c + i, sizeof(Lanes));
    std::memcpy(&sin_i, s + i, sizeof(Lanes));
    formula::rotate_pair<Lanes>(a, b, cos_i, sin_i * turn, out1, out2);
    std::memcpy(y1 + i, &out1, sizeof(Lanes));
    std::memcpy(y2 + i, &out2, sizeof(Lanes));
  }
  for (; i < n; ++i) formula::rotate_pair(x1[i], x2[i], c[i], s[i] * turn, y1[i], y2[i]);
}

template <typename Body>
void dispatch_float(DType dtype, const char* what, Body&& body) {
  formula::dispatch_float(dtype, "cpu", what, body);
}

// Whether this CPU's OpenBLAS sgemm gives each entry of C the same bits however a product is cut
// into blocks of rows (or columns) of C, when every block is above the small-matrix sizes
// (kGemmSmallWork). Measured on OpenBLAS 0.3.21, the version Debian 12 ships, over 12,000 random
// shapes, transposes, alpha and beta: no bit differed with the AVX-512 kernels (SkylakeX,
// Cooperlake), while the Haswell and Zen kernels differed in three quarters of them. dgemm's AVX-512
// kernel differs now and then when columns are cut, so float64 keeps every piece its own call, as
// do other versions, kernels and builds (measured: Debian's, built for every processor; a build for
// one target may send small products to other kernels). tests/engine/test_threads.cpp checks it.
bool sgemm_cut_keeps_bits() {
  static const bool keeps = [] {
    const char* config = openblas_get_config();
    if (!config || std::string_view(config).substr(0, 16) != "OpenBLAS 0.3.21 " ||
        std::string_view(config).find(" DYNAMIC_ARCH ") == std::string_view::npos)
      return false;
    const char* name = openblas_get_corename();
    std::string core = name ? name : "";
    for (char& c : core) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return core == "skylakex" || core == "cooperlake";
  }();
  return keeps;
}

class CpuBackend final : public Backend {
 public:
  CpuBackend() {
    // Tensor storage is cached (storage_cache). The blocks it gives back past its limit, and the
    // kernels' scratch vectors, would by default be served by glibc with mmap above 128 KiB and
    // unmapped on free: system calls and fresh zeroed pages every time. These keep them in the heap.
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    openblas_set_num_threads(1);  // the loop threads split the gemms (gemm_batched)
  }
  std::string name() const override { return "cpu"; }

  void* allocate(size_t nbytes) override {
    void* p = storage_cache().allocate(nbytes);
    if (!p) throw std::runtime_error(fmt::format("cpu: out of memory allocating {} bytes", nbytes));
    return p;
  }
  void release(void* ptr) override { storage_cache().release(ptr); }
  void copy_to_host(void* dst, const void* src, size_t n) override { std::memcpy(dst, src, n); }
  void copy_from_host(void* dst, const void* src, size_t n) override { std::memcpy(dst, src, n); }
  void copy(void* dst, const void* src, size_t n) override { std::memmove(dst, src, n); }
  void synchronize() override {}  // every call has finished when it returns

  void fill(DType dtype, void* out, int64_t n, double value) override {
    formula::dispatch_dtype(dtype, [&]<typename T>(T) { std::fill_n(static_cast<T*>(out), n, static_cast<T>(value)); });
  }

  void cast(DType from, const void* in, DType to, void* out, int64_t n) override {
    if (from == to) {
      std::memcpy(out, in, n * dtype_size(to));
      return;
    }
    formula::dispatch_dtype(from, [&]<typename From>(From) {
      formula::dispatch_dtype(to, [&]<typename To>(To) {  // through double, as the GPU
        const From* x = static_cast<const From*>(in);
        for (int64_t i = 0; i < n; ++i) static_cast<To*>(out)[i] = static_cast<To>(static_cast<double>(x[i]));
      });
    });
  }

  void unary(UnaryOp op, DType dtype, const void* in, void* out, int64_t n, double s) override {
    dispatch_float(dtype, "unary", [&]<typename T>(T) {
      const T* x = static_cast<const T*>(in);
      T* y = static_cast<T*>(out);
      parallel_ranges(n, kParallelElements / 2, [&](int64_t begin, int64_t end) {
        if (op == UnaryOp::Exp) {  // vectorised (vector_exp.h): the same value as softmax's exp
          std::memmove(y + begin, x + begin, (end - begin) * sizeof(T));
          cpu::exp_in_place(y + begin, end - begin);
        } else {
          unary_loop<T>(op, x + begin, y + begin, end - begin, static_cast<T>(s));
        }
      });
    });
  }

  void binary(BinaryOp op, DType dtype, const void* a, const Strides& sa, const void* b, const Strides& sb, void* out,
              const Shape& shape) override {
    dispatch_float(dtype, "binary", [&]<typename T>(T) {
      const T *x = static_cast<const T*>(a), *y = static_cast<const T*>(b);
      switch (op) {  // Op fixed per loop (formula::binary's switch folds away inside each)
                     // clang-format off
#define QKV_BINARY_OP(name, expression) \
  case BinaryOp::name: \
    return binary_loop(x, sa, y, sb, static_cast<T*>(out), shape, [](T u, T w) { return formula::binary(BinaryOp::name, u, w); });
#include "../elementwise_ops.def"
                     // clang-format on
      }
    });
  }

  void masked_fill(DType dtype, const void* in, const void* keep, const Strides& keep_strides, double value, void* out,
                   const Shape& shape) override {
    dispatch_float(dtype, "masked_fill", [&]<typename T>(T) {
      const Strides s = contiguous_strides(shape);
      const T* x = static_cast<const T*>(in);
      const T* k = static_cast<const T*>(keep);
      T* y = static_cast<T*>(out);
      const T fill_value = static_cast<T>(value);
      for_each_row<2>(
          shape, {&s, &keep_strides},
          [&](auto base, int64_t n, auto step) {
            for (int64_t i = 0; i < n; ++i)
              y[base[0] + i] = k[base[1] + i * step[1]] != T(0) ? x[base[0] + i] : fill_value;
          },
          /*parallel=*/true);
    });
  }

  void strided_copy(DType dtype, const void* in, const Strides& si, void* out, const Strides& so,
                    const Shape& shape) override {
    const auto copy_as = [&]<typename T>(T) {  // by element size: int64 as double's bits
      const T* x = static_cast<const T*>(in);
      T* y = static_cast<T*>(out);
      for_each_row<2>(
          shape, {&si, &so},
          [&](auto base, int64_t n, auto step) {
            if (step[0] == 1 && step[1] == 1)
              std::memcpy(y + base[1], x + base[0], n * sizeof(T));
            else
              for (int64_t i = 0; i < n; ++i) y[base[1] + i * step[1]] = x[base[0] + i * step[0]];
          },
          /*parallel=*/true);
    };
    dtype_size(dtype) == 4 ? copy_as(float{}) : copy_as(double{});
  }

  void reduce_sum(DType dtype, const void* in, const Shape& in_shape, void* out, const Shape& out_shape) override {
    dispatch_float(dtype, "reduce_sum", [&]<typename T>(T) {
      reduce_sum_typed<T>(static_cast<const T*>(in), in_shape, static_cast<T*>(out), out_shape);
    });
  }

  void sum_squares(DType dtype, const void* in, int64_t n, bool accumulate, void* out) override {
    dispatch_float(dtype, "sum_squares", [&]<typename T>(T) {
      T* o = static_cast<T*>(out);
      const T total = static_cast<T>(sum_all<true>(static_cast<const T*>(in), n));
      *o = accumulate ? *o + total : total;
    });
  }

  void max_along(DType dtype, const void* in, int64_t outer, int64_t n, int64_t inner, void* out_values,
                 int64_t* out_indices) override {
    dispatch_float(dtype, "max_along", [&]<typename T>(T) {
      const T* x = static_cast<const T*>(in);
      T* v = static_cast<T*>(out_values);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const formula::Argmax<T> best = formula::argmax_strided(x + o * n * inner + i, n, inner);
          v[o * inner + i] = best.value;
          out_indices[o * inner + i] = best.index;
        }
    });
  }

  void put_along_add(DType dtype, void* x, int64_t outer, int64_t n, int64_t inner, const int64_t* index,
                     const void* values) override {
    dispatch_float(dtype, "put_along_add", [&]<typename T>(T) {
      T* p = static_cast<T*>(x);
      const T* v = static_cast<const T*>(values);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) p[(o * n + index[o * inner + i]) * inner + i] += v[o * inner + i];
    });
  }

  void gather_rows(DType dtype, const void* table, int64_t width, const int64_t* index, int64_t count, void* out,
                   RowRuns rows) override {
    const size_t row_bytes = static_cast<size_t>(width) * dtype_size(dtype);
    for (int64_t m = 0; m < count; ++m)
      std::memcpy(static_cast<char*>(out) + formula::dense_row(rows, m) * row_bytes,
                  static_cast<const char*>(table) + index[m] * row_bytes, row_bytes);
  }

  void scatter_add_rows(DType dtype, void* table, int64_t width, const int64_t* index, int64_t count,
                        const void* values, RowRuns rows) override {
    dispatch_float(dtype, "scatter_add_rows", [&]<typename T>(T) {
      T* t = static_cast<T*>(table);
      const T* v = static_cast<const T*>(values);
      for (int64_t m = 0; m < count; ++m) {
        T* row = t + index[m] * width;
        const T* src = v + formula::dense_row(rows, m) * width;
        for (int64_t d = 0; d < width; ++d) row[d] += src[d];
      }
    });
  }

  void check_indices(const IndexCheck& check, const int64_t* index, int64_t count, int64_t* safe, DType valid_dtype,
                     void* valid) override {
    for (int64_t i = 0; i < count; ++i) {
      const bool ignored = check.has_ignore && index[i] == check.ignore;
      if (!ignored && (index[i] < 0 || index[i] >= check.limit))
        throw std::runtime_error(fmt::format("{} {} out of range for {}", check.what, index[i], check.range));
      safe[i] = ignored ? 0 : index[i];
    }
    if (!valid) return;
    dispatch_float(valid_dtype, "check_indices", [&]<typename T>(T) {
      T* out = static_cast<T*>(valid);
      for (int64_t i = 0; i < count; ++i) out[i] = check.has_ignore && index[i] == check.ignore ? T(0) : T(1);
    });
  }

  void adam_update(DType dtype, void* param, const void* grad, void* exp_avg, void* exp_avg_sq, int64_t n,
                   const AdamStep& s) override {
    dispatch_float(dtype, "adam_update", [&]<typename T>(T) {
      adam_update_typed<T>(static_cast<T*>(param), static_cast<const T*>(grad), static_cast<T*>(exp_avg),
                           static_cast<T*>(exp_avg_sq), n, s);
    });
  }

  // A row's max m (a NaN anywhere makes the row NaN; -inf: a fully masked row). Its exps are then
  // exp(x - m) in the tensor's own precision (as PyTorch does; vectorised, vector_exp.h), summed in
  // double in a fixed order (row_sum).
  void softmax_rows(DType dtype, const void* in, void* out, int64_t rows, int64_t cols, bool log) override {
    dispatch_float(dtype, "softmax", [&]<typename T>(T) {
      parallel_ranges(rows, row_grain(cols), [&](int64_t row_begin, int64_t row_end) {
        for (int64_t r = row_begin; r < row_end; ++r) {
          const T* x = static_cast<const T*>(in) + r * cols;
          T* y = static_cast<T*>(out) + r * cols;
          const T m = cpu::row_max(x, cols);
          if (m == -std::numeric_limits<T>::infinity()) {  // fully masked row: zeros, not NaN
            std::fill(y, y + cols, T(0));
            continue;
          }
          cpu::exp_of_difference(x, cols, m, y);
          const double total = cpu::row_sum(y, cols);
          if (log) {
            const T shift = m + static_cast<T>(std::log(total));
            for (int64_t c = 0; c < cols; ++c) y[c] = x[c] - shift;
          } else {
            const T inv = static_cast<T>(1.0 / total);
            for (int64_t c = 0; c < cols; ++c) y[c] *= inv;
          }
        }
      });
    });
  }

  void log_softmax_pick(DType dtype, const void* x, int64_t rows, int64_t cols, const int64_t* index, void* shift,
                        void* picked) override {
    dispatch_float(dtype, "log_softmax_pick", [&]<typename T>(T) {  // softmax_rows' shift, the exps summed as made
      parallel_ranges(rows, row_grain(cols), [&](int64_t row_begin, int64_t row_end) {
        for (int64_t r = row_begin; r < row_end; ++r) {
          const T* row = static_cast<const T*>(x) + r * cols;
          const T m = cpu::row_max(row, cols);  // -inf: a fully masked row, log_softmax's zeros
          const T s = m == -std::numeric_limits<T>::infinity()
                          ? m
                          : m + static_cast<T>(std::log(cpu::sum_exp_of_difference(row, cols, m)));
          static_cast<T*>(shift)[r] = s;
          static_cast<T*>(picked)[r] = m == -std::numeric_limits<T>::infinity() ? T(0) : row[index[r]] - s;
        }
      });
    });
  }

  void softmax_minus_onehot(DType dtype, const void* x, const void* shift, const int64_t* index, const void* factor,
                            int64_t rows, int64_t cols, void* out) override {
    dispatch_float(dtype, "softmax_minus_onehot", [&]<typename T>(T) {  // a row at a time, one pass (vector_exp.h)
      parallel_ranges(rows, row_grain(cols), [&](int64_t row_begin, int64_t row_end) {
        for (int64_t r = row_begin; r < row_end; ++r) {
          const T s = static_cast<const T*>(shift)[r], f = static_cast<const T*>(factor)[r];
          T* y = static_cast<T*>(out) + r * cols;
          if (s != -std::numeric_limits<T>::infinity()) {
            cpu::softmax_minus_onehot_row(static_cast<const T*>(x) + r * cols, cols, s, index[r], f, y);
            continue;
          }
          std::fill(y, y + cols, T(1));
          y[index[r]] += T(-1);
          for (int64_t c = 0; c < cols; ++c) y[c] *= f;
        }
      });
    });
  }

  void layer_norm_rows(DType dtype, const void* x, const void* residual, const void* weight, const void* bias,
                       int64_t rows, int64_t width, double eps, void* out, void* x_hat, void* rstd) override {
    dispatch_float(dtype, "layer_norm", [&]<typename T>(T) {
      const LayerNormRows<T> rows_of(static_cast<const T*>(x), static_cast<const T*>(residual),
                                     static_cast<const T*>(weight), static_cast<const T*>(bias), width, eps,
                                     static_cast<T*>(out), static_cast<T*>(x_hat), static_cast<T*>(rstd));
      layer_norm_all(rows_of, rows);
    });
  }

  void layer_norm_backward_rows(DType dtype, const void* g, const void* x_hat, const void* rstd, const void* weight,
                                int64_t rows, int64_t width, void* d_x) override {
    dispatch_float(dtype, "layer_norm backward", [&]<typename T>(T) {
      const LayerNormBackwardRows<T> rows_of(static_cast<const T*>(g), static_cast<const T*>(x_hat),
                                             static_cast<const T*>(rstd), static_cast<const T*>(weight), width,
                                             static_cast<T*>(d_x));
      layer_norm_all(rows_of, rows);
    });
  }

  void rotary_rows(DType dtype, const void* x, const void* cos, const void* sin, int64_t rows, int64_t width,
                   int64_t half, int64_t blocks, double sign, void* out) override {
    dispatch_float(dtype, "rotary", [&]<typename T>(T) {
      const T *in = static_cast<const T*>(x), *c = static_cast<const T*>(cos), *s = static_cast<const T*>(sin);
      T* y = static_cast<T*>(out);
      const T turn = static_cast<T>(sign);
      parallel_ranges(rows, row_grain(width), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T *row = in + r * width, *cr = c + r * half, *sr = s + r * half;
          T* to = y + r * width;
          for (int64_t b = 0; b < blocks; ++b) {
            const int64_t at = b * 2 * half;
            rotate_run(row + at, row + at + half, cr, sr, turn, half, to + at, to + at + half);
          }
        }
      });
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

  // OpenBLAS runs single-threaded (set_cpu_threads). A call is cut into pieces that do not depend
  // on the thread count: each batch entry, and within an entry of at least kGemmSplitWork
  // multiply-adds, about kGemmPieces blocks of rows of C (or columns, when C is wider than tall),
  // each a multiple of kGemmChunk. The loop threads share out the pieces, so one pool of threads
  // serves gemm and the loops above, and a run gives the same bits on any number of threads.
  // Fewer, larger blocks cost less: every block repacks the other operand, and OpenBLAS runs a
  // 64-row block measurably slower than one call over 256 or more rows; where the bits allow it, a
  // thread's consecutive pieces go to OpenBLAS as one call.
  void gemm_batched(DType dtype, bool ta, bool tb, int64_t batch, int64_t M, int64_t N, int64_t K, double alpha,
                    const void* A, int64_t stride_a, const void* B, int64_t stride_b, double beta, void* C,
                    int64_t stride_c) override {
    if (M == 0 || N == 0) return;
    if (dtype != DType::F32 && dtype != DType::F64)
      throw std::runtime_error("cpu backend: gemm does not support int64");
    const int64_t lda = ta ? M : K, ldb = tb ? K : N, ldc = N;
    const size_t elem = dtype_size(dtype);
    const double work = static_cast<double>(M) * N * std::max<int64_t>(K, 1);  // multiply-adds per entry
    const bool split = work >= kGemmSplitWork;
    const bool by_rows = M >= N;
    const int64_t length = by_rows ? M : N;  // the dimension that is cut
    const int64_t block = split ? gemm_block(length) : length;
    const int64_t chunks = (length + block - 1) / block;
    // pieces [p, e) of one batch entry (p / chunks) as one call: rows (or columns) [c0, c1) of its C
    auto pieces = [&](int64_t p, int64_t e) {
      const int64_t b = p / chunks, c0 = (p % chunks) * block;
      const int64_t c1 = std::min<int64_t>(((e - 1) % chunks + 1) * block, length);
      const int64_t m0 = by_rows ? c0 : 0, m1 = by_rows ? c1 : M, n0 = by_rows ? 0 : c0, n1 = by_rows ? N : c1;
      const char* a = static_cast<const char*>(A) + (b * stride_a + (ta ? m0 : m0 * lda)) * elem;
      const char* bb = static_cast<const char*>(B) + (b * stride_b + (tb ? n0 * ldb : n0)) * elem;
      char* c = static_cast<char*>(C) + (b * stride_c + m0 * ldc + n0) * elem;
      gemm_call(dtype, ta, tb, m1 - m0, n1 - n0, K, alpha, a, lda, bb, ldb, beta, c, ldc);
    };
    // A thread's run of pieces [p0, p1): consecutive pieces of one entry go to OpenBLAS as one call,
    // which packs the other operand once, not once per piece, where that gives each entry of C the
    // pieces' bits: float32 on sgemm_cut_keeps_bits() kernels, for pieces above the products
    // OpenBLAS sends to its small-matrix kernels (which add in another order). A last piece below
    // that size runs alone. Where pieces join, one thread runs each entry in one or two calls; more
    // threads take the pieces one by one (or a few).
    const double per_row = work / static_cast<double>(length);  // multiply-adds per row (or column) of C
    const bool join_blocks =
        split && dtype == DType::F32 && sgemm_cut_keeps_bits() && static_cast<double>(block) * per_row > kGemmSmallWork;
    const bool join_last = static_cast<double>(length - (chunks - 1) * block) * per_row > kGemmSmallWork;
    auto run = [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1;) {
        int64_t e = p + 1;
        if (join_blocks) {
          const int64_t entry_end = (p / chunks + 1) * chunks;
          e = std::max(e, std::min(p1, join_last ? entry_end : entry_end - 1));
        }
        pieces(p, e);
        p = e;
      }
    };
    const int64_t per_thread = split ? 1 : std::max<int64_t>(1, static_cast<int64_t>(kGemmSplitWork / work));
    if (stride_c == 0 && batch > 1) {  // every entry adds into the same C: entries in order
      for (int64_t b = 0; b < batch; ++b)
        parallel_ranges(chunks, 1, [&](int64_t p0, int64_t p1) { run(b * chunks + p0, b * chunks + p1); });
      return;
    }
    parallel_ranges(batch * chunks, per_thread, run);
  }

 private:
  // An entry of at least this many multiply-adds is cut into blocks of kGemmChunk rows (or columns);
  // smaller entries are shared out whole, enough of them per thread to be worth waking it.
  static constexpr double kGemmSplitWork = double(int64_t{1} << 19);
  // OpenBLAS 0.3.21 sends float products of up to 100^3 multiply-adds to its small-matrix kernels
  // (on AVX-512; measured: merged pieces of 0.96e6 to 1e6 changed bits in 250 of 400 shapes, of
  // 1e6 to 2.2e6 in none of 2,300).
  static constexpr double kGemmSmallWork = 1e6;
  static constexpr int64_t kGemmChunk = 64, kGemmPieces = 8, kGemmMaxBlock = 512;
  // Rows (or columns) per block for a cut dimension of `length`: length / kGemmPieces rounded up to
  // a multiple of kGemmChunk, between kGemmChunk and kGemmMaxBlock. A function of the shape only.
  static int64_t gemm_block(int64_t length) {
    const int64_t per_piece = (length + kGemmPieces - 1) / kGemmPieces;
    return std::clamp<int64_t>((per_piece + kGemmChunk - 1) / kGemmChunk * kGemmChunk, kGemmChunk, kGemmMaxBlock);
  }

  static void gemm_call(DType dtype, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                        int64_t lda, const void* B, int64_t ldb, double beta, void* C, int64_t ldc) {
    const CBLAS_TRANSPOSE op_a = ta ? CblasTrans : CblasNoTrans;
    const CBLAS_TRANSPOSE op_b = tb ? CblasTrans : CblasNoTrans;
    const int lda_i = static_cast<int>(std::max<int64_t>(lda, 1)), ldb_i = static_cast<int>(std::max<int64_t>(ldb, 1));
    if (dtype == DType::F32)
      cblas_sgemm(CblasRowMajor, op_a, op_b, M, N, K, static_cast<float>(alpha), static_cast<const float*>(A), lda_i,
                  static_cast<const float*>(B), ldb_i, static_cast<float>(beta), static_cast<float*>(C),
                  static_cast<int>(ldc));
    else
      cblas_dgemm(CblasRowMajor, op_a, op_b, M, N, K, alpha, static_cast<const double*>(A), lda_i,
                  static_cast<const double*>(B), ldb_i, beta, static_cast<double*>(C), static_cast<int>(ldc));
  }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

MemoryUse cpu_memory_use() { return storage_cache().use(); }
void reset_cpu_memory_peak() { storage_cache().reset_peak(); }

void set_cpu_threads(int threads) {
  cpu_backend();  // constructed first: it puts OpenBLAS on one thread
  cpu::set_pool_threads(threads);
}

int cpu_threads() { return cpu::pool_threads(); }

}  // namespace qkv
