// data/dataset.cpp — TSV parsing and validation, vocabularies and batch construction.
#include "dataset.h"

#include "framework/text_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <new>
#include <fstream>
#include <stdexcept>

namespace qkv::data {
namespace fs = std::filesystem;

std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (!current.empty()) tokens.push_back(std::move(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

std::vector<std::string> normalize_english(const std::vector<std::string>& words) {
  static const std::string punctuation = ".,!?;:\"'`";
  std::vector<std::string> out;
  for (std::string w : words) {
    for (char& c : w)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const size_t first = w.find_first_not_of(punctuation);
    if (first == std::string::npos) continue;  // a word of punctuation alone
    w = w.substr(first, w.find_last_not_of(punctuation) - first + 1);
    out.push_back(w);
  }
  return out;
}

std::vector<std::string> nearest_words(const std::string& word, const std::vector<std::string>& vocabulary,
                                       size_t most) {
  std::vector<std::string> words;  // the vocabulary without its specials (<pad>, <unk>, ...)
  for (const auto& v : vocabulary)
    if (!v.empty() && v.front() != '<') words.push_back(v);
  return nearest_strings(word, words, most);
}

std::vector<SentencePair> load_pairs(const std::string& path) {
  // stat, not open: opening a FIFO would wait for a writer, and /dev/zero never ends
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    throw std::runtime_error(fmt::format("{}: not a regular file (a dataset split must be a text file)", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open file", path));
  try {
    return parse_pairs(in, path);
  } catch (const std::bad_alloc&) { throw std::runtime_error(fmt::format("{}: out of memory while reading it", path)); }
}

int for_each_text_line(std::istream& in, const std::string& path,
                       const std::function<void(const std::string& line, const std::string& where, int line_no)>& fn) {
  std::string line;
  int line_no = 0;
  while (read_bounded_line(in, line, fmt::format("{}:{}", path, line_no + 1))) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    fn(line, fmt::format("{}:{}", path, line_no), line_no);
  }
  return line_no;
}

std::vector<SentencePair> parse_pairs(std::istream& in, const std::string& path) {
  std::vector<SentencePair> pairs;
  for_each_text_line(in, path, [&](const std::string& line, const std::string& where, int) {
    if (!valid_utf8(line)) throw std::runtime_error(where + ": invalid UTF-8");
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) throw std::runtime_error(where + ": missing tab between english and hindi");
    if (line.find('\t', tab + 1) != std::string::npos)
      throw std::runtime_error(where + ": more than one tab (expected english<TAB>hindi)");
    SentencePair pair;
    pair.english = tokenize(line.substr(0, tab));
    pair.hindi = tokenize(line.substr(tab + 1));
    pair.source = where;
    if (pair.english.empty()) throw std::runtime_error(where + ": empty english side");
    if (pair.hindi.empty()) throw std::runtime_error(where + ": empty hindi side");
    for (const auto* side : {&pair.english, &pair.hindi})
      if (static_cast<int64_t>(side->size()) > kMaxSentenceWords)
        throw std::runtime_error(fmt::format("{}: {} side has {} words; qkv reads sentences of at most {}", where,
                                             side == &pair.english ? "english" : "hindi", side->size(),
                                             kMaxSentenceWords));
    pairs.push_back(std::move(pair));
  });
  if (pairs.empty()) throw std::runtime_error(fmt::format("{}: no sentence pairs", path));
  return pairs;
}

const std::vector<std::string>& generalisation_split_names() {
  static const std::vector<std::string> names = {"idiom_context", "sense_context", "role_swap",   "deeper",
                                                 "noun_roles",    "verb_objects",  "coordination"};
  return names;
}

std::vector<std::string> all_split_names() {
  std::vector<std::string> names = {"train", "valid", "test"};
  for (const auto& n : generalisation_split_names()) names.push_back(n);
  return names;
}

static std::string split_path(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / (name + ".tsv")).string();
}

bool Dataset::has(const std::string& name) const {
  return name == "train" || name == "valid" || name == "test" || generalisation.count(name) > 0;
}

std::vector<std::string> Dataset::available() const {
  std::vector<std::string> names;
  for (const auto& n : all_split_names())
    if (has(n)) names.push_back(n);
  return names;
}

const std::vector<SentencePair>& Dataset::split(const std::string& name) const {
  if (name == "train") return train;
  if (name == "valid") return valid;
  if (name == "test") return test;
  auto it = generalisation.find(name);
  if (it != generalisation.end()) return it->second;
  const auto& optional = generalisation_split_names();
  if (std::find(optional.begin(), optional.end(), name) != optional.end())
    throw std::runtime_error(
        fmt::format("split '{}' is not in this dataset: {} does not exist", name, split_path(dir, name)));
  throw std::runtime_error(fmt::format("unknown split '{}' (expected one of {})", name, join(all_split_names(), ", ")));
}

// The NAME of each NAME.tsv in `dir` that holds sentence pairs (not cues.tsv), sorted.
static std::vector<std::string> tsv_names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const fs::path path = entry.path();
    if (path.extension() == ".tsv" && path.stem() != "cues" && entry.is_regular_file(ec))
      names.push_back(path.stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> evaluation_split_names(const std::string& dir) {
  if (!fs::is_directory(dir))
    throw std::runtime_error(
        fmt::format("data directory '{}' does not exist (run from the qkv folder, or give --data DIR)", dir));
  const std::vector<std::string> present = tsv_names(dir);
  auto has = [&](const std::string& n) { return std::find(present.begin(), present.end(), n) != present.end(); };
  std::vector<std::string> names;
  for (const auto& n : all_split_names())
    if (n != "train" && has(n)) names.push_back(n);
  for (const auto& n : present)
    if (n != "train" && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  return names;
}

NamedSplit read_split(const std::string& dir, const std::string& name) {
  if (name.empty()) throw std::runtime_error("--split is empty: give a split name (test, valid, ...) or a .tsv file");
  const bool is_path = name.find('/') != std::string::npos || fs::path(name).extension() == ".tsv";
  const std::string path = is_path ? name : split_path(dir, name);
  if (!fs::is_regular_file(path)) {
    if (is_path) throw std::runtime_error(fmt::format("split file '{}' does not exist", path));
    std::vector<std::string> names = fs::is_directory(dir) ? evaluation_split_names(dir) : std::vector<std::string>{};
    const std::string choices = join(names, ", ");
    const std::vector<std::string> near = nearest_strings(name, names, 1);  // --split coordnation
    throw std::runtime_error(fmt::format(
        "split '{}' is not in {}: {} does not exist{} (this folder has: {}; or give a "
        "path to a .tsv file)",
        name, dir, path, near.empty() ? "" : "; did you mean '" + near[0] + "'?", choices.empty() ? "none" : choices));
  }
  return {name, load_pairs(path)};
}

Dataset load_dataset(const std::string& dir) {
  if (!fs::is_directory(dir))
    throw std::runtime_error(
        fmt::format("data directory '{}' does not exist (run from the qkv folder, or give --data DIR)", dir));
  Dataset ds;
  ds.dir = dir;
  ds.train = load_pairs(split_path(dir, "train"));
  ds.valid = load_pairs(split_path(dir, "valid"));
  ds.test = load_pairs(split_path(dir, "test"));
  for (const auto& name : generalisation_split_names()) {
    const std::string path = split_path(dir, name);
    if (fs::exists(path)) ds.generalisation.emplace(name, load_pairs(path));
  }
  return ds;
}

void swap_languages(Dataset& ds) {
  for (auto* split : {&ds.train, &ds.valid, &ds.test})
    for (SentencePair& pair : *split) std::swap(pair.english, pair.hindi);
  for (auto& [name, pairs] : ds.generalisation)
    for (SentencePair& pair : pairs) std::swap(pair.english, pair.hindi);
}

void turn_targets(std::vector<SentencePair>& pairs) {
  for (SentencePair& pair : pairs) std::reverse(pair.hindi.begin(), pair.hindi.end());
}

void turn_targets(Dataset& ds) {
  for (auto* split : {&ds.train, &ds.valid, &ds.test}) turn_targets(*split);
  for (auto& [name, pairs] : ds.generalisation) turn_targets(pairs);
  ds.targets_turned = !ds.targets_turned;
}

Vocab::Vocab() : Vocab(from_words({"<pad>", "<unk>", "<sep>", "<eos>"})) {}

Vocab Vocab::from_words(const std::vector<std::string>& words) {
  static const char* specials[] = {"<pad>", "<unk>", "<sep>", "<eos>"};
  if (words.size() < 4)
    throw std::runtime_error(fmt::format("vocabulary has {} words, expected the 4 specials first", words.size()));
  if (static_cast<int64_t>(words.size()) > kMaxWords)
    throw std::runtime_error(fmt::format("vocabulary has {} words, more than qkv's {}", words.size(), kMaxWords));
  for (int i = 0; i < 4; ++i)
    if (words[i] != specials[i])
      throw std::runtime_error(fmt::format("vocabulary entry {} is '{}', expected '{}'", i, words[i], specials[i]));
  Vocab v(EmptyTag{});
  v.words_ = words;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.empty() || w.size() > kMaxLineBytes || w.find_first_of(" \t\n\r\f\v") != std::string::npos)
      throw std::runtime_error(
          fmt::format("vocabulary entry {} ({} bytes) is not a word: a word has 1 to {} bytes "
                      "and no whitespace",
                      i, w.size(), kMaxLineBytes));
    if (!v.index_.emplace(w, static_cast<int64_t>(i)).second)
      throw std::runtime_error(
          fmt::format("vocabulary repeats the word '{}'", w.size() <= 40 ? w : w.substr(0, 37) + "..."));
  }
  return v;
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& sentences) {
  std::vector<std::string> words = {"<pad>", "<unk>", "<sep>", "<eos>"};
  std::unordered_map<std::string, int64_t> seen;
  for (const auto& w : words) seen.emplace(w, 0);
  for (const auto& sentence : sentences)
    for (const auto& w : sentence)
      if (seen.emplace(w, 0).second) words.push_back(w);
  return from_words(words);
}

int64_t Vocab::id(const std::string& word) const {
  auto it = index_.find(word);
  return it == index_.end() ? UNK : it->second;
}

const std::string& Vocab::word(int64_t id) const {
  if (id < 0 || id >= size())
    throw std::runtime_error(fmt::format("token id {} out of range for a vocabulary of {}", id, size()));
  return words_[id];
}

Batch make_batch(const std::vector<SentencePair>& pairs, const std::vector<size_t>& indices, const Vocab& english,
                 const Vocab& hindi, const Layout& layout, Device device, const HiddenInputs& hidden) {
  const int64_t B = static_cast<int64_t>(indices.size());
  if (hidden.rate > 0 && hidden.row_keys.size() != indices.size())
    throw std::runtime_error(fmt::format("make_batch: {} row keys for {} rows", hidden.row_keys.size(), B));
  const int64_t S = layout.max_source, Tt = layout.max_target;
  std::vector<int64_t> src(B * S, Vocab::PAD), tin(B * Tt, Vocab::PAD), tout(B * Tt, Vocab::PAD);
  Batch batch;
  Generator hide;  // seeded per row, only when inputs are hidden
  for (int64_t b = 0; b < B; ++b) {
    const SentencePair& p = pairs.at(indices[b]);
    const int64_t n_src = static_cast<int64_t>(p.english.size());
    const int64_t n_tgt = static_cast<int64_t>(p.hindi.size());
    if (n_src > S)
      throw std::runtime_error(
          fmt::format("{}: english has {} tokens, the model reads at most {}", p.source, n_src, S));
    if (n_tgt + 1 > Tt)
      throw std::runtime_error(
          fmt::format("{}: hindi has {} tokens, the model writes at most {}", p.source, n_tgt, Tt - 1));
    for (int64_t i = 0; i < n_src; ++i) src[b * S + i] = english.id(p.english[i]);
    tin[b * Tt] = Vocab::SEP;
    if (hidden.rate > 0) hide.seed(hidden.row_keys[b]);
    for (int64_t i = 0; i < n_tgt; ++i) {
      tin[b * Tt + i + 1] = hidden.rate > 0 && hide.uniform() < hidden.rate ? Vocab::UNK : hindi.id(p.hindi[i]);
      tout[b * Tt + i] = hindi.id(p.hindi[i]);
    }
    tout[b * Tt + n_tgt] = Vocab::EOS;
    batch.source_lengths.push_back(n_src);
    batch.target_lengths.push_back(n_tgt + 1);
    batch.target_tokens += n_tgt + 1;
  }
  batch.source = Tensor::from_ids(src, {B, S}, device);
  batch.target_input = Tensor::from_ids(tin, {B, Tt}, device);
  batch.target_output = Tensor::from_ids(tout, {B, Tt}, device);
  return batch;
}

std::vector<size_t> shuffled_indices(size_t n, Generator& gen) {
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = i;
  for (size_t i = n; i > 1; --i) std::swap(idx[i - 1], idx[gen.below(i)]);
  return idx;
}

}  // namespace qkv::data
