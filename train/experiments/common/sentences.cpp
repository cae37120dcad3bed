// train/experiments/common/sentences.cpp — a typed sentence read as qkv reads it (normalised, checked
// against a model's vocabulary and layout, unknown words with suggestions), and the version text.
#include "train/experiments/common/sentences.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "framework/distributed.h"
#include "framework/text_util.h"
#include "models/translator_io.h"

namespace qkv::app {

constexpr const char* kQkvVersion = "0.4.0";

std::vector<std::string> sentence_words(const std::string& sentence, const std::string& where) {
  if (!valid_utf8(sentence)) throw std::runtime_error("the sentence is not valid UTF-8");
  const std::vector<std::string> typed = data::tokenize(sentence);
  std::vector<std::string> words = data::normalize_english(typed);
  if (words.empty()) throw std::runtime_error("the sentence is empty");
  if (words != typed)
    fmt::print(stderr, "{}note: read as '{}' (lower case, sentence punctuation dropped)\n",
               where.empty() ? "" : where + ": ", join(words, " "));
  return words;
}

// Warns on stderr, each line after `prefix`, of the words vocab lacks, quoted, each with its nearest
// vocabulary words ("did you mean ..."), and when no word is in vocab: the model then reads only
// <unk>, and its output means nothing.
static void warn_unknown_words(const std::vector<std::string>& words, const data::Vocab& vocab,
                               const std::string& prefix) {
  std::string unknown;
  for (const auto& w : words) {
    if (vocab.contains(w)) continue;
    unknown += (unknown.empty() ? "'" : ", '") + (w.size() > 40 ? w.substr(0, 40) + "..." : w) + "'";
    const std::vector<std::string> near = data::nearest_words(w, vocab.words());
    if (!near.empty()) unknown += " (did you mean '" + join(near, "', '") + "'?)";
  }
  if (!unknown.empty()) fmt::print(stderr, "{}warning: unknown words mapped to <unk>: {}\n", prefix, unknown);
  if (std::none_of(words.begin(), words.end(), [&](const std::string& w) { return vocab.contains(w); }))
    fmt::print(stderr,
               "{}warning: every word is unknown to this model, so the translation cannot depend on what you "
               "typed and means nothing\n",
               prefix);
}

void check_sentence(const std::vector<std::string>& words, const models::Translator& model, const data::Vocab& vocab) {
  const int64_t max_words = model.config().layout.max_source;
  if (static_cast<int64_t>(words.size()) > max_words && !model.reads_longer())
    throw std::runtime_error(
        fmt::format("the sentence has {} words; this model reads at most {} (its {} positions "
                    "cannot read past them; a model trained with --positions rotary or alibi can)",
                    words.size(), max_words, models::positions_name(model.config().positions)));
  if (static_cast<int64_t>(words.size()) > data::kMaxSentenceWords)
    throw std::runtime_error(
        fmt::format("the sentence has {} words; qkv reads at most {}", words.size(), data::kMaxSentenceWords));
  warn_unknown_words(words, vocab, "");
}

std::string version_text() {
#ifdef QKV_WITH_CUDA
  const char* cuda = "on";
#else
  const char* cuda = "off";
#endif
  return fmt::format("qkv {}\nbuild: CUDA {}, MPI {}, NCCL {}, BLAS {}, compiler g++ {}, C++ {}", kQkvVersion, cuda,
                     dist::built_with_mpi() ? "on" : "off", dist::built_with_nccl() ? "on" : "off",
                     openblas_get_config(), __VERSION__, __cplusplus);
}

std::string cut_note(const models::Translator& model, const std::vector<std::string>& words,
                     const models::ForwardOptions& decoding) {
  return fmt::format("the translation reached its limit of {} Hindi words without ending and was cut there{}",
                     model.decode_limit(static_cast<int64_t>(words.size()), decoding.max_length),
                     model.reads_longer() ? " (--max-length raises it)" : "");
}

bool translate_lines(models::Translator& model, const models::LoadedTranslator& loaded, const std::string& path,
                     const models::ForwardOptions& decoding) {
  std::ifstream file;
  if (!path.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw std::runtime_error(fmt::format("{}: not a readable regular file", path));
    file.open(path, std::ios::binary);
    if (!file) throw std::runtime_error(fmt::format("{}: cannot open file", path));
  }
  std::istream& in = path.empty() ? std::cin : file;
  const std::string name = path.empty() ? "stdin" : path;
  // a model tied to its layout reads at most its source positions; a rotary one any sentence
  const int64_t max_words = model.reads_longer() ? data::kMaxSentenceWords : model.config().layout.max_source;
  constexpr size_t kBatch = 256;
  bool all_ok = true, noted = false;
  int64_t line_no = 0, translated = 0;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> lines, wheres;
  std::vector<std::vector<std::string>> batch;
  const auto flush = [&] {
    if (batch.empty()) return;
    std::vector<uint8_t> cut;
    models::ForwardOptions options = decoding;
    options.cut_at_limit = &cut;
    auto out = model.translate(batch, loaded.english, loaded.hindi, options);
    if (model.config().right_to_left) std::ranges::for_each(out, std::ranges::reverse);  // in reading order
    for (size_t i = 0; i < batch.size(); ++i) {
      if (cut[i]) fmt::print(stderr, "{}: note: {}\n", wheres[i], cut_note(model, batch[i], decoding));
      fmt::print("{}\t{}\n", lines[i], join(out[i], " "));
    }
    std::fflush(stdout);
    translated += static_cast<int64_t>(batch.size());
    batch.clear();
    lines.clear();
    wheres.clear();
  };
  std::string line;
  while (read_bounded_line(in, line, fmt::format("{}:{}", name, line_no + 1))) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = fmt::format("{}:{}", name, line_no);
    if (!valid_utf8(line)) {
      fmt::print(stderr, "{}: skipped: not valid UTF-8\n", where);
      all_ok = false;
      continue;
    }
    const std::vector<std::string> typed = data::tokenize(line), words = data::normalize_english(typed);
    if (words.empty()) continue;     // blank lines separate nothing and translate to nothing
    if (words != typed && !noted) {  // said once: the first line that changed
      fmt::print(stderr,
                 "{}: note: read as '{}' (lower case, sentence punctuation dropped; likewise for later lines)\n", where,
                 join(words, " "));
      noted = true;
    }
    if (static_cast<int64_t>(words.size()) > max_words) {
      fmt::print(stderr, "{}: skipped: {} words; this model reads at most {}\n", where, words.size(), max_words);
      all_ok = false;
      continue;
    }
    warn_unknown_words(words, loaded.english, where + ": ");
    lines.push_back(join(words, " "));
    wheres.push_back(where);
    batch.push_back(words);
    if (batch.size() == kBatch) flush();
  }
  flush();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (translated > 0)
    fmt::print(stderr, "translated {} sentence{} in {:.2f}s ({:.0f} sentences/s)\n", translated,
               translated == 1 ? "" : "s", seconds, translated / std::max(seconds, 1e-9));
  return all_ok;
}

}  // namespace qkv::app
