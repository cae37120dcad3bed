// framework/text_util.h — small string helpers shared by the library and the program.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qkv {

// The parts with `separator` between each two: join({"a", "b"}, " ") is "a b"; no parts give "".
std::string join(const std::vector<std::string>& parts, std::string_view separator);

// Up to `most` of `candidates` within Levenshtein distance 2 of `word`, nearest first (ties in
// the candidates' order): the "did you mean" of a mistyped word, command or flag.
std::vector<std::string> nearest_strings(const std::string& word, const std::vector<std::string>& candidates,
                                         size_t most = 3);

}  // namespace qkv
