// models/translator_io.h — self-contained translator checkpoints: the weights plus, in the
// safetensors __metadata__, the config and both vocabularies (as JSON strings).
#pragma once

#include <memory>
#include <string>

#include "data/dataset.h"
#include "framework/safetensors.h"
#include "translator.h"

namespace qkv::models {

struct LoadedTranslator {
  std::unique_ptr<Translator> model;
  data::Vocab english, hindi;
};

void save_translator(const std::string& path, const Translator& model, const data::Vocab& english,
                     const data::Vocab& hindi);
// Rebuilds the model from the metadata and loads the weights; every problem throws a message
// starting with the path.
LoadedTranslator load_translator(const std::string& path, Device device = Device::cpu());
// The same from a file already parsed (path names it in messages); the fuzz harness uses it.
LoadedTranslator load_translator(const SafeTensorsFile& file, const std::string& path, Device device = Device::cpu());

}  // namespace qkv::models
