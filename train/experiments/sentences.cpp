// train/experiments/sentences.cpp — a typed sentence read as qkv reads it (normalised, checked
// against a model's vocabulary and layout, unknown words with suggestions), and the version text.
#include "train/experiments/sentences.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "framework/distributed.h"
#include "framework/text_util.h"

namespace qkv::app {

constexpr const char* kQkvVersion = "0.4.0";

std::vector<std::string> sentence_words(const std::string& sentence, const std::string& where) {
  if (!data::valid_utf8(sentence)) throw std::runtime_error("the sentence is not valid UTF-8");
  const std::vector<std::string> typed = data::tokenize(sentence);
  std::vector<std::string> words = data::normalize_english(typed);
  if (words.empty()) throw std::runtime_error("the sentence is empty");
  if (words != typed)
    fmt::print(stderr, "{}note: read as '{}' (lower case, sentence punctuation dropped)\n",
               where.empty() ? "" : where + ": ", join(words, " "));
  return words;
}

bool every_word_unknown(const std::vector<std::string>& words, const data::Vocab& vocab) {
  return std::none_of(words.begin(), words.end(), [&](const std::string& w) { return vocab.contains(w); });
}

std::string unknown_words(const std::vector<std::string>& words, const data::Vocab& vocab) {
  std::string unknown;
  for (const auto& w : words) {
    if (vocab.contains(w)) continue;
    unknown += (unknown.empty() ? "'" : ", '") + (w.size() > 40 ? w.substr(0, 40) + "..." : w) + "'";
    const std::vector<std::string> near = data::nearest_words(w, vocab.words());
    if (!near.empty()) unknown += " (did you mean '" + join(near, "', '") + "'?)";
  }
  return unknown;
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
  const std::string unknown = unknown_words(words, vocab);
  if (!unknown.empty()) fmt::print(stderr, "warning: unknown words mapped to <unk>: {}\n", unknown);
  if (every_word_unknown(words, vocab)) fmt::print(stderr, "warning: {}\n", kMeaninglessTranslation);
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

}  // namespace qkv::app
