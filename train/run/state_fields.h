// train/run/state_fields.h — the pieces of a saved training state that run_state.cpp, state_fields.cpp
// and state_options.cpp share: numbers as a state writes and reads them, and its metadata fields as
// one table (state_fields.cpp) from which saving, the field check and read-back are made.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "data/dataset.h"
#include "framework/safetensors.h"
#include "models/translator.h"
#include "train/run/training_run.h"

namespace qkv::app {

std::string exact(double v);  // a hex float: round-trips exactly
// A value from a saved state, shown in a message: at most 40 bytes of it.
std::string shown(const std::string& text);
// A number exactly as exact() writes it, finite and within [low, high]; names `what` when it throws.
double parse_exact(const std::string& text, const std::string& what, double low, double high);

// A state's options (state_options.cpp) read back over `current`, which keeps out_dir, threads, quiet
// and the flags of this invocation; every option checked as the command line checks it.
TrainOptions options_from_json(const std::string& text, const TrainOptions& current);

// The table's fields of `st` into the state's metadata (save_state adds the others).
void write_state_fields(const RunState& st, SafeTensorsFile& file);
// The metadata of a saved state as a RunState, each field checked for type, range and agreement
// with the others and with the run (o, ds, config), before anything is sized or copied from it.
RunState validated_fields(const SafeTensorsFile& file, const TrainOptions& o, const data::Dataset& ds,
                          const models::TranslatorConfig& config, int64_t& adam_step);

}  // namespace qkv::app
