// train/experiments/explorer/explore_data.h — the explorer page's data as text that sits inside its
// <script type="application/json"> block (train/cli/explore.cpp writes the page).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace qkv::app {

// JSON text with <, > and & as \u003c, \u003e and \u0026, so that no "</script", "<!--" or
// "<script" can form, and U+2028 and U+2029 as \u2028 and \u2029. JSON has these characters only
// inside strings, where the escapes mean the same characters.
std::string script_safe(const std::string& json);

// data.dump() through script_safe. A string in it that is not valid UTF-8 (a checkpoint's path,
// a vocabulary word) throws std::runtime_error naming the byte.
std::string script_json(const nlohmann::ordered_json& data);

}  // namespace qkv::app
