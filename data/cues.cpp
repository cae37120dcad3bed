// data/cues.cpp — parses data/idioms/cues.tsv (see data/cues.h): six tab-separated fields a line,
// positions checked against the sentence's length. No model code.
#include "cues.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "data/dataset.h"
#include "framework/text_util.h"

namespace qkv::data {

namespace {

const char* const kHeader = "split\tenglish\ttarget_positions\tcue_position\tcue\tlabel\treading_hindi";

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    fields.push_back(line.substr(start, tab - start));
  fields.push_back(line.substr(start));
  return fields;
}

int64_t parse_position(const std::string& text, size_t words, const std::string& where, const char* what) {
  int64_t value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value >= static_cast<int64_t>(words))
    throw std::runtime_error(fmt::format("{}: {} '{}' is not a word position of a {}-word sentence (0 to {})", where,
                                         what, text, words, static_cast<int64_t>(words) - 1));
  return value;
}

}  // namespace

std::vector<CueSentence> parse_cues(std::istream& in, const std::string& path) {
  std::vector<CueSentence> rows;
  const int lines = for_each_text_line(in, path, [&](const std::string& line, const std::string& where, int line_no) {
    if (line_no == 1) {
      if (line != kHeader) throw std::runtime_error(where + ": expected the header '" + std::string(kHeader) + "'");
      return;
    }
    if (!valid_utf8(line)) throw std::runtime_error(where + ": invalid UTF-8");
    const std::vector<std::string> fields = split_tabs(line);
    if (fields.size() != 7)
      throw std::runtime_error(fmt::format("{}: {} tab-separated fields, expected 7 (split, english, "
                                           "target_positions, cue_position, cue, label, reading_hindi)", where,
                                           fields.size()));
    CueSentence row;
    row.split = fields[0];
    row.english = tokenize(fields[1]);
    row.cue = fields[4];
    row.label = fields[5];
    row.reading_hindi = tokenize(fields[6]);
    row.source = where;
    if (row.split.empty() || row.english.empty() || row.cue.empty() || row.label.empty() || row.reading_hindi.empty())
      throw std::runtime_error(where + ": an empty split, sentence, cue, label or reading_hindi");
    if (static_cast<int64_t>(row.english.size()) > kMaxSentenceWords)
      throw std::runtime_error(fmt::format("{}: the sentence has {} words; qkv reads at most {}", where,
                                           row.english.size(), kMaxSentenceWords));
    for (const std::string& part : split_tabs([&] {
           std::string s = fields[2];
           std::replace(s.begin(), s.end(), ',', '\t');
           return s;
         }()))
      row.target_positions.push_back(parse_position(part, row.english.size(), where, "target position"));
    row.cue_position = parse_position(fields[3], row.english.size(), where, "cue position");
    if (std::find(row.target_positions.begin(), row.target_positions.end(), row.cue_position) !=
        row.target_positions.end())
      throw std::runtime_error(fmt::format("{}: the cue position {} is one of the target positions '{}'", where,
                                           row.cue_position, fields[2]));
    rows.push_back(std::move(row));
  });
  if (lines == 0) throw std::runtime_error(fmt::format("{}: empty (expected a header line)", path));
  return rows;
}

std::vector<CueSentence> load_cues(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error(fmt::format("{}: not a regular file (the cue file must be a text file)", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open file (python3 data/make_idioms.py writes it)", path));
  return parse_cues(in, path);
}

}  // namespace qkv::data
