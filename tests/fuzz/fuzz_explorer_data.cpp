// tests/fuzz/fuzz_explorer_data.cpp — libFuzzer harness for the explorer page's data embedding
// (train/experiments/explorer/explore_data.cpp): the first byte chooses where the rest goes (a starting sentence, a
// vocabulary word or a checkpoint's path), the data is made as qkv explore makes it, and the text
// that goes inside the page's <script> block must hold no "</script", "<!--", raw '<', U+2028 or
// U+2029 and parse back to the same data. Invalid UTF-8 must be refused with a std::exception (as
// the command does); a violated property aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "data/dataset.h"
#include "framework/text_util.h"
#include "train/experiments/explorer/explore_data.h"

namespace {

void require(bool ok, const char* what, const std::string& text) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_explorer_data: %s in %zu bytes: %.200s\n", what, text.size(), text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int slot = data[0] % 3;  // 0: sentence, 1: vocabulary word, 2: checkpoint path
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  nlohmann::ordered_json page;
  std::string embedded;
  try {
    if (slot == 0) {  // qkv explore --sentence: sentence_words' checks (train/cli/commands.cpp)
      if (!qkv::valid_utf8(text)) throw std::runtime_error("the sentence is not valid UTF-8");
      if (qkv::data::normalize_english(qkv::data::tokenize(text)).empty())
        throw std::runtime_error("the sentence is empty");
    }
    nlohmann::ordered_json model;
    model["checkpoint"] = slot == 2 ? text : std::string("runs/learned/model.safetensors");
    model["english"] = {"<pad>", "<unk>", "<sep>", "<eos>", "bank"};
    if (slot == 1) model["english"].push_back(text);
    model["hindi"] = {"<pad>", "<unk>", "<sep>", "<eos>", "किनारा"};
    page["models"] = nlohmann::ordered_json::array({model});
    page["sentences"] = {"money bank grows", slot == 0 ? text : std::string("river bank flows")};
    page["version"] = "qkv fuzz";
    embedded = qkv::app::script_json(page);
  } catch (const std::exception&) {
    // invalid UTF-8 and empty sentences are refused
    require(slot != 0 || !qkv::valid_utf8(text) || qkv::data::normalize_english(qkv::data::tokenize(text)).empty(),
            "a valid sentence was refused", text);
    require(slot == 0 || !qkv::valid_utf8(text), "valid UTF-8 was refused", text);
    return 0;
  }
  require(qkv::valid_utf8(text), "invalid UTF-8 was embedded", text);
  require(embedded.find('<') == std::string::npos, "a raw '<'", embedded);
  require(embedded.find("</script") == std::string::npos && embedded.find("<!--") == std::string::npos,
          "\"</script\" or \"<!--\"", embedded);
  require(embedded.find("\xE2\x80\xA8") == std::string::npos && embedded.find("\xE2\x80\xA9") == std::string::npos,
          "a raw U+2028 or U+2029", embedded);
  nlohmann::ordered_json back;
  try {
    back = nlohmann::ordered_json::parse(embedded);
  } catch (const std::exception&) { require(false, "the embedded text does not parse", embedded); }
  require(back == page, "the embedded text parses to other data", embedded);
  const std::string& again = slot == 0   ? back["sentences"][1].get_ref<const std::string&>()
                             : slot == 1 ? back["models"][0]["english"][5].get_ref<const std::string&>()
                                         : back["models"][0]["checkpoint"].get_ref<const std::string&>();
  require(again == text, "the string came back changed", embedded);
  return 0;
}
