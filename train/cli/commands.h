// train/cli/commands.h — registers every `qkv` subcommand on the CLI11 app. Each command's callback
// runs inside the parse call, so exceptions reach main's single error handler.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "train/experiments/explorer_page.h"
#include "train/experiments/sentences.h"

namespace qkv::app {

void register_commands(CLI::App& app);
// The --help layout every command shares (help_format.cpp); set on the app before the commands.
std::shared_ptr<CLI::Formatter> help_formatter();

// Individual groups, each in its own file.
void register_example(CLI::App& app);      // commands.cpp
void register_translator(CLI::App& app);   // commands.cpp: train, eval, translate
void register_inspection(CLI::App& app);   // attend.cpp: attend
void register_demo(CLI::App& app);         // demo.cpp: the seed's experiment in one command
void register_scaling(CLI::App& app);      // scaling.cpp: the sqrt(d_k) experiment
void register_bench(CLI::App& app);        // bench.cpp: matmul overhead and training throughput
void register_explore(CLI::App& app);      // explore.cpp: the offline explorer page
void register_ablate(CLI::App& app);       // ablate.cpp: the blocks x attention x embeddings grid
void register_cues(CLI::App& app);         // cues.cpp: cue attention and knockout flip rates
void register_probe(CLI::App& app);        // probe.cpp: the sense probe per layer

// Option validators shared by the commands. finite_number(): the text parses as a finite number
// (rejects nan and inf, which pass CLI11's range checks because every comparison with NaN is false).
// seed_value(): decimal digits only, at most 2^64 - 1 (no sign, no exponent, no wrap-around).
CLI::Validator finite_number();
// Decimal digits only, with an optional minus sign (no 1e3, 2.5, 0x10 or leading spaces); the
// range check that follows it gives the bounds.
CLI::Validator whole_number();
CLI::Validator seed_value();
// Range checks that say what they want in words: "must be a whole number from 1 to 16, got '0'",
// "must be > 0, got 0", "must be from 0 to 0.95, got 2". Their help text is empty, so --help
// shows the option's type and default alone (help_format.cpp).
CLI::Validator whole_number_in(int64_t lo, int64_t hi);
CLI::Validator number_above(double lo);     // finite and > lo
CLI::Validator number_at_least(double lo);  // finite and >= lo
CLI::Validator number_in(double lo, double hi);

// --threads on a command: CPU threads for gemm and the loops, 0 (the default) meaning QKV_THREADS
// when it is set, else one per core. apply_threads sets the count before the command's work, so a
// bad QKV_THREADS fails at once with one line.
CLI::Option* add_threads_option(CLI::App* cmd, int& threads);
void apply_threads(int threads);

// Creates the --out folder `out` (and its parents), or throws "--out OUT: cannot create that folder
// (why)": for commands that make their folder before any work, so that a bad --out fails at once.
void create_out_folder(const std::string& out);

}  // namespace qkv::app
