// train/experiments/explorer/explore_data.cpp — the explorer page's data as text that is safe inside a <script> block
// (see explore_data.h).
#include "train/experiments/explorer/explore_data.h"

#include <stdexcept>

namespace qkv::app {

std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
             (json[i + 2] == '\xA8' || json[i + 2] == '\xA9'))
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029", i += 2;
    else
      out += c;
  }
  return out;
}

std::string script_json(const nlohmann::ordered_json& data) {
  std::string text;
  try {
    text = data.dump();
  } catch (const nlohmann::json::type_error& e) {  // 316: a string that is not UTF-8
    throw std::runtime_error(std::string("explore: a checkpoint path or vocabulary word is not valid UTF-8 (") +
                             e.what() + ")");
  }
  return script_safe(text);
}

}  // namespace qkv::app
