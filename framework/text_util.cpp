// framework/text_util.cpp — small string helpers shared by the library and the program.
#include "text_util.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace qkv {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + 1)
    parts.push_back(text.substr(start, at - start));
  parts.push_back(text.substr(start));
  return parts;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string joined;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) joined += separator;
    joined += parts[i];
  }
  return joined;
}

// Optimal string alignment (Damerau) distance: insertions, deletions, substitutions and swaps of
// two neighbouring bytes each cost one, so `bnak` is one edit from `bank`.
static size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, row);
  }
  return previous[b.size()];
}

std::vector<std::string> nearest_strings(const std::string& word, const std::vector<std::string>& candidates,
                                         size_t most) {
  std::vector<std::pair<size_t, std::string>> near;
  if (word.size() > 64) return {};  // a long token is nobody's typo
  for (const auto& c : candidates) {
    if ((c.size() > word.size() ? c.size() - word.size() : word.size() - c.size()) > 2) continue;
    const size_t d = edit_distance(word, c);
    if (d <= 2) near.emplace_back(d, c);
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < near.size() && i < most; ++i) out.push_back(near[i].second);
  return out;
}

bool read_bounded_line(std::istream& in, std::string& line, const std::string& where) {
  line.clear();
  std::streambuf* buffer = in.rdbuf();
  for (;;) {
    const int c = buffer->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return !line.empty();
    }
    if (c == '\n') return true;
    if (line.size() == kMaxLineBytes)
      throw std::runtime_error(where + ": a line longer than " + std::to_string(kMaxLineBytes) +
                               " bytes (is this a text file?)");
    line.push_back(static_cast<char>(c));
  }
}

std::string dims_for_message(const std::vector<int64_t>& dims) {
  constexpr size_t kAll = 8, kShown = 4;
  const size_t shown = dims.size() <= kAll ? dims.size() : kShown;
  std::string out;
  for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  if (shown == dims.size()) return out;
  std::string more = std::to_string(dims.size() - shown);  // with thousands separators: 99,996
  for (int at = static_cast<int>(more.size()) - 3; at > 0; at -= 3) more.insert(static_cast<size_t>(at), ",");
  return out + ", \u2026 " + more + " more";
}

bool valid_utf8(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  size_t i = 0;
  while (i < size) {
    // ASCII eight bytes at a time (a header is mostly ASCII, and may be 100 MB of it)
    uint64_t word = 0;
    if (size - i >= 8 && (std::memcpy(&word, bytes + i, 8), (word & 0x8080808080808080ull) == 0)) {
      i += 8;
      continue;
    }
    const uint8_t lead = bytes[i];
    size_t continuation_count = 0;
    uint32_t code_point = 0;
    uint32_t min_code_point = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      continuation_count = 1, code_point = lead & 0x1F, min_code_point = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      continuation_count = 2, code_point = lead & 0x0F, min_code_point = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      continuation_count = 3, code_point = lead & 0x07, min_code_point = 0x10000;
    } else {
      return false;
    }
    if (size - i - 1 < continuation_count) return false;
    for (size_t k = 1; k <= continuation_count; ++k) {
      const uint8_t byte = bytes[i + k];
      if ((byte & 0xC0) != 0x80) return false;
      code_point = (code_point << 6) | (byte & 0x3F);
    }
    if (code_point < min_code_point || code_point > 0x10FFFF) return false;
    if (code_point >= 0xD800 && code_point <= 0xDFFF) return false;
    i += continuation_count + 1;
  }
  return true;
}

}  // namespace qkv
