// framework/text_util.h — small string helpers shared by the library and the program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace qkv {

// The parts with `separator` between each two: join({"a", "b"}, " ") is "a b"; no parts give "".
std::string join(const std::vector<std::string>& parts, std::string_view separator);
// The parts of `text` between its `separator`s: split("a\tb", '\t') is {"a", "b"}; "" gives {""}.
std::vector<std::string> split(const std::string& text, char separator);

// Up to `most` of `candidates` within Levenshtein distance 2 of `word`, nearest first (ties in
// the candidates' order): the "did you mean" of a mistyped word, command or flag.
std::vector<std::string> nearest_strings(const std::string& word, const std::vector<std::string>& candidates,
                                         size_t most = 3);

// Dimensions for a message, comma-separated: all of them up to 8, else the first 4 and how many
// more: "128, 1, 1, 1, … 99,996 more" (a shape from a file can have 100,000 dims; a message is a line).
std::string dims_for_message(const std::vector<int64_t>& dims);

// True when the bytes are well-formed UTF-8 (no overlong forms, surrogates, or past U+10FFFF).
bool valid_utf8(const void* bytes, size_t size);
inline bool valid_utf8(const std::string& text) { return valid_utf8(text.data(), text.size()); }

// The longest line qkv reads from a text file or stdin.
inline constexpr size_t kMaxLineBytes = 64 * 1024;

// Reads the next line of `in` into `line`, without its '\n'; false at the end of the input. A
// line with no newline within kMaxLineBytes throws std::runtime_error("<where>: a line longer than
// 65536 bytes ..."), where `where` names the file and line ("stdin:3"): /dev/zero or a 64 MB line
// is never read whole.
bool read_bounded_line(std::istream& in, std::string& line, const std::string& where);

}  // namespace qkv
