// tests/fuzz/fuzz_checkpoint.cpp — libFuzzer harness for the checkpoint reader: the whole load path,
// from bytes through safetensors parsing, the config, the vocabularies and the parameter-count
// check, up to a built translator with its weights loaded. Any input must end in a value or a
// std::exception; a crash, a leak of an exception of another type, or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <vector>

#include "framework/safetensors.h"
#include "models/translator_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  try {
    const qkv::SafeTensorsFile file = qkv::safetensors_parse(bytes, "fuzz.safetensors");
    qkv::models::LoadedTranslator loaded = qkv::models::load_translator(file, "fuzz.safetensors");
    // a model that loads must also run: translate one word of its vocabulary
    if (loaded.english.size() > 4) loaded.model->translate({{loaded.english.word(4)}}, loaded.english, loaded.hindi);
  } catch (const std::exception&) {
    // a clear error is the expected outcome for almost every input
  }
  return 0;
}
