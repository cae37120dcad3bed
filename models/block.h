// models/block.h — one layer of the translator: its attention (one class per mode: learned, static,
// none), the feed-forward layer, and the Block that joins them with LayerNorm and residuals. Where
// the keys and values come from and how the rows are laid out is the caller's AttentionContext.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "framework/nn.h"
#include "framework/ops.h"

namespace qkv::models {

enum class AttentionMode { Learned, Static, None };
std::string attention_mode_name(AttentionMode mode);
AttentionMode parse_attention_mode(const std::string& text);  // learned | static | none

// Where a token's position enters the model. absolute: a learned (S + T_tgt, D) embedding added to
// the input, which ties the model to the layout it was built with. rotary: RoPE on every layer's
// queries and keys (where q meets k), so scores depend only on how far apart two tokens are and the
// same weights read longer sentences. absolute+rotary: both. alibi: no embedding and no turn; every
// score gets -kAlibiSlope * |distance| (ALiBi, an additive relative bias inside the attention op).
enum class Positions { Absolute, Rotary, AbsoluteRotary, Alibi };
std::string positions_name(Positions positions);
Positions parse_positions(const std::string& text);  // absolute | rotary | absolute+rotary | alibi
inline bool has_position_embedding(Positions p) { return p == Positions::Absolute || p == Positions::AbsoluteRotary; }
inline bool has_rotary(Positions p) { return p == Positions::Rotary || p == Positions::AbsoluteRotary; }
// ALiBi's slope for our one head: 2^-3, one of the slopes of ALiBi's 8-head sequence (2^-1 .. 2^-8),
// so the bias spans about 4 nats over a 30-position sentence pair. (The paper's rule for one head,
// 2^-8, would leave a 30-position pair almost without word order.)
inline constexpr double kAlibiSlope = 0.125;
inline double distance_slope(Positions p) { return p == Positions::Alibi ? kAlibiSlope : 0.0; }

// The feed-forward layer's activation: relu, or gelu (exact erf form).
enum class Activation { Relu, Gelu };
std::string activation_name(Activation activation);
Activation parse_activation(const std::string& text);  // relu | gelu

// 1 / sqrt(H) for queries (..., H): the tutorial's score scale.
double attention_scale(const Tensor& queries);
double attention_scale(int64_t width);  // 1 / sqrt(width), for queries of that width packed in a wider tensor
// softmax(masked(scores + bias)) @ values with the (B, T, T) weights formed (the composed path);
// keep is 1 where a query may see a key; bias (B, T, T), when defined, is ALiBi's. weights_out, when
// given, gets the weights (detached).
Tensor attend(const Tensor& queries, const Tensor& keys, const Tensor& values, const Tensor& keep, Tensor* weights_out,
              const Tensor& bias = Tensor());

// Where one pass over the layers finds each layer's keys and values, and how it lays out rows: the
// whole (B, T, D) sequence (forward), the real positions packed as rows (N, D) (the loss), or a
// key/value cache (greedy decoding). A block projects; its context chooses the query rows, places
// the projections and runs the attention op. Everything else about a block is the same for all.
class AttentionContext {
 public:
  virtual ~AttentionContext() = default;
  // The rows of layer `layer`'s input x that ask: x itself, or only the rows whose outputs reach a
  // logit. Undefined when none do: the layer then only hands its keys and values to attend.
  virtual Tensor query_rows(size_t layer, const Tensor& x) const = 0;
  // The attended values of layer `layer` in the row layout of `queries` (undefined when `queries`
  // is). weights_out, when given, gets the weights; a context that runs only the fused op throws.
  virtual Tensor attend(size_t layer, const Tensor& queries, const Tensor& keys, const Tensor& values,
                        Tensor* weights_out) = 0;
  // The attended values when each query sees only itself (none): each query row's own value in
  // `values` (.., Tq, H), the query rows' values, zero where a knockout hides a position from
  // itself. weights_out, when given, gets the identity weights; a context that forms none throws.
  virtual Tensor attend_self(size_t layer, const Tensor& values, Tensor* weights_out) = 0;
  // Whether layer `layer` takes its projections packed, as one product makes them (attend_qkv,
  // attend_kv): the fused paths say yes (rotary positions go in with them: the ops turn q and k),
  // except, in the packed loss, where a knockout applies (its layers are rebuilt as padded tensors);
  // the composed path and the cache say no.
  virtual bool takes_packed(size_t /*layer*/) const { return false; }
  // attend with the projections packed: qkv (.., T, H + H + Hv) of a layer whose queries are its
  // rows (queries of width `width`), or queries (.., Tq, H) apart and kv (.., T, H + Hv).
  virtual Tensor attend_qkv(size_t layer, Tensor qkv, int64_t width);
  virtual Tensor attend_kv(size_t layer, Tensor queries, Tensor kv);
};

// The attention half of a block. forward is the same for every mode (project the query rows and
// the key/value rows, let the context attend, project back); the modes differ in the projections.
class BlockAttention : public nn::Module {
 public:
  // x_queries (.., Tq, D) or undefined, x (.., T, D) -> (.., Tq, D), or undefined with x_queries.
  virtual Tensor forward(size_t layer, const Tensor& x_queries, const Tensor& x, AttentionContext& context,
                         Tensor* weights_out) const;
  // Whether a query may see a key that the sequence's mask allows (`allowed`): every mode keeps
  // the mask but none, where each query sees only itself.
  virtual bool sees(int64_t /*query*/, int64_t /*key*/, bool allowed) const { return allowed; }

 protected:
  virtual Tensor queries(const Tensor& x) const = 0;
  virtual Tensor keys(const Tensor& x) const = 0;
  virtual Tensor values(const Tensor& x) const = 0;
  virtual Tensor output(const Tensor& attended) const = 0;
};

// Learned W_q, W_k, W_v (D -> H) and W_o (H -> D), as in the tutorial's SelfAttention class (no biases).
class LearnedAttention : public BlockAttention {
 public:
  LearnedAttention(int64_t d_model, int64_t d_k, Generator& gen);
  nn::Linear W_q, W_k, W_v, W_o;
  // Where the context takes them packed, the projections over the same rows are one product: x
  // (.., T, D) @ [W_q; W_k; W_v]^T when the queries are x's own rows, else x @ [W_k; W_v]^T beside
  // the queries' own; elsewhere BlockAttention's forward.
  Tensor forward(size_t layer, const Tensor& x_queries, const Tensor& x, AttentionContext& context,
                 Tensor* weights_out) const override;

 protected:
  Tensor queries(const Tensor& x) const override { return W_q.forward(x); }
  Tensor keys(const Tensor& x) const override { return W_k.forward(x); }
  Tensor values(const Tensor& x) const override { return W_v.forward(x); }
  Tensor output(const Tensor& attended) const override { return W_o.forward(attended); }
};

// The tutorial's Attempt 1: Q = K = V = x, no parameters.
class StaticAttention : public BlockAttention {
 protected:
  Tensor queries(const Tensor& x) const override { return x; }
  Tensor keys(const Tensor& x) const override { return x; }
  Tensor values(const Tensor& x) const override { return x; }
  Tensor output(const Tensor& attended) const override { return attended; }
};

// The ablation without attention: each token sees only itself (identity weights), so a block is
// x + x followed by LayerNorm and the feed-forward layer.
class NoAttention : public StaticAttention {
 public:
  // Each query row's own value, in every row layout: no scores, no attention op.
  Tensor forward(size_t layer, const Tensor& x_queries, const Tensor& x, AttentionContext& context,
                 Tensor* weights_out) const override;
  bool sees(int64_t query, int64_t key, bool) const override { return query == key; }
};

// The attention of `mode`; only learned draws from `gen`.
std::unique_ptr<BlockAttention> make_attention(AttentionMode mode, int64_t d_model, int64_t d_k, Generator& gen);

class FeedForward : public nn::Module {
 public:
  FeedForward(int64_t d_model, int64_t d_ff, Activation activation, Generator& gen);
  Tensor forward(const Tensor& x) const;  // (..., D) -> act(x W1^T + b1) W2^T + b2
  nn::Linear fc1, fc2;
  Activation activation;
};

// What one call of a block records and applies.
struct BlockOptions {
  bool record_attention = false;  // hand back the weights (the context must run the composed path)
  double dropout = 0.0;           // on the attention and feed-forward outputs, while training
  bool training = false;
  Generator* dropout_generator = nullptr;  // needed when training with dropout > 0
};

struct BlockOutput {
  Tensor out;      // (.., Tq, D): h + dropout(FFN(h)); undefined when the layer had no query rows
  Tensor weights;  // (B, Tq, T), detached, when recorded
};

// One layer: context = x + dropout(attention(x)), h = LayerNorm(context), out = h + dropout(FFN(h)).
// Not a Module itself: the translator registers its pieces, so that layer 0 keeps the single-block
// names (attn.*, ln1.*, ffn.*) and layer l >= 1 is named layers.l.attn.*, layers.l.ln1.*, ...
struct Block {
  size_t index = 0;  // which layer (0-based); contexts place rows by it
  std::unique_ptr<BlockAttention> attention;
  std::unique_ptr<nn::LayerNorm> ln1;
  std::unique_ptr<FeedForward> ffn;

  BlockOutput forward(const Tensor& x, AttentionContext& context, const BlockOptions& options) const;
};

}  // namespace qkv::models
