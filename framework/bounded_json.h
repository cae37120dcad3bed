// framework/bounded_json.h — reading JSON that came from a file in one linear pass, with its
// nesting depth and its number of values bounded and duplicate keys refused. Writing JSON is
// nlohmann's own dump(); this file only reads.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

namespace qkv {

struct JsonLimits {
  int max_depth = 64;             // the outermost container is depth 1
  size_t max_values = 1'000'000;  // every value counts: scalars, arrays and objects alike
};

// Parses `text` (the whole of it must be one JSON value). Throws std::runtime_error with a
// message in words and no prefix ("nests deeper than 8 levels", "holds more than 256 values",
// "duplicate key 'w' inside entry 'x'", "is not valid JSON: ..."); callers put the file and the
// field in front. Time and memory grow linearly with the text, whatever its content: the parse
// stops at the first value past a bound.
nlohmann::json parse_bounded_json(std::string_view text, const JsonLimits& limits);

}  // namespace qkv
