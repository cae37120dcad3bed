// train/cli/translate.cpp — `qkv translate`: one sentence from the command line, or one per line from stdin or
// --input, translated greedily.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "framework/text_util.h"
#include "models/translator_io.h"
#include "train/cli/commands.h"

namespace qkv::app {

// What translate says of a translation cut at its decode limit (never silently).
static std::string cut_note(const models::Translator& model, const std::vector<std::string>& words,
                            const models::ForwardOptions& decoding) {
  return fmt::format("the translation reached its limit of {} Hindi words without ending and was cut there{}",
                     model.decode_limit(static_cast<int64_t>(words.size()), decoding.max_length),
                     model.reads_longer() ? " (--max-length raises it)" : "");
}

// Batch translation: one sentence per line from `path` (stdin when empty), english<TAB>hindi per
// line on stdout in input order, decoded in batches. Blank lines are passed over. A bad line (not
// UTF-8, too long) is reported with its line number on stderr and skipped; returns false if any was.
static bool translate_lines(models::Translator& model, const models::LoadedTranslator& loaded, const std::string& path,
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
    const auto out = model.translate(batch, loaded.english, loaded.hindi, options);
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
    if (!data::valid_utf8(line)) {
      fmt::print(stderr, "{}: skipped: not valid UTF-8\n", where);
      all_ok = false;
      continue;
    }
    const std::vector<std::string> typed = data::tokenize(line);
    const std::vector<std::string> words = data::normalize_english(typed);
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
    const std::string unknown = unknown_words(words, loaded.english);
    if (!unknown.empty()) fmt::print(stderr, "{}: warning: unknown words mapped to <unk>: {}\n", where, unknown);
    if (every_word_unknown(words, loaded.english))
      fmt::print(stderr, "{}: warning: {}\n", where, kMeaninglessTranslation);
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

// qkv translate: one sentence from the command line, or one per line from stdin or --input.
void register_translate(CLI::App& app) {
  auto sentence_parts = std::make_shared<std::vector<std::string>>();
  auto translate_checkpoint = std::make_shared<std::string>();
  auto translate_device = std::make_shared<std::string>("cpu");
  auto input = std::make_shared<std::string>();
  auto* translate = app.add_subcommand(
      "translate", "translate an English sentence greedily; with no sentence (or -), one per line from stdin");
  add_checkpoint_option(translate, *translate_checkpoint);
  add_device_option(translate, *translate_device);
  translate->add_option("--input", *input, "read sentences from this file, one per line (english<TAB>hindi lines out)");
  translate->add_option(
      "sentence", *sentence_parts,
      "the English sentence, quoted or not (lower-cased, punctuation dropped); - or none: read stdin");
  auto translate_threads = std::make_shared<int>(0);
  add_threads_option(translate, *translate_threads);
  auto decoding = std::make_shared<models::ForwardOptions>();
  add_max_length_option(translate, decoding->max_length);
  translate->callback([sentence_parts, translate_checkpoint, translate_device, input, translate_threads, decoding] {
    apply_threads(*translate_threads);
    const std::string sentence = join(*sentence_parts, " ");
    if (!sentence_parts->empty() && data::tokenize(sentence).empty())
      throw std::runtime_error("the sentence is empty (give words, or - to read stdin)");
    if (!input->empty() && !sentence.empty())
      throw std::runtime_error("give either a sentence or --input FILE, not both");
    models::LoadedTranslator loaded = models::load_translator(*translate_checkpoint, Device::parse(*translate_device));
    loaded.model->decode_limit(1, decoding->max_length);  // a --max-length past the model's layout fails first
    if (sentence.empty() || sentence == "-" || !input->empty()) {
      if (input->empty() && ::isatty(STDIN_FILENO))
        fmt::print(stderr, "reading sentences from stdin, one per line; Ctrl-D ends\n");
      if (!translate_lines(*loaded.model, loaded, *input, *decoding))
        throw std::runtime_error("some lines could not be translated (see above)");
      return;
    }
    const std::vector<std::string> words = sentence_words(sentence);
    check_sentence(words, *loaded.model, loaded.english);
    std::vector<uint8_t> cut;
    models::ForwardOptions options = *decoding;
    options.cut_at_limit = &cut;
    const auto out = loaded.model->translate({words}, loaded.english, loaded.hindi, options);
    if (cut[0]) fmt::print(stderr, "note: {}\n", cut_note(*loaded.model, words, *decoding));
    fmt::print("{}\n", join(out[0], " "));
  });
}

}  // namespace qkv::app
