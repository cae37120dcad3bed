// models/translator_io.cpp — translator checkpoints on top of framework/checkpoint.
#include "translator_io.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <filesystem>
#include <stdexcept>

#include "framework/bounded_json.h"
#include "framework/checkpoint.h"
#include "framework/safetensors.h"

namespace qkv::models {

static const char* kFormat = "qkv-translator-1";

void save_translator(const std::string& path, const Translator& model, const data::Vocab& english,
                     const data::Vocab& hindi) {
  save_checkpoint(path, model,
                  {{"format", kFormat},
                   {"config", model.config().to_json()},
                   {"english_vocab", nlohmann::json(english.words()).dump()},
                   {"hindi_vocab", nlohmann::json(hindi.words()).dump()}});
}

static data::Vocab vocab_from(const std::map<std::string, std::string>& meta, const char* key,
                              const std::string& path) {
  auto it = meta.find(key);
  if (it == meta.end()) throw std::runtime_error(fmt::format("{}: metadata has no '{}'", path, key));
  nlohmann::json j;
  try {
    // the text is the file's, so are its nesting and length: one flat array of at most the
    // vocabulary size the config allows
    j = parse_bounded_json(it->second, {.max_depth = 1, .max_values = data::Vocab::kMaxWords + 1});
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("{}: metadata '{}' {} (it must be a flat array of words)", path, key, e.what()));
  }
  if (!j.is_array()) throw std::runtime_error(fmt::format("{}: metadata '{}' is not a JSON array", path, key));
  std::vector<std::string> words;
  for (const auto& w : j) {
    if (!w.is_string()) throw std::runtime_error(fmt::format("{}: metadata '{}' holds a non-string", path, key));
    words.push_back(w.get<std::string>());
  }
  try {
    return data::Vocab::from_words(words);
  } catch (const std::exception& e) { throw std::runtime_error(fmt::format("{}: {}: {}", path, key, e.what())); }
}

LoadedTranslator load_translator(const std::string& path, Device device) {
  if (!std::filesystem::exists(path)) throw std::runtime_error(fmt::format("{}: checkpoint not found", path));
  const SafeTensorsFile file = safetensors_read(path);  // read once, bounded by the file's size
  LoadedTranslator loaded = load_translator(file, path, device);
  if (!file.checksum_verified)
    fmt::print(stderr, "note: {}: no checksum (written by another tool or an older qkv); loaded unverified\n", path);
  return loaded;
}

LoadedTranslator load_translator(const SafeTensorsFile& file, const std::string& path, Device device) {
  const auto& meta = file.metadata;
  auto format = meta.find("format");
  if (format == meta.end() || format->second != kFormat)
    throw std::runtime_error(
        fmt::format("{}: not a qkv translator checkpoint (metadata 'format' is not '{}')", path, kFormat));
  for (const auto& [key, value] : meta)  // a checkpoint holds these and nothing else
    if (key != "format" && key != "config" && key != "english_vocab" && key != "hindi_vocab")
      throw std::runtime_error(fmt::format(
          "{}: metadata has an unknown key '{}' (a qkv checkpoint holds format, config, english_vocab and hindi_vocab)",
          path, key.size() <= 40 ? key : key.substr(0, 37) + "..."));
  auto config_it = meta.find("config");
  if (config_it == meta.end()) throw std::runtime_error(fmt::format("{}: metadata has no 'config'", path));
  TranslatorConfig config;
  try {
    config = TranslatorConfig::from_json(config_it->second);
  } catch (const std::exception& e) { throw std::runtime_error(fmt::format("{}: {}", path, e.what())); }
  LoadedTranslator out{nullptr, vocab_from(meta, "english_vocab", path), vocab_from(meta, "hindi_vocab", path)};
  if (out.english.size() != config.source_vocab || out.hindi.size() != config.target_vocab)
    throw std::runtime_error(fmt::format("{}: vocabularies ({}, {}) do not match the config ({}, {})", path,
                                         out.english.size(), out.hindi.size(), config.source_vocab,
                                         config.target_vocab));
  // The config must describe exactly the tensors in the file before a model is allocated from it
  // (a config can claim any size; the file's tensors are already bounded by its length).
  int64_t stored = 0;
  for (const auto& [name, t] : file.tensors) stored += shape_numel(t.shape);
  if (config.parameter_count() != stored)
    throw std::runtime_error(
        fmt::format("{}: the config describes a model of {} parameters but the file holds {} values", path,
                    config.parameter_count(), stored));
  Generator gen(0);  // the weights are overwritten by the checkpoint
  out.model = std::make_unique<Translator>(config, gen);
  // A checkpoint of float64 tensors (qkv train --dtype float64) is translated and evaluated in
  // float64, as it was trained; any other in float32.
  bool all_float64 = !file.tensors.empty();
  for (const auto& [name, t] : file.tensors) all_float64 = all_float64 && t.dtype == "F64";
  if (all_float64) out.model->to(DType::F64);
  load_checkpoint(file, path, *out.model);
  if (device != Device::cpu()) out.model->to(device);
  out.model->train(false);
  return out;
}

}  // namespace qkv::models
