// models/noisy_channel.h — beam search reranked by a channel model (noisy-channel reranking, Yee et
// al., 2019): the forward model's beam gives each sentence its candidate translations, and a model
// trained the other way round (Hindi to English, `qkv train --reverse`) scores how well each one
// gives the English back. A candidate that drops a word or a phrase cannot give it back, so the
// rerank mends what greedy decoding loses on sentences longer than train's (RESULTS.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/translator.h"
#include "models/translator_io.h"

namespace qkv::models {

struct Channel {
  static constexpr int64_t kDefaultBeam = 8, kMaxBeam = 64;
  // Hindi (a channel's `english` vocabulary) to English (its `hindi`): one model or more (one trained
  // --reverse, one --reverse --right-to-left, another seed's), each one's log p added.
  std::vector<LoadedTranslator> loaded;
  int64_t beam = kDefaultBeam;
  // Models trained on the same data that write the Hindi too: one trained --right-to-left (Liu et al.,
  // 2016), another seed's left-to-right model (an ensemble). Each one's beam's candidates join the
  // forward model's, and each one's log p(hindi | english) joins the score (RESULTS.md).
  std::vector<LoadedTranslator> writers;
};

// The channel models at `paths` for `forward`: each one's vocabularies must be the forward model's
// turned round (a model `qkv train --reverse` trained on the same data), and it must read any length
// (rotary or alibi positions), since a candidate may be longer than any Hindi sentence of train.
// Throws one line naming the path and the mismatch.
Channel load_channel(const std::vector<std::string>& paths, const LoadedTranslator& forward, int64_t beam,
                     Device device);
// The model at `path` for `forward`, into `channel`'s writers: trained on the same data (the same
// words), reading any length, and writing right to left (`qkv train --right-to-left`) when
// `right_to_left`, else left to right. Throws one line naming the path and the mismatch.
void load_writer(Channel& channel, const std::string& path, const LoadedTranslator& forward, bool right_to_left,
                 Device device);

// Each sentence decoded on its own by beam search (options.max_length, or the model's limit, as
// greedy decoding's), every candidate that ended (and those cut at the limit when none did) scored
// by log p(hindi | english) + log p(english | hindi) under each channel (all weights 1), the best kept;
// with writers, their candidates too, and each one's log p(hindi | english) added.
// A sentence's translation never depends on the others. options.cut_at_limit is filled as by
// Translator::translate.
std::vector<std::vector<std::string>> translate_reranked(Translator& forward,
                                                         const std::vector<std::vector<std::string>>& english,
                                                         const data::Vocab& english_vocab,
                                                         const data::Vocab& hindi_vocab, const Channel& channel,
                                                         const ForwardOptions& options);

}  // namespace qkv::models
