// models/block.cpp — the translator's layer: the attention modes, the feed-forward layer and the
// block's one forward. The row layouts (sequence, packed rows, cache) are the translator's contexts.
#include "block.h"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <utility>

namespace qkv::models {

// Each enum's names, written once: the name of a value, and the value of a name (or an error
// listing the names).
template <typename E>
using Names = std::initializer_list<std::pair<E, const char*>>;
constexpr Names<AttentionMode> kAttentionModes = {
    {AttentionMode::Learned, "learned"}, {AttentionMode::Static, "static"}, {AttentionMode::None, "none"}};
constexpr Names<Positions> kPositions = {{Positions::Absolute, "absolute"},
                                         {Positions::Rotary, "rotary"},
                                         {Positions::AbsoluteRotary, "absolute+rotary"},
                                         {Positions::Alibi, "alibi"}};
constexpr Names<Activation> kActivations = {{Activation::Relu, "relu"}, {Activation::Gelu, "gelu"}};

template <typename E>
static std::string name_of(Names<E> names, E value) {
  for (const auto& [e, name] : names)
    if (e == value) return name;
  return "?";
}

template <typename E>
static E parse_name(Names<E> names, const std::string& text, const char* what) {
  std::string choices;
  size_t i = 0;
  for (const auto& [e, name] : names) {
    if (text == name) return e;
    choices += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(name);
    ++i;
  }
  throw std::runtime_error(fmt::format("unknown {} '{}' (expected {})", what, text, choices));
}

std::string attention_mode_name(AttentionMode mode) { return name_of(kAttentionModes, mode); }
AttentionMode parse_attention_mode(const std::string& text) {
  return parse_name(kAttentionModes, text, "attention mode");
}
std::string positions_name(Positions positions) { return name_of(kPositions, positions); }
Positions parse_positions(const std::string& text) { return parse_name(kPositions, text, "positions"); }
std::string activation_name(Activation activation) { return name_of(kActivations, activation); }
Activation parse_activation(const std::string& text) { return parse_name(kActivations, text, "activation"); }

double attention_scale(int64_t width) { return 1.0 / std::sqrt(static_cast<double>(width)); }
double attention_scale(const Tensor& queries) { return attention_scale(queries.size(-1)); }

Tensor attend(const Tensor& queries, const Tensor& keys, const Tensor& values, const Tensor& keep, Tensor* weights_out,
              const Tensor& bias) {
  const double scale = attention_scale(queries);
  Tensor scores = mul_scalar(matmul(queries, keys, false, true), scale);  // (B, T, H) @ (B, T, H)^T -> (B, T, T)
  if (bias.defined()) scores = add(scores, bias);                         // ALiBi, a constant
  scores = masked_fill(scores, keep, -std::numeric_limits<double>::infinity());
  Tensor weights = softmax(scores);  // rows sum to 1 over keys
  if (weights_out) *weights_out = weights.detach();
  return matmul(weights, values);  // (B, T, T) @ (B, T, H) -> (B, T, H)
}

Tensor BlockAttention::forward(size_t layer, const Tensor& x_queries, const Tensor& x, AttentionContext& context,
                               Tensor* weights_out) const {
  const Tensor q = x_queries.defined() ? queries(x_queries) : Tensor();  // (.., Tq, H)
  const Tensor k = keys(x), v = values(x);                               // (.., T, H) each
  const Tensor attended = context.attend(layer, q, k, v, weights_out);   // (.., Tq, H)
  return attended.defined() ? output(attended) : Tensor();               // (.., Tq, D)
}

[[noreturn]] static void refuse_packed() {
  throw std::logic_error("translator: this context does not take packed projections");
}
Tensor AttentionContext::attend_qkv(size_t, Tensor, int64_t) { refuse_packed(); }
Tensor AttentionContext::attend_kv(size_t, Tensor, Tensor) { refuse_packed(); }

Tensor LearnedAttention::forward(size_t layer, const Tensor& x_queries, const Tensor& x, AttentionContext& context,
                                 Tensor* weights_out) const {
  if (weights_out || !x_queries.defined() || !context.takes_packed(layer))
    return BlockAttention::forward(layer, x_queries, x, context, weights_out);
  const int64_t H = W_q.weight.size(0);
  // The products go on held by nothing else (linear's one gemm), so rotary positions turn them in place.
  if (x_queries.impl() == x.impl())  // the queries are x's own rows: one (.., T, 3H) product
    return output(context.attend_qkv(layer, linear(x, concat({W_q.weight, W_k.weight, W_v.weight}, 0), {}), H));
  Tensor kv = linear(x, concat({W_k.weight, W_v.weight}, 0), {});  // (.., T, 2H)
  return output(context.attend_kv(layer, queries(x_queries), std::move(kv)));
}

Tensor NoAttention::forward(size_t layer, const Tensor& x_queries, const Tensor&, AttentionContext& context,
                            Tensor* weights_out) const {
  return x_queries.defined() ? output(context.attend_self(layer, values(x_queries), weights_out)) : Tensor();
}

LearnedAttention::LearnedAttention(int64_t d_model, int64_t d_k, Generator& gen)
    : W_q(d_model, d_k, false, gen), W_k(d_model, d_k, false, gen), W_v(d_model, d_k, false, gen),
      W_o(d_k, d_model, false, gen) {
  register_module("W_q", W_q);
  register_module("W_k", W_k);
  register_module("W_v", W_v);
  register_module("W_o", W_o);
}

std::unique_ptr<BlockAttention> make_attention(AttentionMode mode, int64_t d_model, int64_t d_k, Generator& gen) {
  switch (mode) {
    case AttentionMode::Learned: return std::make_unique<LearnedAttention>(d_model, d_k, gen);
    case AttentionMode::Static: return std::make_unique<StaticAttention>();
    case AttentionMode::None: return std::make_unique<NoAttention>();
  }
  throw std::runtime_error("make_attention: unknown attention mode");
}

FeedForward::FeedForward(int64_t d_model, int64_t d_ff, Activation activation, Generator& gen)
    : fc1(d_model, d_ff, true, gen), fc2(d_ff, d_model, true, gen), activation(activation) {
  register_module("fc1", fc1);
  register_module("fc2", fc2);
}

Tensor FeedForward::forward(const Tensor& x) const {
  Tensor h = fc1.forward(x);
  return fc2.forward(activation == Activation::Gelu ? gelu(h) : relu(std::move(h)));
}

static Tensor apply_dropout(const Tensor& x, const BlockOptions& options) {
  if (!options.training || options.dropout == 0.0) return x;
  if (!options.dropout_generator)
    throw std::logic_error(fmt::format("block: dropout {} while training needs a generator", options.dropout));
  return dropout(x, options.dropout, true, *options.dropout_generator);
}

BlockOutput Block::forward(const Tensor& x, AttentionContext& context, const BlockOptions& options) const {
  BlockOutput r;
  const Tensor x_queries = context.query_rows(index, x);  // (.., Tq, D)
  const Tensor mixed =
      attention->forward(index, x_queries, x, context, options.record_attention ? &r.weights : nullptr);
  if (!mixed.defined()) return r;                                     // this layer only supplied keys and values
  Tensor h = ln1->forward(x_queries, apply_dropout(mixed, options));  // LayerNorm(x + attention): (.., Tq, D)
  r.out = add(h, apply_dropout(ffn->forward(h), options));            // feed-forward + residual
  return r;
}

}  // namespace qkv::models
