// models/memory_budget.h — whether a translator that a file (a checkpoint, a training state) or the
// command line describes fits in this machine's memory, checked before anything is allocated
// from it. A refusal says what needs how much, in words; it does not measure what is free now.
#pragma once

#include <cstdint>
#include <string>

#include "translator.h"

namespace qkv::models {

uint64_t machine_memory_bytes();

// Training keeps four copies of every parameter (weights, gradients and both AdamW moments) of
// value_bytes each; throws naming `whose` ("runs/x/train_state.safetensors's model of 3.3 billion
// parameters needs 53 GB to train ...") when that is more than the machine's memory.
void check_training_fits(const TranslatorConfig& config, int value_bytes, const std::string& whose);

// Drawing one sentence's attention (qkv attend) materialises every layer's (T, T) weights, T =
// max_source + max_target, and a few more (T, T) intermediates; throws naming `whose` when that
// is more than half the machine's memory.
void check_attention_maps_fit(const TranslatorConfig& config, const std::string& whose);

}  // namespace qkv::models
