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

// One checked call, padded or ragged: the forward (q's rows with v's width out, and each row's
// log-sum-exp) and, beside it, the backward.
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionShape& shape, const char* op) {
  Shape out_shape = q.shape();
  out_shape.back() = v.size(-1);
  const Shape lse_shape(q.shape().begin(), q.shape().end() - 1);
  Tensor out = Tensor::empty(out_shape, q.dtype(), q.device());
  Tensor lse = Tensor::empty(lse_shape, q.dtype(), q.device());
  if (out.numel() > 0) {
    backend_of(q).attention_forward(q.dtype(), shape, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                    lse.data_ptr());
  }
  // With P = softmax(S), S = q k^T * scale + bias (masked; the ALiBi bias is a constant), recomputed
  // from lse as P = exp(S - lse):
  //   d v = P^T g,   dP = g v^T,   dS = P * (dP - delta),  delta_i = sum_j P_ij dP_ij = g_i . out_i
  //   d q = scale * dS k,   d k = scale * dS^T q
  Tensor q_saved = q.detach(), k_saved = k.detach(), v_saved = v.detach(), out_saved = out.detach();
  return record(out, op, {q, k, v},
                [shape, q_saved, k_saved, v_saved, out_saved, lse](const Tensor& g) -> std::vector<Tensor> {
                  Tensor d_q = Tensor::empty(q_saved.shape(), g.dtype(), g.device());
                  Tensor d_k = Tensor::empty(k_saved.shape(), g.dtype(), g.device());
                  Tensor d_v = Tensor::empty(v_saved.shape(), g.dtype(), g.device());
                  if (d_q.numel() + d_k.numel() + d_v.numel() > 0) {
                    backend_for(g.device())
                        .attention_backward(g.dtype(), shape, q_saved.data_ptr(), k_saved.data_ptr(),
                                            v_saved.data_ptr(), out_saved.data_ptr(), g.data_ptr(), lse.data_ptr(),
                                            d_q.data_ptr(), d_k.data_ptr(), d_v.data_ptr());
                  }
                  return {d_q, d_k, d_v};
                });
}

// Checks that starts run from 0 to rows without going back, and returns the longest entry.
int64_t longest_entry(const std::vector<int64_t>& starts, int64_t B, int64_t rows, const char* what) {
  if (static_cast<int64_t>(starts.size()) != B + 1 || starts.front() != 0 || starts.back() != rows)
    throw std::runtime_error(fmt::format("attention_ragged: {} starts {} must be {} offsets from 0 to the {} rows",
                                         what, fmt::join(starts, ", "), B + 1, rows));
  int64_t longest = 0;
  for (int64_t b = 0; b < B; ++b) {
    if (starts[b + 1] < starts[b])
      throw std::runtime_error(
          fmt::format("attention_ragged: {} starts {} go back at entry {}", what, fmt::join(starts, ", "), b));
    longest = std::max(longest, starts[b + 1] - starts[b]);
  }
  return longest;
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
  check_scale(scale, "attention");
  check_scale(mask.distance_slope, "attention (distance slope)");
  if (mask.prefix < 0 || mask.query_offset < 0)
    throw std::runtime_error(
        fmt::format("attention: mask prefix {} and query offset {} must be >= 0", mask.prefix, mask.query_offset));
  if (mask.knockout_key < -1 || mask.knockout_from < 0 || mask.knockout_to < mask.knockout_from)
    throw std::runtime_error(
        fmt::format("attention: knockout key {} for queries [{}, {}) is not a key >= -1 and a "
                    "range of positions",
                    mask.knockout_key, mask.knockout_from, mask.knockout_to));
  if (!mask.key_lengths.empty()) {
    if (static_cast<int64_t>(mask.key_lengths.size()) != B)
      throw std::runtime_error(fmt::format("attention: {} key lengths for a batch of {}", mask.key_lengths.size(), B));
    for (int64_t n : mask.key_lengths)
      if (n < 0 || n > Tk) throw std::runtime_error(fmt::format("attention: key length {} is outside [0, {}]", n, Tk));
  }
  AttentionShape shape;
  shape.batch = B;
  shape.queries = Tq;
  shape.keys = Tk;
  shape.width = H;
  shape.value_width = Hv;
  shape.query_offset = mask.query_offset;
  shape.prefix = std::min(mask.prefix, Tk);
  shape.key_lengths = mask.key_lengths;
  shape.knockout_key = mask.knockout_key;
  shape.knockout_from = mask.knockout_from;
  shape.knockout_to = mask.knockout_to;
  shape.scale = scale;
  shape.distance_slope = mask.distance_slope;
  return fused_attention(q, k, v, shape, "attention");
}

Tensor attention_ragged(const Tensor& q, const Tensor& k, const Tensor& v, const RaggedLayout& layout, double scale) {
  check_pair(q, k, "attention_ragged");
  check_pair(q, v, "attention_ragged");
  if (q.dim() != 2 || k.dim() != 2 || v.dim() != 2 || k.size(1) != q.size(1) || v.size(0) != k.size(0))
    throw std::runtime_error(fmt::format("attention_ragged: q {}, k {} and v {} do not fit (Nq, H), (Nk, H), (Nk, Hv)",
                                         shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape())));
  check_scale(scale, "attention_ragged");
  check_scale(layout.distance_slope, "attention_ragged (distance slope)");
  const int64_t B = static_cast<int64_t>(layout.prefix.size());
  AttentionShape shape;
  shape.batch = B;
  shape.queries = longest_entry(layout.query_starts, B, q.size(0), "query");
  shape.keys = longest_entry(layout.key_starts, B, k.size(0), "key");
  for (int64_t b = 0; b < B; ++b) {
    const int64_t keys = layout.key_starts[b + 1] - layout.key_starts[b];
    if (layout.prefix[b] < 0 || layout.prefix[b] > keys)
      throw std::runtime_error(fmt::format("attention_ragged: entry {}'s prefix {} is outside [0, {}] (its keys)", b,
                                           layout.prefix[b], keys));
  }
  shape.width = q.size(1);
  shape.value_width = v.size(1);
  shape.key_lengths = layout.prefix;
  shape.query_starts = layout.query_starts;
  shape.key_starts = layout.key_starts;
  shape.scale = scale;
  shape.distance_slope = layout.distance_slope;
  return fused_attention(q, k, v, shape, "attention_ragged");
}

}  // namespace qkv
