// models/translator_config.h — the translator's settings (one table, QKV_MODEL_SETTINGS, and the
// TranslatorConfig made from it) and attention knockout: what a model is and what one call hides,
// below the translator itself, so that the row layouts (row_layouts.h) need not include it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "data/dataset.h"
#include "framework/ops.h"
#include "models/block.h"

namespace qkv::models {

// The model's settings, one row each: X(type, member, default, absent, low, high, from). From it come
// TranslatorConfig's fields and defaults, their JSON in a checkpoint (the key is the member's name,
// in this order, then the layout's max_source and max_target), the range validate() checks of a
// number (low to high) and the settings run_config copies from qkv train's options of the same name.
// - absent: what a checkpoint without the key holds. kRequired: every checkpoint has it. A value: a
//   setting added after the first checkpoints, written only when it is not that value, so the
//   checkpoints written before it existed stay byte-identical (activation, always written, reads a
//   missing key as gelu, the activation of the first checkpoints).
// - from: Option (qkv train's option of the same name, copied), or Derived (set by run_config itself).
// qkv train's defaults are its own option table's (train/run/train_options.h), which takes most of
// them from here, chosen by measurement on data/idioms (RESULTS.md, "How the defaults were chosen").
#define QKV_MODEL_SETTINGS(X)                                                                                      \
  X(AttentionMode, attention, AttentionMode::Learned, kRequired, 0, 0, Option)                                     \
  X(int64_t, layers, 8, 1, 1, kMaxLayers, Option) /* stacked blocks */                                             \
  X(int64_t, d_model, 64, kRequired, 1, kMaxWidth, Option)                                                         \
  X(int64_t, d_k, 64, kRequired, 1, kMaxWidth, Option)                                                             \
  X(int64_t, d_ff, 128, kRequired, 1, kMaxFeedForward, Option)                                                     \
  X(Activation, activation, Activation::Relu, kWrittenReadAs(Activation::Gelu), 0, 0, Option) /* feed-forward's */ \
  /* where positions enter (block.h) */                                                                            \
  X(Positions, positions, Positions::Absolute, Positions::Absolute, 0, 0, Option)                                  \
  /* trained with its token embeddings frozen at their initial values (--freeze-embeddings): the page labels it */ \
  X(bool, frozen_embeddings, false, false, 0, 1, Derived)                                                          \
  /* trained to write each translation last word first (--right-to-left): the rerank's second forward model */     \
  X(bool, right_to_left, false, false, 0, 1, Option)                                                               \
  /* Randomized rotary positions (Ruoss et al., 2023; --random-positions): 0, off, or L, when half the */          \
  /* training sequences turn their queries and keys by a sorted random sample of positions from [0, L), the */     \
  /* other half by the positions translation gives them: spread position_stride() apart, the mean gap of a */      \
  /* sequence as long as the layout. So no rotary distance a longer sentence needs is new to the model. */         \
  X(int64_t, random_positions, 0, 0, 0, kMaxRandomPositions, Derived)                                              \
  /* rotary positions' base: feature pair i of a head turns by position * base^(-2i / H) (RoFormer's 10000) */     \
  X(double, rotary_base, 10000.0, 10000.0, 2, 1e9, Option)                                                         \
  /* log-length scaling p of a rotary model's attention past its layout (rotary_gain): 0, off */                   \
  X(double, length_scale, 1.5, 1.5, 0, 8, Option)                                                                  \
  X(int64_t, source_vocab, 0, kRequired, 1, data::Vocab::kMaxWords, Derived)                                       \
  X(int64_t, target_vocab, 0, kRequired, 1, data::Vocab::kMaxWords, Derived)

// A setting's `absent` column: required (kRequired), a value written only when the setting differs
// from it, or a value always written (kWrittenReadAs).
struct RequiredSetting {};
inline constexpr RequiredSetting kRequired;
template <class T>
struct Absent {
  bool required = false, always_written = false;
  T value{};
  constexpr Absent(T v) : value(v) {}  // NOLINT: a plain value in the table
  constexpr Absent(RequiredSetting) : required(true) {}
};
template <class T>
constexpr Absent<T> kWrittenReadAs(T value) {
  Absent<T> absent(value);
  absent.always_written = true;
  return absent;
}

struct TranslatorConfig {
  // The largest model qkv trains or loads (the bounds of qkv train's --layers, --d-model, --d-k, --d-ff).
  static constexpr int64_t kMaxLayers = 16, kMaxWidth = 4096, kMaxFeedForward = 16384;
  static constexpr int64_t kMaxRandomPositions = 4096;
#define QKV_MODEL_FIELD(type, member, default_value, absent, low, high, from) type member = default_value;
  QKV_MODEL_SETTINGS(QKV_MODEL_FIELD)
#undef QKV_MODEL_FIELD
  data::Layout layout;
  int64_t position_stride() const {
    return random_positions > 0 ? std::max<int64_t>(1, (random_positions + layout.length() / 2) / layout.length()) : 1;
  }
  std::string to_json() const;
  static TranslatorConfig from_json(const std::string& text);  // throws on missing/invalid fields
  void validate() const;
  // The number of parameters a Translator with this config has, computed without building it
  // (a checkpoint's config is checked against its tensors before any model is allocated).
  int64_t parameter_count() const;
  // The gain on a rotary model's queries and keys for an English sentence of n words: 1 up to the
  // layout's max_source M (every sentence it was trained on), then (ln n / ln M)^(length_scale / 2),
  // so that every attention score of a longer sentence grows by (ln n / ln M)^length_scale: a softmax
  // over more keys stays as sharp as over the M it learned on (log-length scaling, Chiang and
  // Cholak, 2022; RESULTS.md, "Log-length scaling"). Applied to the rotary tables of the sentence's rows.
  double rotary_gain(int64_t n_words) const {
    const int64_t M = layout.max_source;
    if (length_scale == 0 || n_words <= M || M < 2 || !has_rotary(positions)) return 1.0;
    return std::pow(std::log(static_cast<double>(n_words)) / std::log(static_cast<double>(M)), length_scale / 2);
  }
  // The width of each layer's queries and keys: d_k for learned attention, d_model for static and none.
  int64_t head_width() const { return attention == AttentionMode::Learned ? d_k : d_model; }
};

// Attention knockout, the causal test of what attention is used for: in layer `layer` (0-based; -1:
// every layer) the key at sequence position `key` is hidden from the queries at sequence positions
// [query_from, query_to), whose weights renormalise over their other keys (the same as zeroing that
// weight and dividing the row by its new sum). Positions are the call's: English word i sits at i,
// target slot t (<sep> is slot 0) at S + t, S = Translator::source_slots(the longest sentence).
// Fused and composed paths apply it alike.
struct Knockout {
  int64_t key = -1;  // -1: no knockout
  int64_t query_from = 0, query_to = 0, layer = -1;
  bool active() const { return key >= 0; }
  bool applies_to(size_t block) const { return active() && (layer < 0 || layer == static_cast<int64_t>(block)); }
  // The mask with this knockout added when it applies to `block`.
  AttentionMask applied(AttentionMask mask, size_t block) const;
  // Throws naming the values when the key, the query range or the layer is outside the model's.
  void validate(int64_t sequence_length, int64_t layers) const;
};

}  // namespace qkv::models
