// train/cli/translate.cpp — `qkv translate`: one sentence from the command line, or one per line from stdin or
// --input, translated greedily (or reranked by a channel model: --channel).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "framework/text_util.h"
#include "models/noisy_channel.h"
#include "models/translator_io.h"
#include "train/cli/commands.h"
#include "train/experiments/common/sentences.h"

namespace qkv::app {

void register_translate(CLI::App& app) {
  auto sentence_parts = std::make_shared<std::vector<std::string>>();
  auto translate_checkpoint = std::make_shared<std::string>();
  auto translate_device = std::make_shared<std::string>("cpu");
  auto input = std::make_shared<std::string>();
  auto* translate = app.add_subcommand("translate",
                                       "translate an English sentence (greedily, or reranked by a channel model); with "
                                       "no sentence (or -), one per line from stdin");
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
  auto channel_choice = std::make_shared<ChannelChoice>();
  add_channel_options(translate, *channel_choice);
  translate->callback([sentence_parts, translate_checkpoint, translate_device, input, translate_threads, decoding,
                       channel_choice] {
    apply_threads(*translate_threads);
    const std::string sentence = join(*sentence_parts, " ");
    if (!sentence_parts->empty() && data::tokenize(sentence).empty())
      throw std::runtime_error("the sentence is empty (give words, or - to read stdin)");
    if (!input->empty() && !sentence.empty())
      throw std::runtime_error("give either a sentence or --input FILE, not both");
    models::LoadedTranslator loaded = models::load_translator(*translate_checkpoint, Device::parse(*translate_device));
    loaded.model->decode_limit(1, decoding->max_length);  // a --max-length past the model's layout fails first
    const std::optional<models::Channel> channel =
        open_channel(*channel_choice, *translate_checkpoint, loaded, Device::parse(*translate_device));
    decoding->channel = channel ? &*channel : nullptr;
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
    auto out = loaded.model->translate({words}, loaded.english, loaded.hindi, options);
    if (loaded.model->config().right_to_left) std::ranges::reverse(out[0]);  // in reading order
    if (cut[0]) fmt::print(stderr, "note: {}\n", cut_note(*loaded.model, words, *decoding));
    fmt::print("{}\n", join(out[0], " "));
  });
}

}  // namespace qkv::app
