// tests/test_config.h — the one helper with which the tests build a small TranslatorConfig: the
// widths, the vocabulary sizes and the layout they choose; everything else keeps its default.
#pragma once

#include <cstdint>

#include "data/dataset.h"
#include "models/translator.h"

namespace qkv::testing {

struct ModelWidths {
  int64_t d_model = 0, d_k = 0, d_ff = 0;  // D, H, F
};

inline models::TranslatorConfig test_config(const ModelWidths& widths, int64_t source_vocab, int64_t target_vocab,
                                            const data::Layout& layout,
                                            models::AttentionMode attention = models::AttentionMode::Learned,
                                            int64_t layers = 1) {
  models::TranslatorConfig c;
  c.attention = attention;
  c.layers = layers;
  c.d_model = widths.d_model;
  c.d_k = widths.d_k;
  c.d_ff = widths.d_ff;
  c.source_vocab = source_vocab;
  c.target_vocab = target_vocab;
  c.layout = layout;
  return c;
}

}  // namespace qkv::testing
