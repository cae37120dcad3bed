// models/translator.cpp — the translator: its config's JSON form (stored in checkpoints), the
// attention mask, and forward, the packed loss and greedy decoding, which differ only in the row
// layout (an AttentionContext) they hand to one loop over the blocks. The blocks are models/block.cpp.
#include "translator.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "framework/autograd.h"
#include "framework/bounded_json.h"
#include "framework/ops.h"

namespace qkv::models {

std::string TranslatorConfig::to_json() const {
  nlohmann::ordered_json j;
  j["attention"] = attention_mode_name(attention);
  if (layers != 1) j["layers"] = layers;  // absent means 1 (see the header)
  j["d_model"] = d_model;
  j["d_k"] = d_k;
  j["d_ff"] = d_ff;
  j["activation"] = activation_name(activation);
  if (positions != Positions::Absolute) j["positions"] = positions_name(positions);  // absent means absolute
  if (frozen_embeddings) j["frozen_embeddings"] = true;  // absent means trained
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
  // A choice added after the first checkpoints: its spelling, or `before` (what those checkpoints used).
  auto later_choice = [&](const char* key, const char* before, auto parse) {
    if (j.contains(key) && !j[key].is_string())
      throw std::runtime_error(fmt::format("model config: '{}' is not a string", key));
    try {
      return parse(j.contains(key) ? j[key].get<std::string>() : std::string(before));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string("model config: ") + e.what());
    }
  };
  c.activation = later_choice("activation", "gelu", parse_activation);
  c.positions = later_choice("positions", "absolute", parse_positions);
  if (j.contains("frozen_embeddings")) {
    if (!j["frozen_embeddings"].is_boolean())
      throw std::runtime_error("model config: 'frozen_embeddings' is not true or false");
    c.frozen_embeddings = j["frozen_embeddings"].get<bool>();
  }
  c.source_vocab = integer("source_vocab");
  c.target_vocab = integer("target_vocab");
  c.layout.max_source = integer("max_source");
  c.layout.max_target = integer("max_target");
  c.validate();
  return c;
}

void TranslatorConfig::validate() const {
  auto positive = [](const char* name, int64_t v, int64_t most = 1 << 20) {
    if (v <= 0 || v > most) throw std::runtime_error(fmt::format("model config: {} must be in [1, {}], got {}", name, most, v));
  };
  positive("layers", layers, kMaxLayers);
  positive("d_model", d_model, kMaxWidth);
  positive("d_k", d_k, kMaxWidth);
  positive("d_ff", d_ff, kMaxFeedForward);
  positive("source_vocab", source_vocab);
  positive("target_vocab", target_vocab);
  positive("max_source", layout.max_source);
  positive("max_target", layout.max_target);
  if (has_rotary(positions) && head_width() % 2 != 0)
    throw std::runtime_error(fmt::format("model config: {} positions turn pairs of query and key features, so the head "
                                         "width must be even, got {} ({})", positions_name(positions), head_width(),
                                         attention == AttentionMode::Learned ? "--d-k" : "--d-model"));
}

int64_t TranslatorConfig::parameter_count() const {
  const int64_t D = d_model, H = d_k, F = d_ff;
  int64_t count = (source_vocab + target_vocab) * D;                            // token embeddings
  if (has_position_embedding(positions)) count += layout.length() * D;           // position embedding
  const int64_t attention = this->attention == AttentionMode::Learned ? 3 * D * H + H * D : 0;  // W_q, W_k, W_v, W_o
  const int64_t block = attention + 2 * D + (D * F + F) + (F * D + D);  // + LayerNorm, fc1, fc2
  count += layers * block;
  return count + D * target_vocab + target_vocab;  // the head
}

// ---- knockout ----

AttentionMask Knockout::applied(AttentionMask mask, size_t block) const {
  if (!applies_to(block)) return mask;
  mask.knockout_key = key;
  mask.knockout_from = query_from;
  mask.knockout_to = query_to;
  return mask;
}

void Knockout::validate(int64_t sequence_length, int64_t layers) const {
  if (!active()) return;
  if (key >= sequence_length || query_from < 0 || query_to > sequence_length || query_from >= query_to)
    throw std::runtime_error(fmt::format("knockout: key {} and queries [{}, {}) must lie in the {} positions of the "
                                         "sequence (queries a non-empty range)", key, query_from, query_to,
                                         sequence_length));
  if (layer < -1 || layer >= layers)
    throw std::runtime_error(fmt::format("knockout: layer {} is out of range: this model has {} layer{} (0 to {}, "
                                         "or -1 for all)", layer, layers, layers == 1 ? "" : "s", layers - 1));
}

// The composed path's (B, T, T) keep mask with the knockout's cells zeroed.
static Tensor knocked_keep(const Tensor& keep, const Knockout& knockout) {
  const int64_t B = keep.size(0), T = keep.size(1);
  std::vector<double> cells = keep.to_vector();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = knockout.query_from; i < std::min(knockout.query_to, T); ++i) cells[(b * T + i) * T + knockout.key] = 0.0;
  return Tensor::from_vector(cells, keep.shape(), keep.dtype(), keep.device());
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
      pos_embed(has_position_embedding(config.positions)
                    ? std::make_unique<nn::Embedding>(config.layout.length(), config.d_model, gen)
                    : nullptr),
      blocks_(static_cast<size_t>(config.layers)) {
  // Generator draws: the embeddings, then layer 0's feed-forward, the head and layer 0's
  // attention (the order of the original single-block model, so that one-layer checkpoints stay
  // byte-identical for a seed), then each further layer's attention and feed-forward. Only learned
  // attention draws.
  for (size_t l = 0; l < blocks_.size(); ++l) {
    blocks_[l].index = l;
    blocks_[l].ln1 = std::make_unique<nn::LayerNorm>(config.d_model);
  }
  blocks_[0].ffn = std::make_unique<FeedForward>(config.d_model, config.d_ff, config.activation, gen);
  head = std::make_unique<nn::Linear>(config.d_model, config.target_vocab, true, gen);
  blocks_[0].attention = make_attention(config.attention, config.d_model, config.d_k, gen);
  for (size_t l = 1; l < blocks_.size(); ++l) {
    blocks_[l].attention = make_attention(config.attention, config.d_model, config.d_k, gen);
    blocks_[l].ffn = std::make_unique<FeedForward>(config.d_model, config.d_ff, config.activation, gen);
  }

  register_module("src_embed", src_embed);
  register_module("tgt_embed", tgt_embed);
  if (pos_embed) register_module("pos_embed", *pos_embed);
  // Embeddings start at N(0, 1/D) instead of nn.Embedding's N(0, 1): with unit entries a token's
  // score with itself (|x|^2 / sqrt D ~ 2 sqrt D) dwarfs every other, so parameter-free attention
  // would start (and, its gradients vanishing, stay) one-hot on the token itself.
  {
    NoGradGuard no_grad;
    const double scale = 1.0 / std::sqrt(static_cast<double>(config.d_model));
    for (nn::Embedding* e : {&src_embed, &tgt_embed, pos_embed.get()})
      if (e) e->weight.copy_(mul_scalar(e->weight, scale));
  }
  // Layer 0 keeps the single-block names; layer l >= 1 is prefixed "layers.l.". Static and none
  // attention have no parameters, so "attn" names nothing for them.
  for (const Block& block : blocks_) {
    const std::string prefix = block.index == 0 ? "" : fmt::format("layers.{}.", block.index);
    register_module(prefix + "attn", *block.attention);
    register_module(prefix + "ln1", *block.ln1);
    register_module(prefix + "ffn", *block.ffn);
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

data::Layout Translator::layout_fitting(int64_t source_words, int64_t target_positions) const {
  const data::Layout own = config_.layout;
  if (source_words <= own.max_source && target_positions <= own.max_target) return own;
  if (!reads_longer())
    throw std::runtime_error(fmt::format("a sentence of {} words and {} target positions is longer than this model's "
                                         "layout ({} source, {} target positions): its {} positions cannot read past "
                                         "it (a rotary or alibi model can)", source_words, target_positions, own.max_source,
                                         own.max_target, positions_name(config_.positions)));
  return {std::max(own.max_source, source_words), std::max(own.max_target, target_positions)};
}

int64_t Translator::decode_length(int64_t S) const {
  const data::Layout own = config_.layout;
  return reads_longer() && S > own.max_source ? own.max_target + 2 * (S - own.max_source) : own.max_target;
}

Tensor Translator::attention_mask(const data::Batch& batch) const {
  const int64_t B = batch.size(), S = batch.source.size(1), T = S + batch.target_input.size(1);
  std::vector<double> keep(static_cast<size_t>(B * T * T), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n_src = batch.source_lengths.at(b);
    for (int64_t i = 0; i < T; ++i) {
      double* row = keep.data() + (b * T + i) * T;
      if (!mixes_tokens()) {  // each token sees only itself
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

// ---- the three row layouts of a pass over the layers ----

namespace {

// Rotary positions where q meets k: the tables of a set of rows, or none (absolute positions
// alone), when apply hands x back unchanged. Every context turns its queries and keys by their
// positions before the attention op, so the fused, ragged, cached and composed paths and every
// knockout see the same turned vectors, and the cache holds turned keys.
struct Turn {
  RotaryTables tables;
  Tensor apply(const Tensor& x) const { return tables.cos.defined() && x.defined() ? rotary(x, tables.cos, tables.sin) : x; }
  Turn rows(int64_t axis, int64_t begin, int64_t end) const {  // the tables of a slice of the rows
    if (!tables.cos.defined()) return {};
    return {{slice(tables.cos, axis, begin, end), slice(tables.sin, axis, begin, end)}};
  }
};

Turn make_turn(const TranslatorConfig& config, const std::vector<int64_t>& positions, const Shape& rows, DType dtype,
               Device device) {
  if (!has_rotary(config.positions)) return {};
  return {rotary_tables(positions, rows, config.head_width() / 2, dtype, device)};
}

// The (B, T, T) ALiBi bias of the composed path, -slope * |pos(i) - pos(j)| for the sequence's
// positions (B * T of them), or undefined without ALiBi: the fused op adds the same inside its tiles.
Tensor distance_bias(const TranslatorConfig& config, const std::vector<int64_t>& positions, int64_t B, int64_t T,
                     DType dtype, Device device) {
  const double slope = distance_slope(config.positions);
  if (slope == 0) return Tensor();
  std::vector<double> cells(static_cast<size_t>(B * T * T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j)
        cells[(b * T + i) * T + j] = -slope * static_cast<double>(std::llabs(positions[b * T + i] - positions[b * T + j]));
  return Tensor::from_vector(cells, {B, T, T}, dtype, device);
}

// The rotary position of each slot of a (B, S + Tt) sequence: English word i at i and target slot t
// right after its own sentence, at n_src + t, so that the distance between two tokens is their
// distance in [english ; <sep> hindi] whatever the padding (a padding slot keeps its index; no real
// query sees it).
std::vector<int64_t> sequence_positions(int64_t S, int64_t Tt, const std::vector<int64_t>& source_lengths) {
  std::vector<int64_t> positions;
  for (int64_t n_src : source_lengths)
    for (int64_t p = 0; p < S + Tt; ++p) positions.push_back(p < S ? p : n_src + (p - S));
  return positions;
}

// forward's: the whole (B, T, D) sequence through the fused op, or through the composed path with
// the (B, T, T) keep mask (to record the weights, and for none with a knockout), or, for none
// otherwise, self_only: each position sees only itself, so its attended value is its own value (the
// composed path's identity weights give exactly that: softmax over one visible score is 1, and its
// gradient reaches only the values). Unless the last layer's source rows are wanted, its queries are
// the target positions alone, placed at S by the mask.
class SequenceContext final : public AttentionContext {
 public:
  SequenceContext(int64_t S, int64_t T, size_t layers, Tensor keep, AttentionMask mask, bool trim_last,
                  const Knockout& knockout, bool self_only, Turn turn, Tensor bias)
      : S_(S), T_(T), layers_(layers), keep_(std::move(keep)), mask_(std::move(mask)), trim_last_(trim_last),
        knockout_(knockout), self_only_(self_only), turn_(std::move(turn)), target_turn_(turn_.rows(1, S, T)),
        bias_(std::move(bias)) {
    if (keep_.defined() && knockout_.active()) keep_knocked_ = knocked_keep(keep_, knockout_);
  }
  bool target_only(size_t layer) const { return trim_last_ && layer + 1 == layers_; }
  Tensor query_rows(size_t layer, const Tensor& x) const override {
    return target_only(layer) ? slice(x, 1, S_, T_) : x;  // (B, Tq, D), Tq = T_tgt or T
  }
  Tensor attend(size_t layer, const Tensor& plain_queries, const Tensor& plain_keys, const Tensor& values,
                Tensor* weights_out) override {
    if (self_only_) {
      if (weights_out) throw std::logic_error("translator: self-only attention forms no weights to record");
      return target_only(layer) ? slice(values, 1, S_, T_) : values;  // (B, Tq, H)
    }
    const Tensor queries = (target_only(layer) ? target_turn_ : turn_).apply(plain_queries);
    const Tensor keys = turn_.apply(plain_keys);
    if (keep_.defined())
      return models::attend(queries, keys, values, knockout_.applies_to(layer) ? keep_knocked_ : keep_, weights_out,
                            bias_);
    if (weights_out) throw std::logic_error("translator: the fused attention op forms no weights to record");
    AttentionMask layer_mask = knockout_.applied(mask_, layer);
    if (target_only(layer)) layer_mask.query_offset = S_;
    return attention(queries, keys, values, layer_mask, attention_scale(queries));
  }

 private:
  int64_t S_, T_;
  size_t layers_;
  Tensor keep_;  // (B, T, T) 0/1 on the composed path, else undefined
  Tensor keep_knocked_;  // keep_ with the knockout's cells zeroed, when both are set
  AttentionMask mask_;
  bool trim_last_;
  Knockout knockout_;
  bool self_only_;
  Turn turn_, target_turn_;  // (B, T, H/2) and its target slots (B, T_tgt, H/2), with rotary positions
  Tensor bias_;              // (B, T, T) ALiBi bias of the composed path, or undefined
};

// packed_loss's real positions: batch entry b's n_src source rows, then its n_tgt target rows.
// row_of / target_row_of give a real position's row among all rows / among the target rows, or the
// count of rows (the appended zero row) for padding.
struct PackedRows {
  int64_t B = 0, T = 0, Tt = 0;
  Tensor position_ids;         // (N): b * T + p of each row
  Tensor target_row_ids;       // (N_tgt): each target row's index among all rows
  Tensor target_position_ids;  // (N_tgt): b * Tt + t of each target row
  Tensor row_slots;            // (B * T): row_of
  Tensor target_slots;         // (B * Tt): target_row_of
  // each row's rotary position (its index within its entry's [source ; target] rows), all rows and
  // the target rows
  std::vector<int64_t> row_positions, target_row_positions;
  // The ragged attention over the rows: every row queries (all_queries) or the target rows alone
  // (target_queries, the last layer); the keys are every row, the source a prefix before causal targets.
  RaggedLayout all_queries, target_queries;
};

PackedRows pack_rows(const data::Batch& batch, int64_t S, Device device, double distance_slope) {
  PackedRows r;
  r.B = batch.size();
  r.Tt = batch.target_input.size(1);
  r.T = S + r.Tt;
  const int64_t B = r.B, T = r.T, Tt = r.Tt;
  std::vector<int64_t> positions, target_positions, target_rows;
  std::vector<int64_t> row_of(static_cast<size_t>(B * T)), target_row_of(static_cast<size_t>(B * Tt));
  r.all_queries.query_starts = {0};
  r.target_queries.query_starts = {0};
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n_src = batch.source_lengths[b], n_tgt = batch.target_lengths[b];  // checked by loss()
    r.all_queries.query_starts.push_back(r.all_queries.query_starts.back() + n_src + n_tgt);
    r.target_queries.query_starts.push_back(r.target_queries.query_starts.back() + n_tgt);
    r.all_queries.prefix.push_back(n_src);
    for (int64_t p = 0; p < T; ++p) {
      const bool real = p < S ? p < n_src : p - S < n_tgt;
      row_of[b * T + p] = real ? static_cast<int64_t>(positions.size()) : -1;
      if (!real) continue;
      r.row_positions.push_back(p < S ? p : n_src + (p - S));
      if (p >= S) {
        r.target_row_positions.push_back(n_src + (p - S));
        target_row_of[b * Tt + (p - S)] = static_cast<int64_t>(target_rows.size());
        target_rows.push_back(static_cast<int64_t>(positions.size()));
        target_positions.push_back(b * Tt + (p - S));
      }
      positions.push_back(b * T + p);
    }
    for (int64_t t = n_tgt; t < Tt; ++t) target_row_of[b * Tt + t] = -1;
  }
  const int64_t N = static_cast<int64_t>(positions.size()), N_tgt = static_cast<int64_t>(target_rows.size());
  for (int64_t& row : row_of) row = row < 0 ? N : row;
  for (int64_t& row : target_row_of) row = row < 0 ? N_tgt : row;
  auto ids = [&](const std::vector<int64_t>& v) { return Tensor::from_ids(v, {static_cast<int64_t>(v.size())}, device); };
  r.position_ids = ids(positions);
  r.target_row_ids = ids(target_rows);
  r.target_position_ids = ids(target_positions);
  r.row_slots = ids(row_of);
  r.target_slots = ids(target_row_of);
  r.all_queries.key_starts = r.all_queries.query_starts;
  r.target_queries.key_starts = r.all_queries.query_starts;
  r.target_queries.prefix = r.all_queries.prefix;
  r.all_queries.distance_slope = r.target_queries.distance_slope = distance_slope;  // ALiBi's, or 0
  return r;
}

// Rows (N, width) -> (B, length, width) with row r of the result taken from rows[slot[r]], and
// zeros where slot[r] is N (the appended zero row). Its gradient gathers the rows back.
Tensor unpack_rows(const Tensor& rows, const Tensor& slot, int64_t B, int64_t length) {
  const int64_t width = rows.size(-1);
  Tensor padded = concat({rows, Tensor::zeros({1, width}, rows.dtype(), rows.device())}, 0);  // (N + 1, width)
  return reshape(embedding(padded, slot), {B, length, width});
}

// packed_loss's: rows (N, D) of the real positions; attention reads them as ragged sequences. The
// last layer's queries are the target rows alone (the head reads nothing else).
class PackedContext final : public AttentionContext {
 public:
  PackedContext(const PackedRows& rows, int64_t S, size_t layers, AttentionMask mask, const Knockout& knockout,
                Turn turn, Turn target_turn)
      : rows_(rows), S_(S), layers_(layers), mask_(std::move(mask)), knockout_(knockout), turn_(std::move(turn)),
        target_turn_(std::move(target_turn)) {}
  Tensor query_rows(size_t layer, const Tensor& x) const override {
    return last(layer) ? embedding(x, rows_.target_row_ids) : x;  // (N_q, D)
  }
  Tensor attend(size_t layer, const Tensor& plain_q, const Tensor& plain_k, const Tensor& v,
                Tensor* weights_out) override {
    if (weights_out) throw std::logic_error("translator: the packed loss forms no attention weights to record");
    const Tensor q = (last(layer) ? target_turn_ : turn_).apply(plain_q), k = turn_.apply(plain_k);
    if (knockout_.applies_to(layer)) return attend_padded(layer, q, k, v);
    const RaggedLayout& layout = last(layer) ? rows_.target_queries : rows_.all_queries;
    return attention_ragged(q, k, v, layout, attention_scale(q));  // (N_q, H)
  }

 private:
  bool last(size_t layer) const { return layer + 1 == layers_; }
  // A knockout names padded positions: its layers attend over (B, T, H) tensors rebuilt from the rows.
  Tensor attend_padded(size_t layer, const Tensor& q, const Tensor& k, const Tensor& v) const {
    const int64_t B = rows_.B, T = rows_.T, Tt = rows_.Tt;
    const bool last = this->last(layer);
    AttentionMask layer_mask = knockout_.applied(mask_, layer);
    if (last) layer_mask.query_offset = S_;
    Tensor attended = attention(last ? unpack_rows(q, rows_.target_slots, B, Tt) : unpack_rows(q, rows_.row_slots, B, T),
                                unpack_rows(k, rows_.row_slots, B, T), unpack_rows(v, rows_.row_slots, B, T), layer_mask,
                                attention_scale(q));  // (B, Tq, H)
    const int64_t H = attended.size(-1);
    return embedding(reshape(attended, {attended.size(0) * attended.size(1), H}),
                     last ? rows_.target_position_ids : rows_.position_ids);  // (N_q, H)
  }

  const PackedRows& rows_;
  int64_t S_;
  size_t layers_;
  AttentionMask mask_;
  Knockout knockout_;
  Turn turn_, target_turn_;  // (N, H/2) and (N_tgt, H/2), with rotary positions
};

// decode's: every layer's keys and values in buffers of S + Tt positions. First the source rows
// (B, S, D) go in at position 0 (the last layer's source outputs reach no logit, so it only stores
// its keys and values), then one target row (B, 1, D) per step at S + t. The query at S + t sees
// no slot past its own (the causal part of the mask), so the slots not yet written (zeros) add
// exact zeros.
class CachedContext final : public AttentionContext {
 public:
  CachedContext(int64_t B, int64_t S, int64_t Tt, size_t layers, std::vector<int64_t> source_lengths, Device device,
                const Knockout& knockout, double distance_slope)
      : B_(B), S_(S), Tt_(Tt), source_lengths_(std::move(source_lengths)), device_(device), keys_(layers),
        values_(layers), knockout_(knockout), distance_slope_(distance_slope) {}
  // where the next rows go: 0 (the source), then S + t; turn holds their rotary tables, (S, H/2)
  // for the source and (B, 1, H/2) for a step
  void move_to(int64_t position, Turn turn) {
    position_ = position;
    turn_ = std::move(turn);
  }
  Tensor query_rows(size_t layer, const Tensor& x) const override {
    return position_ == 0 && layer + 1 == keys_.size() ? Tensor() : x;
  }
  Tensor attend(size_t layer, const Tensor& plain_q, const Tensor& plain_k, const Tensor& v,
                Tensor* weights_out) override {
    if (weights_out) throw std::logic_error("translator: cached decoding forms no attention weights to record");
    const Tensor q = turn_.apply(plain_q), k = turn_.apply(plain_k);  // the cache holds turned keys
    if (position_ == 0) {
      keys_[layer] = Tensor::zeros({B_, S_ + Tt_, k.size(-1)}, k.dtype(), device_);
      values_[layer] = Tensor::zeros({B_, S_ + Tt_, v.size(-1)}, v.dtype(), device_);
    }
    keys_[layer].write_at_(1, position_, k);
    values_[layer].write_at_(1, position_, v);
    if (!q.defined()) return Tensor();
    AttentionMask mask = knockout_.applied({S_, source_lengths_, position_}, layer);  // first query at position_
    mask.distance_slope = distance_slope_;
    if (position_ == 0) return attention(q, k, v, mask, attention_scale(q));  // the source sees only the source
    return attention(q, keys_[layer], values_[layer], mask, attention_scale(q));  // (B, 1, H)
  }

 private:
  int64_t B_, S_, Tt_, position_ = 0;
  std::vector<int64_t> source_lengths_;
  Device device_;
  std::vector<Tensor> keys_, values_;  // one (B, S + Tt, H) per layer
  Knockout knockout_;
  Turn turn_;
  double distance_slope_;  // ALiBi's, or 0
};

}  // namespace

// ---- forward, loss and decoding: one layer loop ----

BlockOptions Translator::block_options(bool record_attention) {
  return {record_attention, dropout_, training(), &dropout_gen_};
}

Tensor Translator::embed(const data::Batch& batch) const {
  const int64_t T = batch.source.size(1) + batch.target_input.size(1);
  Tensor tokens = concat({src_embed.forward(batch.source), tgt_embed.forward(batch.target_input)}, 1);
  if (!pos_embed) return tokens;  // rotary positions enter where q meets k
  Tensor positions = T == config_.layout.length() ? pos_embed->weight : slice(pos_embed->weight, 0, 0, T);
  return add(tokens, positions);
}

// The batch's (S, T_tgt) checked against the model: T_tgt at least 1; with a position embedding the
// layout's S and at most its T_tgt (without one, any S at least the longest sentence).
static void check_batch_layout(const data::Batch& batch, const TranslatorConfig& config, bool any_length) {
  const int64_t S = batch.source.size(1), Tt = batch.target_input.size(1);
  const bool fits = any_length ? S >= 1 && Tt >= 1
                               : S == config.layout.max_source && Tt >= 1 && Tt <= config.layout.max_target;
  bool lengths_fit = true;
  for (int64_t n : batch.source_lengths) lengths_fit = lengths_fit && n >= 0 && n <= S;
  if (!fits || !lengths_fit)
    throw std::runtime_error(fmt::format("translator: batch layout ({}, {}) does not fit the model's ({}, {})", S, Tt,
                                         config.layout.max_source, config.layout.max_target));
}

Tensor Translator::run_blocks(Tensor x, AttentionContext& context, const BlockOptions& options,
                              const BlockObserver& observe) const {
  for (const Block& block : blocks_) {
    BlockOutput output = block.forward(x, context, options);
    if (observe) observe(block.index, output);
    x = output.out;
    if (!x.defined()) break;  // a layer without query rows ends the pass
  }
  return x;
}

Tensor Translator::forward(const data::Batch& batch, const ForwardOptions& options) {
  // The target part may be shorter than the layout's (greedy decoding grows it one step at a time).
  check_batch_layout(batch, config_, reads_longer());
  const int64_t S = batch.source.size(1), T = S + batch.target_input.size(1);
  options.knockout.validate(T, layers());
  Tensor embedded = embed(batch);  // (B, T, D)
  last_embeddings_ = embedded.detach();
  Tensor x = dropout(embedded, dropout_, training(), dropout_gen_);
  // The fused op unless the weights are wanted; none takes no attention op at all (self_only)
  // unless the weights are wanted or a knockout hides a position from itself (its identity mask is
  // not a kind of the fused op's, so those run the composed path).
  const bool self_only = !mixes_tokens() && !options.record_attention && !options.knockout.active();
  const bool composed = !self_only && (options.record_attention || !mixes_tokens());
  const bool trim_last = !composed && !options.keep_source_positions && !options.layer_outputs;
  const std::vector<int64_t> positions = sequence_positions(S, T - S, batch.source_lengths);
  AttentionMask mask = AttentionMask::prefix_lm(S, batch.source_lengths);
  mask.distance_slope = distance_slope(config_.positions);
  SequenceContext context(S, T, blocks_.size(), composed ? attention_mask(batch) : Tensor(), mask, trim_last,
                          options.knockout, self_only,
                          make_turn(config_, positions, {batch.size(), T}, embedded.dtype(), device()),
                          composed ? distance_bias(config_, positions, batch.size(), T, embedded.dtype(), device())
                                   : Tensor());
  last_attention_.assign(blocks_.size(), Tensor());
  if (options.layer_outputs) *options.layer_outputs = {embedded.detach()};
  x = run_blocks(x, context, block_options(options.record_attention), [&](size_t layer, const BlockOutput& output) {
    if (options.record_attention) last_attention_[layer] = output.weights;
    if (options.layer_outputs) options.layer_outputs->push_back(output.out.detach());
  });
  Tensor target_part = trim_last ? x : slice(x, 1, S, T);  // (B, T_tgt, D)
  return head->forward(target_part);                        // (B, T_tgt, vocab)
}

Tensor Translator::loss(const data::Batch& batch, const ForwardOptions& options) {
  const int64_t B = batch.size(), S = batch.source.size(1), Tt = batch.target_input.size(1);
  const bool packed = !options.record_attention && !options.keep_source_positions && mixes_tokens();
  if (packed && static_cast<int64_t>(batch.target_lengths.size()) == B &&
      static_cast<int64_t>(batch.source_lengths.size()) == B) {
    int64_t real = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n_src = batch.source_lengths[b], n_tgt = batch.target_lengths[b];
      if (n_src < 0 || n_src > S || n_tgt < 0 || n_tgt > Tt)
        throw std::runtime_error(fmt::format("translator: batch row {} has {} source and {} target positions; the "
                                             "batch holds {} and {}", b, n_src, n_tgt, S, Tt));
      real += n_src + n_tgt;
    }
    if (real < B * (S + Tt)) return packed_loss(batch, options.knockout, options.label_smoothing);  // else every position is real: no rows to skip
  }
  return cross_entropy(forward(batch, options), batch.target_output, data::Vocab::PAD, options.label_smoothing);
}

Tensor Translator::packed_loss(const data::Batch& batch, const Knockout& knockout, double label_smoothing) {
  check_batch_layout(batch, config_, reads_longer());
  const int64_t S = batch.source.size(1), Tt = batch.target_input.size(1);
  knockout.validate(S + Tt, layers());
  const PackedRows rows = pack_rows(batch, S, device(), distance_slope(config_.positions));
  Tensor embedded = embed(batch);  // (B, T, D)
  last_embeddings_ = embedded.detach();
  last_attention_.assign(blocks_.size(), Tensor());
  // the real rows of the embedded sequence   (N, D)
  Tensor x = dropout(embedding(reshape(embedded, {rows.B * rows.T, config_.d_model}), rows.position_ids), dropout_,
                     training(), dropout_gen_);
  const Shape all_rows = {static_cast<int64_t>(rows.row_positions.size())},
              target_rows = {static_cast<int64_t>(rows.target_row_positions.size())};
  AttentionMask mask = AttentionMask::prefix_lm(S, batch.source_lengths);
  mask.distance_slope = distance_slope(config_.positions);
  PackedContext context(rows, S, blocks_.size(), mask, knockout,
                        make_turn(config_, rows.row_positions, all_rows, embedded.dtype(), device()),
                        make_turn(config_, rows.target_row_positions, target_rows, embedded.dtype(), device()));
  x = run_blocks(x, context, block_options(false));  // (N_tgt, D)
  // The head over the target rows, placed back in (B, Tt, vocab) with zeros at the padding, which
  // cross_entropy ignores.
  Tensor logits = unpack_rows(head->forward(x), rows.target_slots, rows.B, Tt);
  return cross_entropy(logits, batch.target_output, data::Vocab::PAD, label_smoothing);
}

void Translator::decode(const Tensor& source, const std::vector<int64_t>& source_lengths, const ChooseNext& choose,
                        const ForwardOptions& options) {
  NoGradGuard no_grad;
  const bool cached = !options.recompute_prefix && !options.record_attention && (!training() || dropout_ == 0.0) && mixes_tokens();
  if (!cached) return decode_recomputing(source, source_lengths, choose, options);
  const int64_t B = source.size(0), S = source.size(1), Tt = decode_length(S);
  if (pos_embed && S != config_.layout.max_source)
    throw std::runtime_error(fmt::format("translator: a source of {} slots does not fit the model's {}", S,
                                         config_.layout.max_source));
  options.knockout.validate(S + Tt, layers());
  const Device device = this->device();
  const DType dtype = src_embed.weight.dtype();
  std::vector<int64_t> inputs(static_cast<size_t>(B), data::Vocab::SEP);  // this step's target input per row
  CachedContext context(B, S, Tt, blocks_.size(), source_lengths, device, options.knockout,
                        distance_slope(config_.positions));
  const BlockOptions block = block_options(false);
  // the rows' position embedding, when the model has one
  auto placed = [&](Tensor tokens, int64_t from, int64_t to) {
    return pos_embed ? add(tokens, slice(pos_embed->weight, 0, from, to)) : tokens;
  };
  std::vector<int64_t> source_positions(static_cast<size_t>(S));
  for (int64_t p = 0; p < S; ++p) source_positions[p] = p;
  context.move_to(0, make_turn(config_, source_positions, {S}, dtype, device));
  run_blocks(placed(src_embed.forward(source), 0, S), context, block);  // (B, S, D)
  for (int64_t t = 0; t < Tt; ++t) {
    const int64_t position = S + t;
    std::vector<int64_t> step_positions;  // each row's target slot t sits right after its sentence
    for (int64_t n_src : source_lengths) step_positions.push_back(n_src + t);
    context.move_to(position, make_turn(config_, step_positions, {B, 1}, dtype, device));
    Tensor x = placed(tgt_embed.forward(Tensor::from_ids(inputs, {B, 1}, device)), position, position + 1);  // (B, 1, D)
    if (choose(head->forward(run_blocks(x, context, block)), t, inputs)) return;  // (B, 1, vocab)
  }
}

void Translator::decode_recomputing(const Tensor& source, const std::vector<int64_t>& source_lengths,
                                    const ChooseNext& choose, const ForwardOptions& options) {
  // The mask is causal, so only the first t + 1 target slots can influence position t.
  const int64_t B = source.size(0), S = source.size(1), Tt = decode_length(S);
  std::vector<int64_t> inputs(static_cast<size_t>(B), data::Vocab::SEP);  // this step's target input per row
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
    batch.target_input = Tensor::from_ids(prefix_ids, {B, t + 1}, device());
    // a knockout of queries past this prefix is cut to it (forward checks against the prefix's length)
    ForwardOptions step = options;
    step.knockout.query_to = std::min(step.knockout.query_to, S + t + 1);
    if (step.knockout.active() && step.knockout.query_from >= step.knockout.query_to) step.knockout = Knockout{};
    if (step.knockout.key >= S + t + 1) step.knockout = Knockout{};  // a key not there yet
    if (choose(slice(forward(batch, step), 1, t, t + 1), t, inputs)) return;
  }
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
  for (const Block& block : blocks_) count += block.attention->parameter_count();
  return count;
}

std::vector<std::vector<std::string>> Translator::translate(
    const std::vector<std::vector<std::string>>& english, const data::Vocab& english_vocab,
    const data::Vocab& hindi_vocab, const ForwardOptions& options) {
  NoGradGuard no_grad;
  const int64_t B = static_cast<int64_t>(english.size());
  std::vector<std::vector<std::string>> out(B);
  if (B == 0) return out;
  int64_t longest = 0;
  for (const auto& sentence : english) {
    if (sentence.empty()) throw std::runtime_error("translate: the sentence is empty");
    longest = std::max(longest, static_cast<int64_t>(sentence.size()));
  }
  if (longest > config_.layout.max_source && !reads_longer())
    throw std::runtime_error(fmt::format("translate: the sentence has {} words; this model reads at most {} (its {} "
                                         "positions cannot read past them)", longest, config_.layout.max_source,
                                         positions_name(config_.positions)));
  const int64_t S = std::max(longest, config_.layout.max_source), Tt = decode_length(S);
  std::vector<int64_t> src(B * S, data::Vocab::PAD), lengths;
  for (int64_t b = 0; b < B; ++b) {
    const auto& sentence = english[b];
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
  }, options);
  return out;
}

std::vector<std::vector<std::vector<double>>> source_word_states(Translator& model,
                                                                 const std::vector<std::vector<std::string>>& english,
                                                                 const std::vector<int64_t>& positions,
                                                                 const data::Vocab& english_vocab) {
  if (english.size() != positions.size())
    throw std::runtime_error(fmt::format("source_word_states: {} sentences but {} positions", english.size(), positions.size()));
  int64_t longest = 0;
  for (const auto& words : english) longest = std::max(longest, static_cast<int64_t>(words.size()));
  const int64_t S = model.layout_fitting(longest, 1).max_source, D = model.config().d_model, chunk = 256;
  std::vector<std::vector<std::vector<double>>> states(model.layers() + 1);
  NoGradGuard no_grad;
  for (size_t first = 0; first < english.size(); first += chunk) {
    const size_t B = std::min(english.size() - first, static_cast<size_t>(chunk));
    std::vector<int64_t> ids(B * S, data::Vocab::PAD);
    data::Batch batch;
    for (size_t b = 0; b < B; ++b) {
      const auto& words = english[first + b];
      const int64_t p = positions[first + b];
      if (static_cast<int64_t>(words.size()) > S || p < 0 || p >= static_cast<int64_t>(words.size()))
        throw std::runtime_error(fmt::format("source_word_states: word position {} of a {}-word sentence (the model "
                                             "reads at most {})", p, words.size(), S));
      for (size_t i = 0; i < words.size(); ++i) ids[b * S + i] = english_vocab.id(words[i]);
      batch.source_lengths.push_back(static_cast<int64_t>(words.size()));
    }
    batch.source = Tensor::from_ids(ids, {static_cast<int64_t>(B), S}, model.device());
    batch.target_input = Tensor::from_ids(std::vector<int64_t>(B, data::Vocab::SEP), {static_cast<int64_t>(B), 1},
                                          model.device());  // source positions never see it
    std::vector<Tensor> outputs;
    model.forward(batch, {.layer_outputs = &outputs});
    for (size_t l = 0; l < outputs.size(); ++l) {
      const std::vector<double> all = outputs[l].to_vector();  // (B, T, D)
      const int64_t T = outputs[l].size(1);
      for (size_t b = 0; b < B; ++b) {
        const auto row = all.begin() + (static_cast<int64_t>(b) * T + positions[first + b]) * D;
        states[l].emplace_back(row, row + D);
      }
    }
  }
  return states;
}

AttentionTrace trace_attention(Translator& model, const std::vector<std::string>& english,
                               const data::Vocab& english_vocab, const data::Vocab& hindi_vocab,
                               int64_t layer, const Knockout& knockout) {
  model.last_attention(layer);  // checks the range before any work
  AttentionTrace trace;
  trace.layer = layer;
  trace.layers = model.layers();
  trace.english = english;
  trace.hindi = model.translate({english}, english_vocab, hindi_vocab, {.knockout = knockout})[0];
  // One teacher-forced pass over the model's own translation exposes the weights used for it.
  const data::Layout layout =
      model.layout_fitting(static_cast<int64_t>(english.size()), static_cast<int64_t>(trace.hindi.size()) + 1);
  data::SentencePair pair{english, trace.hindi, "<sentence>"};
  NoGradGuard no_grad;
  const data::Batch batch = data::make_batch({pair}, {0}, english_vocab, hindi_vocab, layout, model.device());
  model.forward(batch, {.record_attention = true, .knockout = knockout});
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
