// framework/text_util.h — small string helpers shared by the library and the program.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qkv {

// The parts with `separator` between each two: join({"a", "b"}, " ") is "a b"; no parts give "".
std::string join(const std::vector<std::string>& parts, std::string_view separator);

}  // namespace qkv
