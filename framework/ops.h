// framework/ops.h — every differentiable op. Each op's forward and backward sit side by side in
// one of the ops_*.cpp files and call only backend primitives (backend.h) or other ops, so a new
// device never touches a derivative. Shapes: B batch, T sequence, D model width, H head width;
// vocab is spelled out (V is never the vocabulary), and K is only a gemm's inner dimension. Axes may be negative (counted from the end), as in PyTorch.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "random.h"
#include "tensor.h"

namespace qkv {

// ---- elementwise with numpy/PyTorch broadcasting (ops_elementwise.cpp) ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor relu(const Tensor& x);
// The same for an input the caller gives up (a temporary, or std::move): where nothing else holds
// its storage (no other handle, no op that saved it), the result is written over it.
Tensor relu(Tensor&& x);
Tensor gelu(const Tensor& x);  // exact (erf) form, PyTorch's default
Tensor mul_scalar(const Tensor& x, double s);
Tensor add_scalar(const Tensor& x, double s);
Tensor pow_scalar(const Tensor& x, double exponent);
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op_name);
// Sums `x` down to `shape` (the reverse of broadcasting). Differentiable.
Tensor sum_to(const Tensor& x, const Shape& shape);
// Broadcasts `x` up to `shape` as a fresh contiguous tensor. Differentiable.
Tensor broadcast_to(const Tensor& x, const Shape& shape);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& x) { return neg(x); }
inline Tensor operator*(const Tensor& x, double s) { return mul_scalar(x, s); }
inline Tensor operator*(double s, const Tensor& x) { return mul_scalar(x, s); }

// ---- matmul (ops_matmul.cpp) ----
// (..., M, K) @ (..., K, N) -> (..., M, N). transpose_a / transpose_b read the stored operand
// as its transpose through gemm's flags (no copy): matmul(Q, K, false, true) is Q @ K^T.
// Batch dims must match, or one operand must be a plain matrix that is shared by every batch.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
// A fully connected layer, as torch.nn.functional.linear: x (..., in) @ weight (out, in)^T + bias
// (out,); bias may be undefined. The bias is written into the output first and the gemm adds the
// product to it (no separate pass).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// ---- shape (ops_shape.cpp) ----
Tensor transpose(const Tensor& x);                    // swaps the last two dims (copies)
Tensor reshape(const Tensor& x, const Shape& shape);  // one dim may be -1
Tensor view(const Tensor& x, const Shape& shape);     // alias of reshape: storage is shared
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);
Tensor slice(const Tensor& x, int64_t axis, int64_t begin, int64_t end);  // [begin, end)

// ---- reductions (ops_reduce.cpp) ----
Tensor sum(const Tensor& x);  // all elements -> ()
Tensor sum(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, int64_t axis, bool keepdim = false);
// Max along an axis; the gradient flows to the first maximal element, as in PyTorch.
Tensor max(const Tensor& x, int64_t axis, bool keepdim = false);
struct MaxResult {
  Tensor values;
  Tensor indices;  // int64
};
MaxResult max_with_indices(const Tensor& x, int64_t axis, bool keepdim = false);

// ---- neural-network ops (ops_nn.cpp) ----
Tensor softmax(const Tensor& x);      // over the last axis; an all -inf row gives zeros
Tensor log_softmax(const Tensor& x);  // over the last axis; an all -inf row gives zeros
// Where mask == 0 the result is `value` (e.g. -inf), elsewhere x. mask broadcasts to x.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
// table (vocab, D), ids (...) int64 -> (..., D). Backward scatter-adds into the rows used.
Tensor embedding(const Tensor& table, const Tensor& ids);
// Several embeddings side by side along the sequence, plus an optional addend (a position
// embedding) in every sequence: tables[i] (V_i, D) and ids[i] (B, L_i) int64 -> (B, L, D), L the sum
// of L_i, with addend (L, D) or undefined. The same values and gradients as
// add(concat({embedding(tables[i], ids[i])...}, 1), addend), without the concatenation's copies.
// (A table passed twice gets its parts' gradients added in part order, where the composed graph
// adds them last part first: the same sum, rounded in another order.)
Tensor embedding_concat(const std::vector<Tensor>& tables, const std::vector<Tensor>& ids, const Tensor& addend);
// Normalises over the last axis; weight and bias (D) may be undefined tensors.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);
// layer_norm(x + residual) in one pass over memory (x and residual of one shape): the sum is never
// written out, and both inputs get the normalised gradient, as add's backward would give them.
Tensor add_layer_norm(const Tensor& x, const Tensor& residual, const Tensor& weight, const Tensor& bias,
                      double eps = 1e-5);
// Mean cross-entropy of logits (..., vocab) against int64 targets (...), skipping ignore_index.
// label_smoothing in [0, 1] as PyTorch's: (1 - e) * that + e * the counted rows' mean of
// -mean_c log_softmax(logits)[c] (the cross-entropy against the uniform distribution).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index = -100,
                     double label_smoothing = 0.0);
// ---- fused attention (ops_attention.cpp) ----
struct RotaryTables {  // rotary()'s cos and sin (below)
  Tensor cos, sin;
};
// Which keys each query may see. Query i sits at key position query_offset + i; key j is visible
// to it iff j < prefix ? (key_lengths empty or j < key_lengths[b]) : j <= query_offset + i.
struct AttentionMask {
  int64_t prefix = INT64_MAX;
  std::vector<int64_t> key_lengths;  // one per batch entry, or empty
  int64_t query_offset = 0;
  // Knockout: key knockout_key is hidden from the queries at positions [knockout_from, knockout_to)
  // (a query's position is query_offset + its index), so their rows renormalise over the other
  // keys; -1 knocks nothing out. The causal test of what attention is used for.
  int64_t knockout_key = -1, knockout_from = 0, knockout_to = 0;
  // ALiBi (Press et al., 2022): every visible score gets -distance_slope * |pos(query) - pos(key)|
  // after the scale, where pos(x) = x before the prefix and length + (x - prefix) after it (length:
  // the entry's key_lengths, or the prefix), so the keys after a padded prefix sit right after its
  // real words. 0: no bias.
  double distance_slope = 0;
  static AttentionMask none() { return {}; }            // every key
  static AttentionMask causal() { return {0, {}, 0}; }  // keys at or before the query
  static AttentionMask padding(std::vector<int64_t> lengths) { return {INT64_MAX, std::move(lengths), 0}; }
  // The translator's: the first `source` keys form a bidirectional prefix of which the first
  // lengths[b] are real words; the keys after it are causal. With ALiBi's slope, if any.
  static AttentionMask prefix_lm(int64_t source, std::vector<int64_t> lengths, double slope = 0) {
    return {source, std::move(lengths), 0, -1, 0, 0, slope};
  }
};
// softmax(q k^T * scale + mask) v for q (B, Tq, H), k (B, Tk, H), v (B, Tk, Hv) -> (B, Tq, Hv),
// without forming the (Tq, Tk) matrix: tiles with an online softmax forward, a recomputing
// backward (FlashAttention-2's algorithm). A query that sees no key gives zeros, as softmax does
// for an all -inf row. Its backward is not itself differentiable.
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask, double scale);
// attention with the projections packed, as one product makes them, and read in place: qkv
// (B, T, H + H + Hv) holds q, k and v side by side in its last dim (every position a query), with
// H = width; kv (B, Tk, H + Hv) holds the keys and the values, q is apart (B, Tq, H). The results
// and the gradients' bits are attention's on the column blocks; the gradient of a packed input is
// one tensor, written in place by the kernels. With rotary tables `turn` (the packed input's rows)
// its keys (and in qkv its queries) are turned as rotary() turns them, in place where it is moved in
// and held alone (as relu's input), and their gradients turned back: the bits on rotary's outputs.
Tensor attention_qkv(Tensor qkv, int64_t width, const AttentionMask& mask, double scale, const RotaryTables& turn = {});
Tensor attention_kv(const Tensor& q, Tensor kv, const AttentionMask& mask, double scale, const RotaryTables& turn = {});
// The rows of B sequences of different lengths, back to back (FlashAttention's varlen form): entry
// b's queries are rows [query_starts[b], query_starts[b + 1]) of q, its keys and values rows
// [key_starts[b], key_starts[b + 1]) of k and v. With Tq_b and Tk_b its counts, its key j is visible
// to its query i iff j < prefix[b] (a bidirectional prefix) or j <= (Tk_b - Tq_b) + i (causal, the
// last query on the last key). No padding is read or computed.
struct RaggedLayout {
  std::vector<int64_t> query_starts, key_starts;  // B + 1 each, from 0 up to the row count
  std::vector<int64_t> prefix;                    // B, each at most the entry's key count
  // ALiBi as in AttentionMask: -distance_slope * |i' - j| with key j at j and query i at
  // (Tk_b - Tq_b) + i (each entry's rows are its own positions). 0: no bias.
  double distance_slope = 0;
};
// The same softmax(q k^T * scale, masked) v for q (Nq, H), k (Nk, H), v (Nk, Hv) -> (Nq, Hv) and
// the same kernels as attention(). Up to 64 keys per sequence (one key tile) its rows get the bits
// attention() gives them in a padded (B, T, H) form, where the padding adds exact zeros.
Tensor attention_ragged(const Tensor& q, const Tensor& k, const Tensor& v, const RaggedLayout& layout, double scale);
// attention_ragged with the projections packed, as attention_qkv and attention_kv: qkv (N, H + H
// + Hv) where every row is a query (the translator's inner layers), or q (Nq, H) and kv (Nk, H + Hv).
Tensor attention_ragged_qkv(Tensor qkv, int64_t width, const RaggedLayout& layout, double scale,
                            const RotaryTables& turn = {});
Tensor attention_ragged_kv(const Tensor& q, Tensor kv, const RaggedLayout& layout, double scale,
                           const RotaryTables& turn = {});

// ---- rotary position embedding (ops_nn.cpp) ----
// RoPE (Su et al., 2021) in the half-split form of GPT-NeoX and Llama: for x (..., H), H even, the
// pairs (x[i], x[i + H/2]) turn by the angles whose cos and sin are given, (..., H/2) broadcastable
// to x's leading dims: out = [x1 cos - x2 sin, x2 cos + x1 sin], rounded as those products and
// sums are. One pass each way (Backend::rotary_rows), in place where x is moved in and held alone
// (as relu's); the gradient is the turn by the opposite angle. Packed projections: attention_qkv.
Tensor rotary(Tensor x, const Tensor& cos, const Tensor& sin);
// rotary's tables for rows at `positions`: cos and sin of p * base^(-i / half), i = 0 .. half - 1,
// shaped `rows` + (half) (rows' product must be positions.size()); no gradient.
RotaryTables rotary_tables(const std::vector<int64_t>& positions, const Shape& rows, int64_t half, DType dtype,
                           Device device, double base = 10000.0);

// Zeroes each element with probability p and scales the rest by 1/(1-p) when training.
Tensor dropout(const Tensor& x, double p, bool training, Generator& gen);

}  // namespace qkv
