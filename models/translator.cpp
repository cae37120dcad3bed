// models/translator.cpp — the translator's layers and forward pass, its attention mask, greedy
// decoding and the config's JSON form (stored in checkpoints).
#include "translator.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "framework/autograd.h"
#include "framework/bounded_json.h"
#include "framework/ops.h"

namespace qkv::models {

std::string attention_mode_name(AttentionMode mode) {
  switch (mode) {
    case AttentionMode::Learned: return "learned";
    case AttentionMode::Static: return "static";
    case AttentionMode::None: return "none";
  }
  return "?";
}

AttentionMode parse_attention_mode(const std::string& text) {
  if (text == "learned") return AttentionMode::Learned;
  if (text == "static") return AttentionMode::Static;
  if (text == "none") return AttentionMode::None;
  throw std::runtime_error("unknown attention mode '" + text + "' (expected learned, static or none)");
}

std::string TranslatorConfig::to_json() const {
  nlohmann::ordered_json j;
  j["attention"] = attention_mode_name(attention);
  if (layers != 1) j["layers"] = layers;  // absent means 1 (see the header)
  j["d_model"] = d_model;
  j["d_k"] = d_k;
  j["d_ff"] = d_ff;
  j["activation"] = activation;
  j["source_vocab"] = source_vocab;
  j["target_vocab"] = target_vocab;
  j["max_source"] = layout.max_source;
  j["max_target"] = layout.max_target;
  return j.dump();
}

TranslatorConfig TranslatorConfig::from_json(const std::string& text) {
  nlohmann::json j;
  try {
    // a checkpoint's config is untrusted text; ours is one flat object of about ten numbers
    j = parse_bounded_json(text, {.max_depth = 1, .max_values = 64});
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("model config ") + e.what());
  }
  if (!j.is_object()) throw std::runtime_error("model config is not a JSON object");
  auto integer = [&](const char* key) -> int64_t {
    if (!j.contains(key) || !j[key].is_number_integer())
      throw std::runtime_error(fmt::format("model config: '{}' is missing or not an integer", key));
    return j[key].get<int64_t>();
  };
  if (!j.contains("attention") || !j["attention"].is_string())
    throw std::runtime_error("model config: 'attention' is missing or not a string");
  TranslatorConfig c;
  c.attention = parse_attention_mode(j["attention"].get<std::string>());
  c.layers = j.contains("layers") ? integer("layers") : 1;  // checkpoints before the option: one layer
  c.d_model = integer("d_model");
  c.d_k = integer("d_k");
  c.d_ff = integer("d_ff");
  // checkpoints written before the option existed used gelu
  if (j.contains("activation") && !j["activation"].is_string())
    throw std::runtime_error("model config: 'activation' is not a string (relu or gelu)");
  c.activation = j.contains("activation") ? j["activation"].get<std::string>() : "gelu";
  c.source_vocab = integer("source_vocab");
  c.target_vocab = integer("target_vocab");
  c.layout.max_source = integer("max_source");
  c.layout.max_target = integer("max_target");
  c.validate();
  return c;
}

void TranslatorConfig::validate() const {
  auto positive = [](const char* name, int64_t v) {
    if (v <= 0 || v > (1 << 20))
      throw std::runtime_error(fmt::format("model config: {} must be in [1, 1048576], got {}", name, v));
  };
  if (layers < 1 || layers > kMaxLayers)
    throw std::runtime_error(fmt::format("model config: layers must be in [1, {}], got {}", kMaxLayers, layers));
  positive("d_model", d_model);
  positive("d_k", d_k);
  positive("d_ff", d_ff);
  if (activation != "relu" && activation != "gelu")
    throw std::runtime_error("model config: activation must be relu or gelu, got '" + activation + "'");
  positive("source_vocab", source_vocab);
  positive("target_vocab", target_vocab);
  positive("max_source", layout.max_source);
  positive("max_target", layout.max_target);
}

int64_t TranslatorConfig::parameter_count() const {
  const int64_t D = d_model, H = d_k, F = d_ff;
  int64_t count = (source_vocab + target_vocab + layout.length()) * D;  // token and position embeddings
  const int64_t attention = this->attention == AttentionMode::Learned ? 3 * D * H + H * D : 0;  // W_q, W_k, W_v, W_o
  const int64_t block = attention + 2 * D + (D * F + F) + (F * D + D);  // + LayerNorm, fc1, fc2
  count += layers * block;
  return count + D * target_vocab + target_vocab;  // the head
}

// ---- attention ----

double attention_scale(const Tensor& queries) { return 1.0 / std::sqrt(static_cast<double>(queries.size(-1))); }

Tensor attend(const Tensor& queries, const Tensor& keys, const Tensor& values, const Tensor& keep,
              Tensor* weights_out) {
  const double scale = attention_scale(queries);
  Tensor scores = mul_scalar(matmul(queries, keys, false, true), scale);  // (B, T, H) @ (B, T, H)^T -> (B, T, T)
  scores = masked_fill(scores, keep, -std::numeric_limits<double>::infinity());
  Tensor weights = softmax(scores);                                       // rows sum to 1 over keys
  if (weights_out) *weights_out = weights.detach();
  return matmul(weights, values);                                         // (B, T, T) @ (B, T, H) -> (B, T, H)
}

SelfAttention::SelfAttention(int64_t d_model, int64_t d_k_, Generator& gen)
    : W_q(d_model, d_k_, false, gen), W_k(d_model, d_k_, false, gen), W_v(d_model, d_k_, false, gen),
      W_o(d_k_, d_model, false, gen), d_k(d_k_) {
  register_module("W_q", W_q);
  register_module("W_k", W_k);
  register_module("W_v", W_v);
  register_module("W_o", W_o);
}

Tensor SelfAttention::forward(const Tensor& x, const Tensor& keep, Tensor* weights_out) const {
  Tensor q = W_q.forward(x), k = W_k.forward(x), v = W_v.forward(x);  // (B, T, H) each
  return W_o.forward(attend(q, k, v, keep, weights_out));             // (B, T, H) -> (B, T, D)
}

Tensor SelfAttention::forward_fused(const Tensor& x_queries, const Tensor& x, const AttentionMask& mask) const {
  Tensor q = W_q.forward(x_queries), k = W_k.forward(x), v = W_v.forward(x);  // (B, Tq, H), (B, T, H), (B, T, H)
  return W_o.forward(attention(q, k, v, mask, attention_scale(q)));           // (B, Tq, H) -> (B, Tq, D)
}

FeedForward::FeedForward(int64_t d_model, int64_t d_ff, const std::string& activation, Generator& gen)
    : fc1(d_model, d_ff, true, gen), fc2(d_ff, d_model, true, gen), use_gelu(activation == "gelu") {
  register_module("fc1", fc1);
  register_module("fc2", fc2);
}

Tensor FeedForward::forward(const Tensor& x) const {
  Tensor h = fc1.forward(x);
  return fc2.forward(use_gelu ? gelu(h) : relu(h));
}

// ---- the translator ----

static TranslatorConfig checked(const TranslatorConfig& c) {
  c.validate();
  return c;
}

Translator::Translator(const TranslatorConfig& config, Generator& gen)
    : config_(checked(config)),
      src_embed(config.source_vocab, config.d_model, gen),
      tgt_embed(config.target_vocab, config.d_model, gen),
      pos_embed(config.layout.length(), config.d_model, gen),
      layers_(static_cast<size_t>(config.layers)) {
  const bool learned = config.attention == AttentionMode::Learned;
  // Generator draws: the embeddings, then layer 0's feed-forward, the head and layer 0's
  // attention (the order of the original single-block model, so that one-layer checkpoints stay
  // byte-identical for a seed), then each further layer's attention and feed-forward.
  for (auto& layer : layers_) layer.ln1 = std::make_unique<nn::LayerNorm>(config.d_model);
  layers_[0].ffn = std::make_unique<FeedForward>(config.d_model, config.d_ff, config.activation, gen);
  head = std::make_unique<nn::Linear>(config.d_model, config.target_vocab, true, gen);
  if (learned) layers_[0].attn = std::make_unique<SelfAttention>(config.d_model, config.d_k, gen);
  for (size_t l = 1; l < layers_.size(); ++l) {
    if (learned) layers_[l].attn = std::make_unique<SelfAttention>(config.d_model, config.d_k, gen);
    layers_[l].ffn = std::make_unique<FeedForward>(config.d_model, config.d_ff, config.activation, gen);
  }

  register_module("src_embed", src_embed);
  register_module("tgt_embed", tgt_embed);
  register_module("pos_embed", pos_embed);
  // Embeddings start at N(0, 1/D) instead of nn.Embedding's N(0, 1): with unit entries a token's
  // score with itself (|x|^2 / sqrt D ~ 2 sqrt D) dwarfs every other, so parameter-free attention
  // would start (and, its gradients vanishing, stay) one-hot on the token itself.
  {
    NoGradGuard no_grad;
    const double scale = 1.0 / std::sqrt(static_cast<double>(config.d_model));
    for (nn::Embedding* e : {&src_embed, &tgt_embed, &pos_embed}) e->weight.copy_(mul_scalar(e->weight, scale));
  }
  // Layer 0 keeps the single-block names; layer l >= 1 is prefixed "layers.l.".
  for (size_t l = 0; l < layers_.size(); ++l) {
    const std::string prefix = l == 0 ? "" : fmt::format("layers.{}.", l);
    if (layers_[l].attn) register_module(prefix + "attn", *layers_[l].attn);
    register_module(prefix + "ln1", *layers_[l].ln1);
    register_module(prefix + "ffn", *layers_[l].ffn);
  }
  register_module("head", *head);
}

const Tensor& Translator::last_attention(int64_t layer) const {
  if (layer < 0 || layer >= layers())
    throw std::runtime_error(fmt::format("attention layer {} is out of range: this model has {} layer{} (0 to {})",
                                         layer, layers(), layers() == 1 ? "" : "s", layers() - 1));
  static const Tensor none;
  return static_cast<size_t>(layer) < last_attention_.size() ? last_attention_[layer] : none;
}

Tensor Translator::attention_mask(const data::Batch& batch) const {
  const int64_t B = batch.size(), S = config_.layout.max_source, T = S + batch.target_input.size(1);
  std::vector<double> keep(static_cast<size_t>(B * T * T), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n_src = batch.source_lengths.at(b);
    for (int64_t i = 0; i < T; ++i) {
      double* row = keep.data() + (b * T + i) * T;
      if (config_.attention == AttentionMode::None) {  // each token sees only itself
        row[i] = 1.0;
        continue;
      }
      for (int64_t j = 0; j < n_src; ++j) row[j] = 1.0;  // every query sees the real source words
      if (i >= S)
        for (int64_t j = S; j <= i; ++j) row[j] = 1.0;   // target queries: causal over the target
    }
  }
  return Tensor::from_vector(keep, {B, T, T}, src_embed.weight.dtype(), src_embed.weight.device());
}

Tensor Translator::forward(const data::Batch& batch) {
  // The target part may be shorter than the layout's (greedy decoding grows it one step at a time).
  const int64_t S = config_.layout.max_source, T = S + batch.target_input.size(1);
  if (batch.source.size(1) != S || batch.target_input.size(1) < 1 ||
      batch.target_input.size(1) > config_.layout.max_target)
    throw std::runtime_error(fmt::format("translator: batch layout ({}, {}) does not fit the model's ({}, {})",
                                         batch.source.size(1), batch.target_input.size(1), S,
                                         config_.layout.max_target));
  // x = [src_embed(source) ; tgt_embed(target_input)] + pos_embed     (B, T, D)
  Tensor tokens = concat({src_embed.forward(batch.source), tgt_embed.forward(batch.target_input)}, 1);
  Tensor positions = T == config_.layout.length() ? pos_embed.weight : slice(pos_embed.weight, 0, 0, T);
  Tensor embedded = add(tokens, positions);
  last_embeddings_ = embedded.detach();
  Tensor x = dropout(embedded, dropout_, training(), dropout_gen_);
  // The fused op unless the weights are wanted (or for none, whose identity mask is not a kind of
  // the fused op's and whose (T, T) matrix is tiny).
  const bool composed = record_attention_ || config_.attention == AttentionMode::None;
  const Tensor keep = composed ? attention_mask(batch) : Tensor();
  const AttentionMask mask = AttentionMask::prefix_lm(S, batch.source_lengths);

  last_attention_.assign(layers_.size(), Tensor());
  last_contextual_ = Tensor();
  // The last layer's source rows reach no logit: unless they are wanted, its queries (and all
  // that follows attention) cover the target positions only, placed at S by the mask.
  const bool trim_last = !composed && !keep_source_positions_;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const TranslatorLayer& layer = layers_[l];
    const bool target_only = trim_last && l + 1 == layers_.size();
    const Tensor x_queries = target_only ? slice(x, 1, S, T) : x;  // (B, Tq, D), Tq = T_tgt or T
    AttentionMask layer_mask = mask;
    if (target_only) layer_mask.query_offset = S;
    Tensor mixed;  // (B, Tq, D)
    Tensor* weights = record_attention_ ? &last_attention_[l] : nullptr;
    switch (config_.attention) {
      case AttentionMode::Learned:
        mixed = composed ? layer.attn->forward(x, keep, weights) : layer.attn->forward_fused(x_queries, x, layer_mask);
        break;
      case AttentionMode::Static:  // Q = K = V = x
        mixed = composed ? attend(x, x, x, keep, weights)
                         : attention(x_queries, x, x, layer_mask, attention_scale(x_queries));
        break;
      case AttentionMode::None: mixed = attend(x, x, x, keep, weights); break;  // identity weights
    }
    Tensor context;
    x = finish_block(l, x_queries, mixed, &context);
    if (l == 0 && !target_only) last_contextual_ = context.detach();
  }
  Tensor target_part = trim_last ? x : slice(x, 1, S, T);  // (B, T_tgt, D)
  return head->forward(target_part);        // (B, T_tgt, vocab)
}

Tensor Translator::finish_block(size_t l, const Tensor& x, const Tensor& mixed, Tensor* context_out) {
  const TranslatorLayer& layer = layers_[l];
  Tensor context = add(x, dropout(mixed, dropout_, training(), dropout_gen_));
  if (context_out) *context_out = context;
  Tensor h = layer.ln1->forward(context);                                          // residual + LayerNorm
  return add(h, dropout(layer.ffn->forward(h), dropout_, training(), dropout_gen_));  // feed-forward + residual
}

void Translator::decode(const Tensor& source, const std::vector<int64_t>& source_lengths, const ChooseNext& choose) {
  NoGradGuard no_grad;
  const int64_t B = source.size(0), S = config_.layout.max_source, Tt = config_.layout.max_target;
  const Device device = this->device();
  std::vector<int64_t> inputs(static_cast<size_t>(B), data::Vocab::SEP);  // this step's target input per row
  const bool cached = decode_cache_ && (!training() || dropout_ == 0.0) && config_.attention != AttentionMode::None &&
                      !record_attention_;
  if (!cached) {
    // Recompute: the whole target prefix through forward() at every step (the mask is causal, so
    // only the first t + 1 target slots can influence position t).
    std::vector<int64_t> prefix_ids;
    data::Batch batch;
    batch.source = source;
    batch.source_lengths = source_lengths;
    for (int64_t t = 0; t < Tt; ++t) {
      std::vector<int64_t> grown;
      for (int64_t b = 0; b < B; ++b) {
        grown.insert(grown.end(), prefix_ids.begin() + b * t, prefix_ids.begin() + (b + 1) * t);
        grown.push_back(inputs[b]);
      }
      prefix_ids = grown;
      batch.target_input = Tensor::from_ids(prefix_ids, {B, t + 1}, device);
      if (choose(slice(forward(batch), 1, t, t + 1), t, inputs)) return;
    }
    return;
  }
  // Cached: the source once through every layer, keeping each layer's keys and values (learned:
  // W_k x and W_v x; static: x itself) in buffers of S + Tt positions; then one target position
  // per step, its keys and values written into slot S + t. The query at S + t sees no slot past
  // its own (the causal part of the mask), so the slots not yet written (zeros) add exact zeros.
  const bool learned = config_.attention == AttentionMode::Learned;
  std::vector<Tensor> keys(layers_.size()), values(layers_.size());
  {
    Tensor x = add(src_embed.forward(source), slice(pos_embed.weight, 0, 0, S));  // (B, S, D)
    const AttentionMask mask = AttentionMask::prefix_lm(S, source_lengths);
    for (size_t l = 0; l < layers_.size(); ++l) {
      Tensor k = learned ? layers_[l].attn->W_k.forward(x) : x;
      Tensor v = learned ? layers_[l].attn->W_v.forward(x) : x;
      keys[l] = Tensor::zeros({B, S + Tt, k.size(-1)}, k.dtype(), device);
      values[l] = Tensor::zeros({B, S + Tt, v.size(-1)}, v.dtype(), device);
      keys[l].write_at_(1, 0, k);
      values[l].write_at_(1, 0, v);
      if (l + 1 == layers_.size()) break;  // the last layer's source outputs reach no logit
      Tensor q = learned ? layers_[l].attn->W_q.forward(x) : x;
      Tensor mixed = attention(q, k, v, mask, attention_scale(q));
      if (learned) mixed = layers_[l].attn->W_o.forward(mixed);
      x = finish_block(l, x, mixed);
    }
  }
  for (int64_t t = 0; t < Tt; ++t) {
    const int64_t position = S + t;
    Tensor x = add(tgt_embed.forward(Tensor::from_ids(inputs, {B, 1}, device)),
                   slice(pos_embed.weight, 0, position, position + 1));  // (B, 1, D)
    const AttentionMask mask{S, source_lengths, position};                 // the query sits at `position`
    for (size_t l = 0; l < layers_.size(); ++l) {
      Tensor q = learned ? layers_[l].attn->W_q.forward(x) : x;
      keys[l].write_at_(1, position, learned ? layers_[l].attn->W_k.forward(x) : x);
      values[l].write_at_(1, position, learned ? layers_[l].attn->W_v.forward(x) : x);
      Tensor mixed = attention(q, keys[l], values[l], mask, attention_scale(q));  // (B, 1, H)
      if (learned) mixed = layers_[l].attn->W_o.forward(mixed);
      x = finish_block(l, x, mixed);
    }
    if (choose(head->forward(x), t, inputs)) return;  // (B, 1, vocab)
  }
}

Tensor Translator::loss(const data::Batch& batch) {
  const int64_t B = batch.size(), S = config_.layout.max_source, Tt = batch.target_input.size(1);
  const bool fused = !record_attention_ && !keep_source_positions_ && config_.attention != AttentionMode::None;
  if (fused && static_cast<int64_t>(batch.target_lengths.size()) == B &&
      static_cast<int64_t>(batch.source_lengths.size()) == B) {
    int64_t real = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n_src = batch.source_lengths[b], n_tgt = batch.target_lengths[b];
      if (n_src < 0 || n_src > S || n_tgt < 0 || n_tgt > Tt)
        throw std::runtime_error(fmt::format("translator: batch row {} has {} source and {} target positions; the "
                                             "batch holds {} and {}", b, n_src, n_tgt, S, Tt));
      real += n_src + n_tgt;
    }
    if (real < B * (S + Tt)) return packed_loss(batch);  // else every position is real: no rows to skip
  }
  return cross_entropy(forward(batch), batch.target_output, data::Vocab::PAD);
}

// Rows (N, width) -> (B, length, width) with row r of the result taken from rows[slot[r]], and
// zeros where slot[r] is N (the appended zero row). Its gradient gathers the rows back.
static Tensor unpack_rows(const Tensor& rows, const Tensor& slot, int64_t B, int64_t length) {
  const int64_t width = rows.size(-1);
  Tensor padded = concat({rows, Tensor::zeros({1, width}, rows.dtype(), rows.device())}, 0);  // (N + 1, width)
  return reshape(embedding(padded, slot), {B, length, width});
}

Tensor Translator::packed_loss(const data::Batch& batch) {
  const int64_t B = batch.size(), S = config_.layout.max_source, Tt = batch.target_input.size(1), T = S + Tt;
  if (batch.source.size(1) != S || Tt < 1 || Tt > config_.layout.max_target)
    throw std::runtime_error(fmt::format("translator: batch layout ({}, {}) does not fit the model's ({}, {})",
                                         batch.source.size(1), Tt, S, config_.layout.max_target));
  const Device device = this->device();
  // The real positions, row by row: row_of[b * T + p] (every position) and target_row_of[b * Tt + t]
  // (target positions, numbered among the target rows) give a real position's row, or the count
  // of rows (the zero row) for padding.
  std::vector<int64_t> positions, target_positions, target_rows;
  std::vector<int64_t> row_of(static_cast<size_t>(B * T)), target_row_of(static_cast<size_t>(B * Tt));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n_src = batch.source_lengths[b], n_tgt = batch.target_lengths[b];  // checked by loss()
    for (int64_t p = 0; p < T; ++p) {
      const bool real = p < S ? p < n_src : p - S < n_tgt;
      row_of[b * T + p] = real ? static_cast<int64_t>(positions.size()) : -1;
      if (!real) continue;
      if (p >= S) {
        target_row_of[b * Tt + (p - S)] = static_cast<int64_t>(target_rows.size());
        target_rows.push_back(static_cast<int64_t>(positions.size()));
        target_positions.push_back(b * Tt + (p - S));
      }
      positions.push_back(b * T + p);
    }
    for (int64_t t = n_tgt; t < Tt; ++t) target_row_of[b * Tt + t] = -1;
  }
  const int64_t N = static_cast<int64_t>(positions.size()), N_tgt = static_cast<int64_t>(target_rows.size());
  for (int64_t& r : row_of) r = r < 0 ? N : r;
  for (int64_t& r : target_row_of) r = r < 0 ? N_tgt : r;
  const int64_t D = config_.d_model;
  auto ids = [&](const std::vector<int64_t>& v) { return Tensor::from_ids(v, {static_cast<int64_t>(v.size())}, device); };
  const Tensor position_ids = ids(positions), target_row_ids = ids(target_rows), target_position_ids = ids(target_positions);
  const Tensor row_slots = ids(row_of), target_slots = ids(target_row_of);

  // x = [src_embed(source) ; tgt_embed(target_input)] + pos_embed, then its real rows   (N, D)
  Tensor tokens = concat({src_embed.forward(batch.source), tgt_embed.forward(batch.target_input)}, 1);
  Tensor positions_embedded = T == config_.layout.length() ? pos_embed.weight : slice(pos_embed.weight, 0, 0, T);
  Tensor embedded = add(tokens, positions_embedded);  // (B, T, D)
  last_embeddings_ = embedded.detach();
  last_contextual_ = Tensor();
  last_attention_.assign(layers_.size(), Tensor());
  Tensor x = dropout(embedding(reshape(embedded, {B * T, D}), position_ids), dropout_, training(), dropout_gen_);
  const AttentionMask mask = AttentionMask::prefix_lm(S, batch.source_lengths);
  const bool learned = config_.attention == AttentionMode::Learned;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const TranslatorLayer& layer = layers_[l];
    // The last layer's queries are the target rows alone (the head reads nothing else).
    const bool last = l + 1 == layers_.size();
    const Tensor x_queries = last ? embedding(x, target_row_ids) : x;  // (N_q, D)
    const Tensor q = learned ? layer.attn->W_q.forward(x_queries) : x_queries;
    const Tensor k = learned ? layer.attn->W_k.forward(x) : x;
    const Tensor v = learned ? layer.attn->W_v.forward(x) : x;
    AttentionMask layer_mask = mask;
    if (last) layer_mask.query_offset = S;
    Tensor attended = attention(last ? unpack_rows(q, target_slots, B, Tt) : unpack_rows(q, row_slots, B, T),
                                unpack_rows(k, row_slots, B, T), unpack_rows(v, row_slots, B, T), layer_mask,
                                attention_scale(q));  // (B, Tq, H)
    const int64_t H = attended.size(-1);
    Tensor mixed = embedding(reshape(attended, {attended.size(0) * attended.size(1), H}),
                             last ? target_position_ids : position_ids);  // (N_q, H)
    if (learned) mixed = layer.attn->W_o.forward(mixed);
    x = finish_block(l, x_queries, mixed);
  }
  // The head over the target rows, placed back in (B, Tt, vocab) with zeros at the padding, which
  // cross_entropy ignores.
  Tensor logits = unpack_rows(head->forward(x), target_slots, B, Tt);
  return cross_entropy(logits, batch.target_output, data::Vocab::PAD);
}

void Translator::freeze_token_embeddings() {
  src_embed.weight.set_requires_grad(false);
  tgt_embed.weight.set_requires_grad(false);
}

void Translator::set_dropout(double p, uint64_t seed) {
  if (p < 0.0 || p >= 1.0) throw std::runtime_error(fmt::format("dropout must be in [0, 1), got {}", p));
  dropout_ = p;
  dropout_gen_.seed(seed);
}

int64_t Translator::attention_parameter_count() const {
  int64_t count = 0;
  for (const auto& layer : layers_)
    if (layer.attn) count += layer.attn->parameter_count();
  return count;
}

std::vector<std::vector<std::string>> Translator::translate(
    const std::vector<std::vector<std::string>>& english, const data::Vocab& english_vocab,
    const data::Vocab& hindi_vocab) {
  NoGradGuard no_grad;
  const int64_t B = static_cast<int64_t>(english.size());
  const int64_t S = config_.layout.max_source, Tt = config_.layout.max_target;
  std::vector<std::vector<std::string>> out(B);
  if (B == 0) return out;
  std::vector<int64_t> src(B * S, data::Vocab::PAD), lengths;
  for (int64_t b = 0; b < B; ++b) {
    const auto& sentence = english[b];
    if (sentence.empty()) throw std::runtime_error("translate: the sentence is empty");
    if (static_cast<int64_t>(sentence.size()) > S)
      throw std::runtime_error(fmt::format("translate: the sentence has {} words; this model reads at most {}",
                                           sentence.size(), S));
    for (size_t i = 0; i < sentence.size(); ++i) src[b * S + i] = english_vocab.id(sentence[i]);
    lengths.push_back(static_cast<int64_t>(sentence.size()));
  }
  std::vector<bool> done(B, false);
  decode(Tensor::from_ids(src, {B, S}, this->device()), lengths,
         [&](const Tensor& logits, int64_t t, std::vector<int64_t>& next) {
    const std::vector<int64_t> best = max_with_indices(logits, -1).indices.to_ids();  // (B, 1)
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      next[b] = data::Vocab::PAD;  // a finished row is fed padding (its outputs are not read)
      if (done[b]) continue;
      if (best[b] == data::Vocab::EOS || t + 1 == Tt) {
        done[b] = true;
        continue;  // a translation that fills every slot is cut there (no room for <eos>)
      }
      out[b].push_back(hindi_vocab.word(best[b]));
      next[b] = best[b];
      all_done = false;
    }
    return all_done;
  });
  return out;
}

Tensor source_token_vector(Translator& model, const std::vector<std::string>& english,
                           const data::Vocab& english_vocab, size_t position, TokenVector kind) {
  if (position >= english.size())
    throw std::runtime_error(fmt::format("token position {} is past the end of a {}-word sentence", position, english.size()));
  const int64_t S = model.config().layout.max_source;
  if (static_cast<int64_t>(english.size()) > S)
    throw std::runtime_error(fmt::format("the sentence has {} words; this model reads at most {}", english.size(), S));
  NoGradGuard no_grad;
  std::vector<int64_t> ids(S, data::Vocab::PAD);
  for (size_t i = 0; i < english.size(); ++i) ids[i] = english_vocab.id(english[i]);
  data::Batch batch;
  batch.source = Tensor::from_ids(ids, {1, S}, model.device());
  batch.target_input = Tensor::from_ids({data::Vocab::SEP}, {1, 1}, model.device());  // source positions ignore it
  batch.source_lengths = {static_cast<int64_t>(english.size())};
  struct KeepSourcePositions {  // a one-layer model would otherwise skip the source rows
    Translator& model;
    const bool was;
    explicit KeepSourcePositions(Translator& m) : model(m), was(m.keep_source_positions()) {
      model.set_keep_source_positions(true);
    }
    ~KeepSourcePositions() { model.set_keep_source_positions(was); }
  } keep_source(model);
  model.forward(batch);
  const Tensor& all = kind == TokenVector::Embedding ? model.last_embeddings() : model.last_contextual();
  const int64_t p = static_cast<int64_t>(position);
  return reshape(slice(all, 1, p, p + 1), {all.size(-1)});  // (1, T, D) -> (D,)
}

AttentionTrace trace_attention(Translator& model, const std::vector<std::string>& english,
                               const data::Vocab& english_vocab, const data::Vocab& hindi_vocab,
                               int64_t layer) {
  model.last_attention(layer);  // checks the range before any work
  AttentionTrace trace;
  trace.layer = layer;
  trace.layers = model.layers();
  trace.english = english;
  trace.hindi = model.translate({english}, english_vocab, hindi_vocab)[0];
  // One teacher-forced pass over the model's own translation exposes the weights used for it.
  const data::Layout layout = model.config().layout;
  data::SentencePair pair{english, trace.hindi, "<sentence>"};
  NoGradGuard no_grad;
  const data::Batch batch = data::make_batch({pair}, {0}, english_vocab, hindi_vocab, layout, model.device());
  const bool was_recording = model.record_attention();
  model.set_record_attention(true);
  model.forward(batch);
  model.set_record_attention(was_recording);
  const Tensor keep = model.attention_mask(batch);
  const std::vector<double> weights = model.last_attention(layer).to_vector();
  const std::vector<double> allowed = keep.to_vector();
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < static_cast<int64_t>(english.size()); ++i) positions.push_back(i);
  for (int64_t i = 0; i <= static_cast<int64_t>(trace.hindi.size()); ++i) positions.push_back(layout.max_source + i);
  trace.labels = english;
  trace.labels.push_back("<sep>");
  for (const auto& w : trace.hindi) trace.labels.push_back(w);
  const int64_t T = layout.length();
  for (int64_t qi : positions)
    for (int64_t kj : positions) {
      trace.weights.push_back(weights[qi * T + kj]);
      trace.masked.push_back(allowed[qi * T + kj] == 0.0 ? 1 : 0);
    }
  // Replace unknown words' labels so pictures show what the model saw.
  for (size_t i = 0; i < english.size(); ++i)
    if (!english_vocab.contains(english[i])) trace.labels[i] = "<unk>";
  return trace;
}

}  // namespace qkv::models
