// train/run/evaluate.h — a model scored on a split (teacher-forced loss and token accuracy, greedy
// exact match), shared by `qkv eval`, the trainer's validation, `qkv ablate` and `qkv demo`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/translator.h"
#include "train/run/training_run.h"

namespace qkv::app {

// The line that says a split's sentences were skipped: "test: 3 sentences longer than the model's
// 14 source and 17 target positions skipped (...)".
std::string skipped_note(const std::string& split, int64_t skipped, const models::TranslatorConfig& config);

// Teacher-forced loss and token accuracy, and greedy exact-match, over a split. Words unknown to
// the vocabularies become <unk>; an unknown target word never counts as correctly predicted.
// A sentence longer than the model's layout is skipped and counted when the model is tied to its
// layout (absolute positions), and evaluated when it reads longer sentences (rotary or alibi).
// With oracle_length, each sentence is decoded to exactly its reference's length (qkv eval --oracle-length).
EvalResult evaluate(models::Translator& model, const std::vector<data::SentencePair>& pairs, const data::Vocab& english,
                    const data::Vocab& hindi, int64_t batch_size = 256, const models::ForwardOptions& decoding = {},
                    bool oracle_length = false);

// The layout with its target part cut to the longest target among pairs[idx] (plus <eos>): the slots
// past it would hold only padding, which the causal mask keeps from every real position and the loss
// ignores, so the result is the same, for less work (training's batches use it too). A target longer
// than the model's layout still reaches make_batch's file:line error.
data::Layout trimmed_layout(const data::Layout& layout, const std::vector<data::SentencePair>& pairs,
                            const std::vector<size_t>& idx);

}  // namespace qkv::app
