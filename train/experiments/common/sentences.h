// train/experiments/common/sentences.h — a typed sentence read as qkv reads it, for every command that takes
// one (translate, attend, explore, demo), `translate --input`'s lines, and the version text
// (--version, the page, bench).
#pragma once

#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/translator.h"
#include "models/translator_io.h"

namespace qkv::app {

// A sentence as typed: UTF-8, not empty, normalised (data::normalize_english); says on stderr
// what it was read as when that differs ("note: read as ..."), prefixed by `where` if given.
std::vector<std::string> sentence_words(const std::string& sentence, const std::string& where = "");

// Checks that the words fit the model (a model tied to its layout reads at most its source
// positions; throws otherwise), then prints one warning line naming every word the vocabulary
// does not know (they become <unk>).
void check_sentence(const std::vector<std::string>& words, const models::Translator& model, const data::Vocab& vocab);

// "qkv VERSION" and the build configuration (CUDA, BLAS, compiler), for --version.
std::string version_text();

// What `translate` says of a translation cut at its decode limit (never silently).
std::string cut_note(const models::Translator& model, const std::vector<std::string>& words,
                     const models::ForwardOptions& decoding);

// `translate --input`: one sentence per line from `path` (stdin when empty), english<TAB>hindi per
// line on stdout in input order, decoded in batches. Blank lines are passed over. A bad line (not
// UTF-8, too long) is reported with its line number on stderr and skipped; returns false if any was.
bool translate_lines(models::Translator& model, const models::LoadedTranslator& loaded, const std::string& path,
                     const models::ForwardOptions& decoding);

}  // namespace qkv::app
