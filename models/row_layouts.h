// models/row_layouts.h — the three row layouts of a pass over the translator's blocks, each an
// AttentionContext: the whole (B, T, D) sequence (forward), the real positions packed as rows (the
// loss) and a key/value cache (decoding); with the rotary turn and the ALiBi bias they share. Only
// models/translator.cpp includes it: the translator hands one of them to its loop over the blocks.
// It reads the model's config, never the translator (its arrows point down: block.h, translator_config.h).
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "framework/ops.h"
#include "data/dataset.h"
#include "models/block.h"
#include "models/translator_config.h"

namespace qkv::models::row_layouts {

// The composed path's (B, T, T) keep mask with the knockout's cells zeroed.
inline Tensor knocked_keep(const Tensor& keep, const Knockout& knockout) {
  const int64_t B = keep.size(0), T = keep.size(1);
  std::vector<double> cells = keep.to_vector();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = knockout.query_from; i < std::min(knockout.query_to, T); ++i)
      cells[(b * T + i) * T + knockout.key] = 0.0;
  return Tensor::from_vector(cells, keep.shape(), keep.dtype(), keep.device());
}

// Rotary positions where q meets k: the tables of a set of rows, or none (absolute positions
// alone), when apply hands x back unchanged. Every context turns its queries and keys by their
// positions before the attention op, so the fused, ragged, cached and composed paths and every
// knockout see the same turned vectors, and the cache holds turned keys. Packed projections go to
// the packed ops with the tables, which turn their q and k blocks as they read them.
struct Turn {
  RotaryTables tables;
  Tensor apply(Tensor x) const {  // x turned in place where it is moved in (ops.h)
    return tables.cos.defined() && x.defined() ? rotary(std::move(x), tables.cos, tables.sin) : x;
  }
  Turn rows(int64_t axis, int64_t begin, int64_t end) const {  // the tables of a slice of the rows
    if (!tables.cos.defined()) return {};
    return {{slice(tables.cos, axis, begin, end), slice(tables.sin, axis, begin, end)}};
  }
};

// Each row's rotary gain (TranslatorConfig::rotary_gain of its sentence), sentence b holding the rows
// starts[b] to starts[b + 1]; empty when every gain is 1 (every sentence within the layout).
inline std::vector<double> row_gains(const TranslatorConfig& config, const std::vector<int64_t>& source_lengths,
                                     const std::vector<int64_t>& starts) {
  std::vector<double> gains;
  bool any = false;
  for (size_t b = 0; b < source_lengths.size(); ++b) {
    const double gain = config.rotary_gain(source_lengths[b]);
    any = any || gain != 1.0;
    gains.insert(gains.end(), static_cast<size_t>(starts.at(b + 1) - starts.at(b)), gain);
  }
  return any ? gains : std::vector<double>{};
}
inline std::vector<int64_t> even_starts(int64_t B, int64_t rows_each) {  // B sentences of rows_each rows
  std::vector<int64_t> starts;
  for (int64_t b = 0; b <= B; ++b) starts.push_back(b * rows_each);
  return starts;
}

// `positions` are the sequence's own (word i at i), spread position_stride() apart here, or with
// `sampled` a training sequence's random sample (TranslatorConfig::random_positions), taken as they are.
// `gains` (row_gains, one per row, or none) scale each row's tables: its query and key by that gain.
inline Turn make_turn(const TranslatorConfig& config, std::vector<int64_t> positions, const Shape& rows, DType dtype,
                      Device device, bool sampled = false, const std::vector<double>& gains = {}) {
  if (!has_rotary(config.positions)) return {};
  const int64_t stride = sampled ? 1 : config.position_stride();
  for (int64_t& p : positions) p *= stride;
  RotaryTables tables = rotary_tables(positions, rows, config.head_width() / 2, dtype, device, config.rotary_base);
  if (gains.empty()) return {tables};
  Shape gain_shape = rows;
  gain_shape.push_back(1);
  const Tensor gain = Tensor::from_vector(gains, gain_shape, dtype, device);  // (rows.., 1)
  return {{mul(tables.cos, gain), mul(tables.sin, gain)}};
}

// The (B, T, T) ALiBi bias of the composed path, -slope * |pos(i) - pos(j)| for the sequence's
// positions (B * T of them), or undefined without ALiBi: the fused op adds the same inside its tiles.
inline Tensor distance_bias(const TranslatorConfig& config, const std::vector<int64_t>& positions, int64_t B, int64_t T,
                            DType dtype, Device device) {
  const double slope = distance_slope(config.positions);
  if (slope == 0) return Tensor();
  std::vector<double> cells(static_cast<size_t>(B * T * T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j)
        cells[(b * T + i) * T + j] =
            -slope * static_cast<double>(std::llabs(positions[b * T + i] - positions[b * T + j]));
  return Tensor::from_vector(cells, {B, T, T}, dtype, device);
}

// The rotary position of each slot of a (B, S + Tt) sequence: English word i at i and target slot t
// right after its own sentence, at n_src + t, so that the distance between two tokens is their
// distance in [english ; <sep> hindi] whatever the padding (a padding slot keeps its index; no real
// query sees it).
inline std::vector<int64_t> sequence_positions(int64_t S, int64_t Tt, const std::vector<int64_t>& source_lengths) {
  std::vector<int64_t> positions;
  for (int64_t n_src : source_lengths)
    for (int64_t p = 0; p < S + Tt; ++p) positions.push_back(p < S ? p : n_src + (p - S));
  return positions;
}

// ---- none: each query sees only itself ----

// values (B, Tq, H) of the positions first .. first + Tq - 1 as their own attended values, with the
// position a knockout hides from itself set to zero (the composed path's answer: a query that sees
// no key attends to nothing).
inline Tensor own_values(const Tensor& values, int64_t first, const Knockout& knockout, size_t layer) {
  const int64_t Tq = values.size(1), p = knockout.key;
  const bool hidden =
      knockout.applies_to(layer) && p >= first && p < first + Tq && p >= knockout.query_from && p < knockout.query_to;
  if (!hidden) return values;
  std::vector<double> keep(static_cast<size_t>(Tq), 1.0);
  keep[static_cast<size_t>(p - first)] = 0.0;
  return masked_fill(values, Tensor::from_vector(keep, {1, Tq, 1}, values.dtype(), values.device()), 0.0);
}

// The identity weights (B, Tq, T) of the queries at first .. first + Tq - 1, zero on a row the
// knockout hides from itself.
inline Tensor identity_weights(int64_t B, int64_t Tq, int64_t T, int64_t first, const Knockout& knockout, size_t layer,
                               DType dtype, Device device) {
  std::vector<double> cells(static_cast<size_t>(B * Tq * T), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Tq; ++i) cells[(b * Tq + i) * T + first + i] = 1.0;
  const Tensor identity = Tensor::from_vector(cells, {B, Tq, T}, dtype, device);
  return own_values(identity, first, knockout, layer);
}

// forward's: the whole (B, T, D) sequence through the fused op, or through the composed path with
// the (B, T, T) keep mask (to record the weights). Unless the last layer's source rows are wanted,
// its queries are the target positions alone, placed at S by the mask.
class SequenceContext final : public AttentionContext {
 public:
  SequenceContext(int64_t S, int64_t T, size_t layers, Tensor keep, AttentionMask mask, bool trim_last,
                  const Knockout& knockout, Turn turn, Tensor bias)
      : S_(S), T_(T), layers_(layers), keep_(std::move(keep)), mask_(std::move(mask)), trim_last_(trim_last),
        knockout_(knockout), turn_(std::move(turn)), target_turn_(turn_.rows(1, S, T)), bias_(std::move(bias)) {
    if (keep_.defined() && knockout_.active()) keep_knocked_ = knocked_keep(keep_, knockout_);
  }
  bool target_only(size_t layer) const { return trim_last_ && layer + 1 == layers_; }
  AttentionMask layer_mask(size_t layer) const {  // the knockout's, the target queries placed at S
    AttentionMask mask = knockout_.applied(mask_, layer);
    if (target_only(layer)) mask.query_offset = S_;
    return mask;
  }
  Tensor query_rows(size_t layer, const Tensor& x) const override {
    return target_only(layer) ? slice(x, 1, S_, T_) : x;  // (B, Tq, D), Tq = T_tgt or T
  }
  Tensor attend(size_t layer, const Tensor& plain_queries, const Tensor& plain_keys, const Tensor& values,
                Tensor* weights_out) override {
    const Tensor queries = (target_only(layer) ? target_turn_ : turn_).apply(plain_queries);
    const Tensor keys = turn_.apply(plain_keys);
    if (keep_.defined())
      return models::attend(queries, keys, values, knockout_.applies_to(layer) ? keep_knocked_ : keep_, weights_out,
                            bias_);
    if (weights_out) throw std::logic_error("translator: the fused attention op forms no weights to record");
    return attention(queries, keys, values, layer_mask(layer), attention_scale(queries));
  }
  // Packed projections go to the fused op (with the rotary tables, if any).
  bool takes_packed(size_t) const override { return !keep_.defined(); }
  Tensor attend_qkv(size_t layer, Tensor qkv, int64_t width) override {
    if (target_only(layer)) throw std::logic_error("translator: the last layer's queries are not its key rows");
    return attention_qkv(std::move(qkv), width, knockout_.applied(mask_, layer), attention_scale(width), turn_.tables);
  }
  Tensor attend_kv(size_t layer, Tensor plain_queries, Tensor kv) override {
    const Tensor queries = (target_only(layer) ? target_turn_ : turn_).apply(std::move(plain_queries));
    return attention_kv(queries, std::move(kv), layer_mask(layer), attention_scale(queries), turn_.tables);
  }
  Tensor attend_self(size_t layer, const Tensor& values, Tensor* weights_out) override {
    const int64_t first = target_only(layer) ? S_ : 0;
    if (weights_out)
      *weights_out = identity_weights(values.size(0), values.size(1), T_, first, knockout_, layer, values.dtype(),
                                      values.device());
    return own_values(values, first, knockout_, layer);
  }

 private:
  int64_t S_, T_;
  size_t layers_;
  Tensor keep_;          // (B, T, T) 0/1 on the composed path, else undefined
  Tensor keep_knocked_;  // keep_ with the knockout's cells zeroed, when both are set
  AttentionMask mask_;
  bool trim_last_;
  Knockout knockout_;
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

inline PackedRows pack_rows(const data::Batch& batch, int64_t S, Device device, double distance_slope) {
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
  auto ids = [&](const std::vector<int64_t>& v) {
    return Tensor::from_ids(v, {static_cast<int64_t>(v.size())}, device);
  };
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

// Randomized positions (TranslatorConfig's random_positions says what and why): each entry's rows
// (n_src source rows, then n_tgt target rows, as pack_rows lays them) take, at even odds, the positions
// translation gives them (0, stride, ..., when they fit in the range) or a sorted sample of distinct
// positions from [0, range), by Floyd's algorithm from `gen` (or, when the batch has keys,
// data::Batch::row_keys, a generator seeded by the row's key); the target rows' copy follows.
inline void sample_positions(PackedRows& rows, const data::Batch& batch, int64_t range, int64_t stride,
                             Generator& gen) {
  size_t at = 0, at_target = 0;
  if (!batch.row_keys.empty() && static_cast<int64_t>(batch.row_keys.size()) != rows.B)
    throw std::runtime_error(fmt::format("sample_positions: {} row keys for {} rows", batch.row_keys.size(), rows.B));
  std::vector<uint8_t> taken(static_cast<size_t>(range));
  Generator keyed;
  for (int64_t b = 0; b < rows.B; ++b) {
    const int64_t n_src = batch.source_lengths[b], count = n_src + batch.target_lengths[b];
    if (!batch.row_keys.empty()) keyed.seed(batch.row_keys[static_cast<size_t>(b)]);
    Generator& draw = batch.row_keys.empty() ? gen : keyed;
    if (count * stride <= range && draw.below(2) == 0) {
      for (int64_t k = 0; k < count; ++k) {
        rows.row_positions[at++] = k * stride;
        if (k >= n_src) rows.target_row_positions[at_target++] = k * stride;
      }
      continue;
    }
    std::fill(taken.begin(), taken.end(), 0);
    for (int64_t j = range - count; j < range; ++j) {
      const int64_t t = static_cast<int64_t>(draw.below(static_cast<uint64_t>(j + 1)));
      taken[taken[t] ? j : t] = 1;
    }
    int64_t k = 0;
    for (int64_t p = 0; p < range; ++p) {
      if (!taken[p]) continue;
      rows.row_positions[at++] = p;
      if (k++ >= n_src) rows.target_row_positions[at_target++] = p;
    }
  }
}

// Rows (N, width) -> (B, length, width) with row r of the result taken from rows[slot[r]], and
// zeros where slot[r] is N (the appended zero row). Its gradient gathers the rows back.
inline Tensor unpack_rows(const Tensor& rows, const Tensor& slot, int64_t B, int64_t length) {
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
  // Packed projections go to the fused op (with the rotary tables, if any) where no knockout needs
  // the padded layout.
  bool takes_packed(size_t layer) const override { return !knockout_.applies_to(layer); }
  Tensor attend_qkv(size_t layer, Tensor qkv, int64_t width) override {
    if (last(layer)) throw std::logic_error("translator: the last layer's queries are not its key rows");
    return attention_ragged_qkv(std::move(qkv), width, rows_.all_queries, attention_scale(width), turn_.tables);
  }
  Tensor attend_kv(size_t layer, Tensor plain_q, Tensor kv) override {
    const RaggedLayout& layout = last(layer) ? rows_.target_queries : rows_.all_queries;
    const Tensor q = (last(layer) ? target_turn_ : turn_).apply(std::move(plain_q));
    return attention_ragged_kv(q, std::move(kv), layout, attention_scale(q), turn_.tables);  // (N_q, H)
  }
  Tensor attend_self(size_t layer, const Tensor& values, Tensor* weights_out) override {
    if (weights_out) throw std::logic_error("translator: the packed loss forms no attention weights to record");
    if (!knockout_.applies_to(layer)) return values;  // (N_q, H): each row its own value
    // A knockout names padded positions: the rows are placed at them, and placed back.
    const bool last = this->last(layer);
    return packed(own_values(padded(values, last), last ? S_ : 0, knockout_, layer), last);
  }

 private:
  bool last(size_t layer) const { return layer + 1 == layers_; }
  // Rows (N_q, width) placed at their padded positions (B, Tq, width), and back: the last layer's
  // queries are the target rows alone.
  Tensor padded(const Tensor& rows, bool last) const {
    return unpack_rows(rows, last ? rows_.target_slots : rows_.row_slots, rows_.B, last ? rows_.Tt : rows_.T);
  }
  Tensor packed(const Tensor& x, bool last) const {
    return embedding(reshape(x, {x.size(0) * x.size(1), x.size(2)}),
                     last ? rows_.target_position_ids : rows_.position_ids);
  }
  // A knockout names padded positions: its layers attend over (B, T, H) tensors rebuilt from the rows.
  Tensor attend_padded(size_t layer, const Tensor& q, const Tensor& k, const Tensor& v) const {
    const bool last = this->last(layer);
    AttentionMask layer_mask = knockout_.applied(mask_, layer);
    if (last) layer_mask.query_offset = S_;
    return packed(attention(padded(q, last), padded(k, false), padded(v, false), layer_mask, attention_scale(q)), last);
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
  // or (B, S, H/2) for the source and (B, 1, H/2) for a step
  void move_to(int64_t position, Turn turn) {
    position_ = position;
    turn_ = std::move(turn);
  }
  Tensor query_rows(size_t layer, const Tensor& x) const override {
    return position_ == 0 && layer + 1 == keys_.size() ? Tensor() : x;
  }
  // row r goes on from row from[r]'s cached keys and values (Translator::ChooseNext)
  void reorder(const std::vector<int64_t>& from) {
    const Tensor rows = Tensor::from_ids(from, {B_}, device_);
    for (std::vector<Tensor>* cache : {&keys_, &values_})
      for (Tensor& layer : *cache) layer = reshape(embedding(reshape(layer, {B_, -1}), rows), layer.shape());
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
    if (position_ == 0) return attention(q, k, v, mask, attention_scale(q));      // the source sees only the source
    return attention(q, keys_[layer], values_[layer], mask, attention_scale(q));  // (B, 1, H)
  }
  Tensor attend_self(size_t layer, const Tensor& values, Tensor* weights_out) override {
    if (weights_out) throw std::logic_error("translator: cached decoding forms no attention weights to record");
    return own_values(values, position_, knockout_, layer);  // no keys or values to keep: none reads no other row
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

}  // namespace qkv::models::row_layouts
