// train/experiments/sentences.h — a typed sentence read as qkv reads it, for every command that takes
// one (translate, attend, explore, demo), and the version text (--version, the page, bench).
#pragma once

#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/translator.h"

namespace qkv::app {

// A sentence as typed: UTF-8, not empty, normalised (data::normalize_english); says on stderr
// what it was read as when that differs ("note: read as ..."), prefixed by `where` if given.
std::vector<std::string> sentence_words(const std::string& sentence, const std::string& where = "");
// True when no word is in vocab: the model then reads only <unk>, and its output means nothing.
bool every_word_unknown(const std::vector<std::string>& words, const data::Vocab& vocab);
inline constexpr const char* kMeaninglessTranslation =
    "every word is unknown to this model, so the translation cannot depend on what you typed and means nothing";
// The words vocab lacks, quoted, each with its nearest vocabulary words ("did you mean ...").
std::string unknown_words(const std::vector<std::string>& words, const data::Vocab& vocab);

// Checks that the words fit the model (a model tied to its layout reads at most its source
// positions; throws otherwise), then prints one warning line naming every word the vocabulary
// does not know (they become <unk>).
void check_sentence(const std::vector<std::string>& words, const models::Translator& model, const data::Vocab& vocab);

// "qkv VERSION" and the build configuration (CUDA, BLAS, compiler), for --version.
std::string version_text();

}  // namespace qkv::app
