// framework/ops_attention.cpp — the fused attention op, padded and ragged: checks, the forward
// through the backend's tiled kernel, and the backward's formula (the kernels in cpu/ and cuda/
// compute exactly this).
#include <fmt/ranges.h>

#include <cmath>

#include "ops_common.h"

namespace qkv {
using namespace detail;

namespace {

void check_scale(double scale, const char* op) {
  if (!std::isfinite(scale)) throw std::runtime_error(fmt::format("{}: scale must be finite, got {}", op, scale));
}

// The checked value width Hv of a packed (rows, 2 H + Hv) input of `rank` dims (`rows` names them).
int64_t packed_value_width(const Tensor& qkv, int64_t width, int64_t rank, const char* rows, const char* op) {
  check_float(qkv, op);
  if (qkv.dim() != rank || width < 1 || width >= qkv.size(-1) || qkv.size(-1) - width <= width)  // no overflow of 2 H
    throw std::runtime_error(fmt::format("{}: qkv {} is not ({}, 2 H + Hv) with H = {} and Hv >= 1", op,
                                         shape_str(qkv.shape()), rows, width));
  return qkv.size(-1) - 2 * width;
}

// Where q, k and v lie in the op's inputs: input index and first column of each (q, k, v), every
// input's columns covered by them. Apart (three inputs) or packed: one (rows, H + H + Hv) input, or
// q apart and one (rows, H + Hv) input of keys and values.
struct Placement {
  int input[3];
  int64_t column[3];
  // Where block i (0: q, 1: k, 2: v) starts in `of`, the inputs or one tensor per input (their
  // gradients), of elem-byte entries.
  void* block(const std::vector<Tensor>& of, int i, size_t elem) const {
    return static_cast<char*>(of[input[i]].data_ptr()) + column[i] * elem;
  }
};
constexpr Placement kApart{{0, 1, 2}, {0, 0, 0}};

// One checked call, padded or ragged: the forward (q's rows with v's width out, and each row's
// log-sum-exp) and, beside it, the backward. The kernels read q, k and v as column blocks of the
// inputs (row strides of the inputs' widths) and write each gradient into the same block of one
// gradient per input, so a packed input gets one gradient and no sum. With rotary tables `turn`, the
// blocks before the values in the packed (last) input are turned, in place when the caller held it
// alone, else in a copy, and their gradients are turned back.
Tensor fused_attention(const std::vector<Tensor>& inputs, const Placement& at, AttentionShape shape, const char* op,
                       const RotaryTables& turn = {}, bool in_place = false) {
  const Tensor &q = inputs[at.input[0]], &v = inputs[at.input[2]];
  const size_t elem = dtype_size(q.dtype());
  const auto width_of = [&](int i) { return inputs[at.input[i]].size(-1); };
  shape.q_stride = width_of(0), shape.k_stride = width_of(1), shape.v_stride = width_of(2);
  const RotaryTables rows = turn.cos.defined() ? rotary_rows_for(v, turn, shape.width, op) : RotaryTables{};
  const int64_t blocks = rows.cos.defined() ? at.column[2] / shape.width : 0;  // 2 (q, k) in qkv, 1 (k) in kv
  std::vector<Tensor> read = inputs;  // what the kernels read: the packed input turned, if it is
  if (blocks > 0) turn_blocks(v, rows, blocks, 1.0, read.back() = in_place ? v : v.clone());
  const auto block = [&](int i) { return at.block(read, i, elem); };
  Shape out_shape = q.shape();
  out_shape.back() = shape.value_width;
  const Shape lse_shape(q.shape().begin(), q.shape().end() - 1);
  Tensor out = Tensor::empty(out_shape, q.dtype(), q.device());
  Tensor lse = Tensor::empty(lse_shape, q.dtype(), q.device());
  if (out.numel() > 0)
    backend_of(v).attention_forward(q.dtype(), shape, block(0), block(1), block(2), out.data_ptr(), lse.data_ptr());
  // With P = softmax(S), S = q k^T * scale + bias (masked; the ALiBi bias is a constant), recomputed
  // from lse as P = exp(S - lse):
  //   d v = P^T g,   dP = g v^T,   dS = P * (dP - delta),  delta_i = sum_j P_ij dP_ij = g_i . out_i
  //   d q = scale * dS k,   d k = scale * dS^T q
  std::vector<Tensor> saved;
  for (const Tensor& x : read) saved.push_back(x.detach());
  Tensor out_saved = out.detach();
  return record(out, op, inputs, [shape, at, saved, out_saved, lse, elem, rows, blocks](const Tensor& g) {
    std::vector<Tensor> grads;
    int64_t entries = 0;
    for (const Tensor& x : saved) {
      grads.push_back(Tensor::empty(x.shape(), g.dtype(), g.device()));
      entries += x.numel();
    }
    if (entries > 0)
      backend_for(g.device())
          .attention_backward(g.dtype(), shape, at.block(saved, 0, elem), at.block(saved, 1, elem),
                              at.block(saved, 2, elem), out_saved.data_ptr(), g.data_ptr(), lse.data_ptr(),
                              at.block(grads, 0, elem), at.block(grads, 1, elem), at.block(grads, 2, elem));
    if (blocks > 0) turn_blocks(grads.back(), rows, blocks, -1.0, grads.back());
    return grads;
  });
}

// Checks that starts run from 0 to rows without going back, and returns the longest entry.
int64_t longest_entry(const std::vector<int64_t>& starts, int64_t B, int64_t rows, const char* what, const char* op) {
  if (static_cast<int64_t>(starts.size()) != B + 1 || starts.front() != 0 || starts.back() != rows)
    throw std::runtime_error(fmt::format("{}: {} starts {} must be {} offsets from 0 to the {} rows", op, what,
                                         fmt::join(starts, ", "), B + 1, rows));
  int64_t longest = 0;
  for (int64_t b = 0; b < B; ++b) {
    if (starts[b + 1] < starts[b])
      throw std::runtime_error(
          fmt::format("{}: {} starts {} go back at entry {}", op, what, fmt::join(starts, ", "), b));
    longest = std::max(longest, starts[b + 1] - starts[b]);
  }
  return longest;
}

// The sizes, scale and ALiBi slope every call's shape has.
AttentionShape sized_shape(int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hv, double scale, double slope) {
  AttentionShape shape;
  shape.batch = B, shape.queries = Tq, shape.keys = Tk, shape.width = H, shape.value_width = Hv;
  shape.scale = scale, shape.distance_slope = slope;
  return shape;
}

// The shape of a ragged call with Nq query rows and Nk key rows of widths H (queries and keys) and
// Hv (values); `op` names the caller in errors.
AttentionShape ragged_shape(int64_t Nq, int64_t Nk, int64_t H, int64_t Hv, const RaggedLayout& layout, double scale,
                            const char* op) {
  check_scale(scale, op);
  check_scale(layout.distance_slope, fmt::format("{} (distance slope)", op).c_str());
  const int64_t B = static_cast<int64_t>(layout.prefix.size());
  const int64_t longest_queries = longest_entry(layout.query_starts, B, Nq, "query", op),
                longest_keys = longest_entry(layout.key_starts, B, Nk, "key", op);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t keys = layout.key_starts[b + 1] - layout.key_starts[b];
    if (layout.prefix[b] < 0 || layout.prefix[b] > keys)
      throw std::runtime_error(
          fmt::format("{}: entry {}'s prefix {} is outside [0, {}] (its keys)", op, b, layout.prefix[b], keys));
  }
  AttentionShape shape = sized_shape(B, longest_queries, longest_keys, H, Hv, scale, layout.distance_slope);
  shape.key_lengths = layout.prefix, shape.query_starts = layout.query_starts, shape.key_starts = layout.key_starts;
  return shape;
}

// The shape of a padded call: B entries of Tq queries and Tk keys, widths H and Hv, under `mask`;
// `op` names the caller in errors.
AttentionShape padded_shape(int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t Hv, const AttentionMask& mask,
                            double scale, const char* op) {
  check_scale(scale, op);
  check_scale(mask.distance_slope, fmt::format("{} (distance slope)", op).c_str());
  if (mask.prefix < 0 || mask.query_offset < 0)
    throw std::runtime_error(
        fmt::format("{}: mask prefix {} and query offset {} must be >= 0", op, mask.prefix, mask.query_offset));
  if (mask.knockout_key < -1 || mask.knockout_from < 0 || mask.knockout_to < mask.knockout_from)
    throw std::runtime_error(
        fmt::format("{}: knockout key {} for queries [{}, {}) is not a key >= -1 and a range of positions", op,
                    mask.knockout_key, mask.knockout_from, mask.knockout_to));
  if (!mask.key_lengths.empty()) {
    if (static_cast<int64_t>(mask.key_lengths.size()) != B)
      throw std::runtime_error(fmt::format("{}: {} key lengths for a batch of {}", op, mask.key_lengths.size(), B));
    for (int64_t n : mask.key_lengths)
      if (n < 0 || n > Tk) throw std::runtime_error(fmt::format("{}: key length {} is outside [0, {}]", op, n, Tk));
  }
  AttentionShape shape = sized_shape(B, Tq, Tk, H, Hv, scale, mask.distance_slope);
  shape.query_offset = mask.query_offset;
  shape.prefix = std::min(mask.prefix, Tk);
  shape.key_lengths = mask.key_lengths;
  shape.knockout_key = mask.knockout_key, shape.knockout_from = mask.knockout_from,
  shape.knockout_to = mask.knockout_to;
  return shape;
}

}  // namespace

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask, double scale) {
  check_pair(q, k, "attention");
  check_pair(q, v, "attention");
  if (q.dim() != 3 || k.dim() != 3 || v.dim() != 3)
    throw std::runtime_error(fmt::format("attention: q, k and v must be (B, T, H), got {}, {} and {}",
                                         shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape())));
  const int64_t B = q.size(0), Tq = q.size(1), H = q.size(2), Tk = k.size(1), Hv = v.size(2);
  if (k.size(0) != B || v.size(0) != B || k.size(2) != H || v.size(1) != Tk)
    throw std::runtime_error(
        fmt::format("attention: q {}, k {} and v {} do not fit (B, Tq, H), (B, Tk, H), (B, Tk, Hv)",
                    shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape())));
  return fused_attention({q, k, v}, kApart, padded_shape(B, Tq, Tk, H, Hv, mask, scale, "attention"), "attention");
}

Tensor attention_qkv(Tensor qkv, int64_t width, const AttentionMask& mask, double scale, const RotaryTables& turn) {
  const int64_t Hv = packed_value_width(qkv, width, 3, "B, T", "attention_qkv"), B = qkv.size(0), T = qkv.size(1);
  const AttentionShape shape = padded_shape(B, T, T, width, Hv, mask, scale, "attention_qkv");
  const bool alone = held_alone(qkv);  // before the op takes its own handles on qkv
  return fused_attention({qkv}, Placement{{0, 0, 0}, {0, width, 2 * width}}, shape, "attention_qkv", turn, alone);
}

Tensor attention_kv(const Tensor& q, Tensor kv, const AttentionMask& mask, double scale, const RotaryTables& turn) {
  check_pair(q, kv, "attention_kv");
  if (q.dim() != 3 || kv.dim() != 3 || q.size(0) != kv.size(0) || q.size(2) < 1 || kv.size(2) <= q.size(2))
    throw std::runtime_error(fmt::format("attention_kv: q {} and kv {} do not fit (B, Tq, H) and (B, Tk, H + Hv)",
                                         shape_str(q.shape()), shape_str(kv.shape())));
  const int64_t B = q.size(0), H = q.size(2);
  const AttentionShape shape = padded_shape(B, q.size(1), kv.size(1), H, kv.size(2) - H, mask, scale, "attention_kv");
  const bool alone = held_alone(kv);  // before the op takes its own handles on kv
  return fused_attention({q, kv}, Placement{{0, 1, 1}, {0, 0, H}}, shape, "attention_kv", turn, alone);
}

Tensor attention_ragged(const Tensor& q, const Tensor& k, const Tensor& v, const RaggedLayout& layout, double scale) {
  check_pair(q, k, "attention_ragged");
  check_pair(q, v, "attention_ragged");
  if (q.dim() != 2 || k.dim() != 2 || v.dim() != 2 || k.size(1) != q.size(1) || v.size(0) != k.size(0))
    throw std::runtime_error(fmt::format("attention_ragged: q {}, k {} and v {} do not fit (Nq, H), (Nk, H), (Nk, Hv)",
                                         shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape())));
  const AttentionShape shape =
      ragged_shape(q.size(0), k.size(0), q.size(1), v.size(1), layout, scale, "attention_ragged");
  return fused_attention({q, k, v}, kApart, shape, "attention_ragged");
}

Tensor attention_ragged_qkv(Tensor qkv, int64_t width, const RaggedLayout& layout, double scale,
                            const RotaryTables& turn) {
  const int64_t Hv = packed_value_width(qkv, width, 2, "N", "attention_ragged_qkv"), N = qkv.size(0);
  const AttentionShape shape = ragged_shape(N, N, width, Hv, layout, scale, "attention_ragged_qkv");
  if (layout.query_starts != layout.key_starts)  // every row a query: the same rows for both
    throw std::runtime_error(
        fmt::format("attention_ragged_qkv: query starts {} differ from key starts {} (every row "
                    "of qkv is a query and a key)",
                    fmt::join(layout.query_starts, ", "), fmt::join(layout.key_starts, ", ")));
  const bool alone = held_alone(qkv);  // before the op takes its own handles on qkv
  return fused_attention({qkv}, Placement{{0, 0, 0}, {0, width, 2 * width}}, shape, "attention_ragged_qkv", turn,
                         alone);
}

Tensor attention_ragged_kv(const Tensor& q, Tensor kv, const RaggedLayout& layout, double scale,
                           const RotaryTables& turn) {
  check_pair(q, kv, "attention_ragged_kv");
  if (q.dim() != 2 || kv.dim() != 2 || q.size(1) < 1 || kv.size(1) <= q.size(1))
    throw std::runtime_error(fmt::format("attention_ragged_kv: q {} and kv {} do not fit (Nq, H) and (Nk, H + Hv)",
                                         shape_str(q.shape()), shape_str(kv.shape())));
  const int64_t H = q.size(1);
  const AttentionShape shape =
      ragged_shape(q.size(0), kv.size(0), H, kv.size(1) - H, layout, scale, "attention_ragged_kv");
  const bool alone = held_alone(kv);  // before the op takes its own handles on kv
  return fused_attention({q, kv}, Placement{{0, 1, 1}, {0, 0, H}}, shape, "attention_ragged_kv", turn, alone);
}

}  // namespace qkv
