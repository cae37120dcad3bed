// data/cues.cpp — parses data/idioms/cues.tsv (see data/cues.h): six tab-separated fields a line,
// positions checked against the sentence's length. No model code.
#include "cues.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "data/dataset.h"
#include "framework/random.h"
#include "framework/text_util.h"

namespace qkv::data {

namespace {

const char* const kHeader = "split\tenglish\ttarget_positions\tcue_position\tcue\tlabel\treading_hindi";

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
    const std::vector<std::string> fields = split(line, '\t');
    if (fields.size() != 7)
      throw std::runtime_error(
          fmt::format("{}: {} tab-separated fields, expected 7 (split, english, "
                      "target_positions, cue_position, cue, label, reading_hindi)",
                      where, fields.size()));
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
    for (const std::string& part : split(fields[2], ','))
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

std::string cue_file_of(const std::string& data_dir) { return (std::filesystem::path(data_dir) / "cues.tsv").string(); }

std::vector<CueSentence> load_cues(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error(fmt::format("{}: not a regular file (the cue file must be a text file)", path));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(fmt::format(
        "{}: cannot open file (a folder of your own needs a cue file: train/README.md, qkv cues, says what it holds)",
        path));
  return parse_cues(in, path);
}

namespace {

// Which sense of `word` a sentence pair shows: 0 or 1, or -1 when the word is not there exactly once
// or the Hindi holds words of both readings or of neither.
int sense_of(const SentencePair& pair, const std::string& word, const std::set<std::string> (&readings)[2]) {
  if (std::count(pair.english.begin(), pair.english.end(), word) != 1) return -1;
  bool shows[2] = {false, false};
  for (const std::string& hindi : pair.hindi)
    for (int s = 0; s < 2; ++s) shows[s] = shows[s] || readings[s].count(hindi) > 0;
  return shows[0] == shows[1] ? -1 : (shows[0] ? 0 : 1);
}

}  // namespace

std::vector<SenseWord> sense_examples(const std::vector<SentencePair>& pairs, const std::vector<CueSentence>& cues,
                                      int64_t per_sense, uint64_t seed) {
  // word -> sense -> the Hindi words of that reading, from the cue labels (bank:river -> किनारा ...)
  std::map<std::string, std::map<std::string, std::set<std::string>>> readings;
  for (const CueSentence& row : cues) {
    const size_t colon = row.label.find(':');
    if (colon == std::string::npos) continue;
    auto& hindi = readings[row.label.substr(0, colon)][row.label.substr(colon + 1)];
    hindi.insert(row.reading_hindi.begin(), row.reading_hindi.end());
  }
  Generator gen(seed);
  const std::vector<size_t> order = shuffled_indices(pairs.size(), gen);
  std::vector<SenseWord> words;
  for (const auto& [word, senses] : readings) {
    if (senses.size() != 2) continue;
    SenseWord w;
    w.word = word;
    std::set<std::string> hindi[2];
    int s = 0;
    for (const auto& [name, reading] : senses) w.senses[s] = name, hindi[s++] = reading;
    std::vector<SenseExample> of_sense[2];
    for (const size_t i : order) {
      const int sense = sense_of(pairs[i], word, hindi);
      if (sense < 0 || static_cast<int64_t>(of_sense[sense].size()) >= per_sense) continue;
      const auto at = std::find(pairs[i].english.begin(), pairs[i].english.end(), word) - pairs[i].english.begin();
      of_sense[sense].push_back({pairs[i].english, at, sense, false});
    }
    const size_t n = std::min(of_sense[0].size(), of_sense[1].size());
    for (int sense = 0; sense < 2; ++sense)
      for (size_t k = 0; k < n; ++k) {
        of_sense[sense][k].probe_train = k < n / 2;
        w.examples.push_back(of_sense[sense][k]);
      }
    if (n > 0) words.push_back(std::move(w));
  }
  return words;
}

}  // namespace qkv::data
