// models/translator_config.cpp — the translator's config: its JSON form (stored in checkpoints, read
// back with every field checked), its validation and its parameter counts (the config's, and a
// built translator's attention parameters).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "framework/bounded_json.h"
#include "models/translator.h"

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
  if (frozen_embeddings) j["frozen_embeddings"] = true;                              // absent means trained
  if (random_positions > 0) j["random_positions"] = random_positions;                // absent means 0
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
  } catch (const std::exception& e) { throw std::runtime_error(std::string("model config ") + e.what()); }
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
    } catch (const std::runtime_error& e) { throw std::runtime_error(std::string("model config: ") + e.what()); }
  };
  c.activation = later_choice("activation", "gelu", parse_activation);
  c.positions = later_choice("positions", "absolute", parse_positions);
  if (j.contains("frozen_embeddings")) {
    if (!j["frozen_embeddings"].is_boolean())
      throw std::runtime_error("model config: 'frozen_embeddings' is not true or false");
    c.frozen_embeddings = j["frozen_embeddings"].get<bool>();
  }
  c.random_positions = j.contains("random_positions") ? integer("random_positions") : 0;
  c.source_vocab = integer("source_vocab");
  c.target_vocab = integer("target_vocab");
  c.layout.max_source = integer("max_source");
  c.layout.max_target = integer("max_target");
  c.validate();
  return c;
}

void TranslatorConfig::validate() const {
  auto positive = [](const char* name, int64_t v, int64_t most) {
    if (v <= 0 || v > most)
      throw std::runtime_error(fmt::format("model config: {} must be in [1, {}], got {}", name, most, v));
  };
  positive("layers", layers, kMaxLayers);
  positive("d_model", d_model, kMaxWidth);
  positive("d_k", d_k, kMaxWidth);
  positive("d_ff", d_ff, kMaxFeedForward);
  positive("source_vocab", source_vocab, data::Vocab::kMaxWords);
  positive("target_vocab", target_vocab, data::Vocab::kMaxWords);
  // the bounds of qkv train's --max-source and --max-target: a file may not ask for a layout qkv would never write
  positive("max_source", layout.max_source, data::kMaxSentenceWords);
  positive("max_target", layout.max_target, data::kMaxSentenceWords + 1);
  if (random_positions != 0 && !has_rotary(positions))
    throw std::runtime_error(
        fmt::format("model config: random_positions {} samples rotary positions, and {} positions "
                    "have no rotary part (--positions rotary or absolute+rotary)",
                    random_positions, positions_name(positions)));
  if (random_positions != 0 && (random_positions < layout.length() || random_positions > kMaxRandomPositions))
    throw std::runtime_error(
        fmt::format("model config: random_positions must be 0 or from the layout's {} positions "
                    "to {}, got {}",
                    layout.length(), kMaxRandomPositions, random_positions));
  if (has_rotary(positions) && head_width() % 2 != 0)
    throw std::runtime_error(fmt::format(
        "model config: {} positions turn pairs of query and key features, so the head "
        "width must be even, got {} ({})",
        positions_name(positions), head_width(), attention == AttentionMode::Learned ? "--d-k" : "--d-model"));
}

int64_t TranslatorConfig::parameter_count() const {
  const int64_t D = d_model, H = d_k, F = d_ff;
  int64_t count = (source_vocab + target_vocab) * D;                                            // token embeddings
  if (has_position_embedding(positions)) count += layout.length() * D;                          // position embedding
  const int64_t attention = this->attention == AttentionMode::Learned ? 3 * D * H + H * D : 0;  // W_q, W_k, W_v, W_o
  const int64_t block = attention + 2 * D + (D * F + F) + (F * D + D);                          // + LayerNorm, fc1, fc2
  count += layers * block;
  return count + D * target_vocab + target_vocab;  // the head
}

int64_t Translator::attention_parameter_count() const {
  int64_t count = 0;
  for (const Block& block : blocks_) count += block.attention->parameter_count();
  return count;
}

}  // namespace qkv::models
