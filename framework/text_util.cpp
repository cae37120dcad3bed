// framework/text_util.cpp — small string helpers shared by the library and the program.
#include "text_util.h"

namespace qkv {

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string joined;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) joined += separator;
    joined += parts[i];
  }
  return joined;
}

}  // namespace qkv
