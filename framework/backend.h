// framework/backend.h — the primitive kernels a device must provide (Backend, made from the list in
// backend_primitives.def) and the types they take. A backend knows loops, gemm and memory; it never
// knows a derivative. Ops (ops_*.cpp) compose these primitives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block_cache.h"
#include "tensor.h"

namespace qkv {

// The elementwise functions of Backend::unary and Backend::binary, one enumerator per line of
// elementwise_ops.def, where each one's formula is written (once, for both backends).
enum class UnaryOp {
#define QKV_UNARY_OP(name, formula) name,
#include "elementwise_ops.def"
};
enum class BinaryOp {
#define QKV_BINARY_OP(name, formula) name,
#include "elementwise_ops.def"
};

// Strides in elements, aligned to an output shape; a stride of 0 broadcasts that dim.
using Strides = std::vector<int64_t>;

// One Adam or AdamW step (see adam_update).
struct AdamStep {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  bool decoupled = false;            // AdamW: shrink the parameter instead of adding wd * p to the gradient
  double step_size = 0;              // lr / (1 - beta1^t)
  double sqrt_bias_correction2 = 0;  // sqrt(1 - beta2^t)
};

// Where the dense rows of gather_rows (its out) and scatter_add_rows (its values) lie: the m-th
// of them at row (m / run) * stride + m % run, that is runs of `run` consecutive rows whose starts
// are `stride` rows apart, as one part of sequences laid side by side (run = the part's length,
// stride = the whole sequence's). run == 0: all consecutive. formula::dense_row computes it.
struct RowRuns {
  int64_t run = 0, stride = 0;
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
// q (batch, queries, width), k (batch, keys, width), v (batch, keys, value_width), each row after
// row with its own stride (below).
// Which keys a query sees, the knockout and the ragged (varlen) form are AttentionMask's and
// RaggedLayout's (ops.h). Ragged when query_starts is not empty: queries and keys are then the most
// of any entry, and query_offset, prefix and the knockout are unused (0, 0 and none).
struct AttentionShape {
  int64_t batch = 0, queries = 0, keys = 0, width = 0, value_width = 0;
  int64_t query_offset = 0;
  int64_t prefix = 0;
  int64_t knockout_key = -1, knockout_from = 0, knockout_to = 0;  // -1: no knockout
  std::vector<int64_t> key_lengths;                               // host values, one per batch entry, or empty
  std::vector<int64_t> query_starts, key_starts;  // ragged: host row offsets, batch + 1 each; else empty
  double scale = 1.0;
  // ALiBi: each visible score (after the scale) gets -distance_slope * |pos(i) - pos(j)|, with pos(x)
  // = x < prefix ? x : length + (x - prefix) for the entry's prefix and length (query i at
  // query_offset + i, or at keys - queries + i in a ragged entry); 0: none (ops.h, AttentionMask).
  double distance_slope = 0;
  // Entries from one row of q (of k, of v) to the next: 0 for its width (contiguous rows), or more
  // when it is a column block of a wider matrix, as the queries, keys and values of one (rows,
  // H + H + Hv) projection are. d_q, d_k and d_v are written with the same strides.
  int64_t q_stride = 0, k_stride = 0, v_stride = 0;
  int64_t q_step() const { return q_stride != 0 ? q_stride : width; }
  int64_t k_step() const { return k_stride != 0 ? k_stride : width; }
  int64_t v_step() const { return v_stride != 0 ? v_stride : value_width; }
  // All rows of q (the padded batch's or the ragged entries').
  int64_t query_rows() const { return query_starts.empty() ? batch * queries : query_starts.back(); }
};

// The primitives, each declared once in backend_primitives.def (with what it computes).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

#define QKV_PRIMITIVE(result, name, parameters) virtual result name parameters = 0;
#include "backend_primitives.def"
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
