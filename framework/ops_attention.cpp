// framework/ops_attention.cpp — the fused attention op: checks, the forward through the backend's
// tiled kernel, and the backward's formula (the kernels in cpu/ and cuda/ compute exactly this).
#include <cmath>

#include "ops_common.h"

namespace qkv {
using namespace detail;

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask, double scale) {
  check_pair(q, k, "attention");
  check_pair(q, v, "attention");
  if (q.dim() != 3 || k.dim() != 3 || v.dim() != 3)
    throw std::runtime_error(fmt::format("attention: q, k and v must be (B, T, H), got {}, {} and {}",
                                         shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape())));
  const int64_t B = q.size(0), Tq = q.size(1), H = q.size(2), Tk = k.size(1), Hv = v.size(2);
  if (k.size(0) != B || v.size(0) != B || k.size(2) != H || v.size(1) != Tk)
    throw std::runtime_error(fmt::format("attention: q {}, k {} and v {} do not fit (B, Tq, H), (B, Tk, H), (B, Tk, Hv)",
                                         shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape())));
  if (!std::isfinite(scale))
    throw std::runtime_error(fmt::format("attention: scale must be finite, got {}", scale));
  if (mask.prefix < 0 || mask.query_offset < 0)
    throw std::runtime_error(fmt::format("attention: mask prefix {} and query offset {} must be >= 0", mask.prefix,
                                         mask.query_offset));
  if (mask.knockout_key < -1 || mask.knockout_from < 0 || mask.knockout_to < mask.knockout_from)
    throw std::runtime_error(fmt::format("attention: knockout key {} for queries [{}, {}) is not a key >= -1 and a "
                                         "range of positions", mask.knockout_key, mask.knockout_from, mask.knockout_to));
  if (!mask.key_lengths.empty()) {
    if (static_cast<int64_t>(mask.key_lengths.size()) != B)
      throw std::runtime_error(fmt::format("attention: {} key lengths for a batch of {}", mask.key_lengths.size(), B));
    for (int64_t n : mask.key_lengths)
      if (n < 0 || n > Tk)
        throw std::runtime_error(fmt::format("attention: key length {} is outside [0, {}]", n, Tk));
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
  Tensor out = Tensor::empty({B, Tq, Hv}, q.dtype(), q.device());
  Tensor lse = Tensor::empty({B, Tq}, q.dtype(), q.device());
  if (out.numel() > 0) {
    backend_of(q).attention_forward(q.dtype(), shape, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                    lse.data_ptr());
  }
  // With P = softmax(S), S = q k^T * scale (masked), recomputed from lse as P = exp(S - lse):
  //   d v = P^T g,   dP = g v^T,   dS = P * (dP - delta),  delta_i = sum_j P_ij dP_ij = g_i . out_i
  //   d q = scale * dS k,   d k = scale * dS^T q
  Tensor q_saved = q.detach(), k_saved = k.detach(), v_saved = v.detach(), out_saved = out.detach();
  return record(out, "attention", {q, k, v},
                [shape, q_saved, k_saved, v_saved, out_saved, lse](const Tensor& g) -> std::vector<Tensor> {
    Tensor d_q = Tensor::empty(q_saved.shape(), g.dtype(), g.device());
    Tensor d_k = Tensor::empty(k_saved.shape(), g.dtype(), g.device());
    Tensor d_v = Tensor::empty(v_saved.shape(), g.dtype(), g.device());
    if (d_q.numel() + d_k.numel() + d_v.numel() > 0) {
      backend_for(g.device()).attention_backward(g.dtype(), shape, q_saved.data_ptr(), k_saved.data_ptr(),
                                                 v_saved.data_ptr(), out_saved.data_ptr(), g.data_ptr(),
                                                 lse.data_ptr(), d_q.data_ptr(), d_k.data_ptr(), d_v.data_ptr());
    }
    return {d_q, d_k, d_v};
  });
}

}  // namespace qkv
