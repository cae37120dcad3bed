// models/translator_config.cpp — the translator's config: its JSON form (stored in checkpoints, read
// back with every field checked), its validation and its parameter counts (the config's, and a
// built translator's attention parameters).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>
#include <type_traits>

#include "framework/bounded_json.h"
#include "models/translator.h"

namespace qkv::models {

// A setting's value in a checkpoint's JSON: an enum by its name, numbers and true/false as they are.
static std::string name_of(AttentionMode v) { return attention_mode_name(v); }
static std::string name_of(Activation v) { return activation_name(v); }
static std::string name_of(Positions v) { return positions_name(v); }
static void parse_name(const std::string& text, AttentionMode& v) { v = parse_attention_mode(text); }
static void parse_name(const std::string& text, Activation& v) { v = parse_activation(text); }
static void parse_name(const std::string& text, Positions& v) { v = parse_positions(text); }

template <class T>
static void write_setting(nlohmann::ordered_json& j, const char* key, const Absent<T>& absent, const T& value) {
  if (!absent.required && !absent.always_written && value == absent.value) return;  // absent means it
  if constexpr (std::is_enum_v<T>)
    j[key] = name_of(value);
  else
    j[key] = value;
}

template <class T>
static void read_setting(const nlohmann::json& j, const char* key, const Absent<T>& absent, T& value) {
  const bool has = j.contains(key);
  if (!has && !absent.required) {
    value = absent.value;  // a checkpoint from before the setting existed
    return;
  }
  // a number or true/false: `fits` is its JSON type, `wanted` how the message says what was wanted
  const auto take = [&](auto fits, const char* wanted) {
    if (!has || !(j[key].*fits)()) throw std::runtime_error(fmt::format("model config: '{}' is {}", key, wanted));
    value = j[key].template get<T>();
  };
  if constexpr (std::is_same_v<T, int64_t>) {
    take(&nlohmann::json::is_number_integer, "missing or not an integer");
  } else if constexpr (std::is_same_v<T, double>) {
    take(&nlohmann::json::is_number, "missing or not a number");
  } else if constexpr (std::is_same_v<T, bool>) {
    take(&nlohmann::json::is_boolean, "not true or false");
  } else {
    if (!has || !j[key].is_string())
      throw std::runtime_error(
          fmt::format("model config: '{}' is {}not a string", key, absent.required ? "missing or " : ""));
    try {
      parse_name(j[key].get<std::string>(), value);
    } catch (const std::runtime_error& e) { throw std::runtime_error(std::string("model config: ") + e.what()); }
  }
}

std::string TranslatorConfig::to_json() const {
  nlohmann::ordered_json j;
#define QKV_WRITE_SETTING(type, member, default_value, absent, low, high, from) \
  write_setting<type>(j, #member, absent, member);
  QKV_MODEL_SETTINGS(QKV_WRITE_SETTING)
#undef QKV_WRITE_SETTING
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
  TranslatorConfig c;
#define QKV_READ_SETTING(type, member, default_value, absent, low, high, from) \
  read_setting<type>(j, #member, absent, c.member);
  QKV_MODEL_SETTINGS(QKV_READ_SETTING)
#undef QKV_READ_SETTING
  read_setting<int64_t>(j, "max_source", kRequired, c.layout.max_source);
  read_setting<int64_t>(j, "max_target", kRequired, c.layout.max_target);
  c.validate();
  return c;
}

void TranslatorConfig::validate() const {
  auto within = [](const char* name, const auto& v, double low, double high) {  // numbers only
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
      if (!(v >= low && v <= high))  // NaN too
        throw std::runtime_error(fmt::format("model config: {} must be in [{}, {}], got {}", name, static_cast<T>(low),
                                             static_cast<T>(high), v));
  };
#define QKV_CHECK_SETTING(type, member, default_value, absent, low, high, from) within(#member, member, low, high);
  QKV_MODEL_SETTINGS(QKV_CHECK_SETTING)
#undef QKV_CHECK_SETTING
  // the bounds of qkv train's --max-source and --max-target: a file may not ask for a layout qkv would never write
  within("max_source", layout.max_source, 1, data::kMaxSentenceWords);
  within("max_target", layout.max_target, 1, data::kMaxSentenceWords + 1);
  const TranslatorConfig defaults;  // random_positions as a double: exact and printed alike in its range
  for (const auto& [name, value, standard, verb] :
       {std::tuple{"random_positions", static_cast<double>(random_positions),
                   static_cast<double>(defaults.random_positions), "samples"},
        {"rotary_base", rotary_base, defaults.rotary_base, "turns"},
        {"length_scale", length_scale, defaults.length_scale, "scales"}})
    if (value != standard && !has_rotary(positions))
      throw std::runtime_error(
          fmt::format("model config: {} {} {} rotary positions, and {} positions have no rotary part (--positions "
                      "rotary or absolute+rotary)",
                      name, value, verb, positions_name(positions)));
  if (random_positions != 0 && random_positions < layout.length())
    throw std::runtime_error(
        fmt::format("model config: random_positions must be 0 or from the layout's {} positions to {}, got {}",
                    layout.length(), kMaxRandomPositions, random_positions));
  if (has_rotary(positions) && head_width() % 2 != 0)
    throw std::runtime_error(fmt::format(
        "model config: {} positions turn pairs of query and key features, so the head width must be even, got {} ({})",
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
