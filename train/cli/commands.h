// train/cli/commands.h — registers every `qkv` subcommand on the CLI11 app. Each command's callback
// runs inside the parse call, so exceptions reach main's single error handler.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "models/noisy_channel.h"
#include "train/experiments/explorer/explorer_page.h"
#include "train/run/train_options.h"
#include "train/experiments/common/sentences.h"

namespace qkv::app {

void register_commands(CLI::App& app);
// The --help layout every command shares; set on the app before the commands.
std::shared_ptr<CLI::Formatter> help_formatter();

// One per command, each in the file named for it.
void register_example(CLI::App& app);    // example.cpp
void register_train(CLI::App& app);      // train.cpp
void register_eval(CLI::App& app);       // eval.cpp
void register_translate(CLI::App& app);  // translate.cpp
void register_attend(CLI::App& app);     // attend.cpp: attention maps and knockouts
void register_demo(CLI::App& app);       // demo.cpp: the tutorial's experiment in one command
void register_scaling(CLI::App& app);    // scaling.cpp: the sqrt(d_k) experiment
void register_bench(CLI::App& app);      // bench.cpp: matmul overhead and training throughput
void register_explore(CLI::App& app);    // explore.cpp: the offline explorer page
void register_ablate(CLI::App& app);     // ablate.cpp: the blocks x attention x embeddings grid
void register_cues(CLI::App& app);       // cues.cpp: cue attention and knockout flip rates
void register_probe(CLI::App& app);      // probe.cpp: the sense probe per layer

// Option validators shared by the commands. whole_number(): decimal digits only, with an optional minus
// sign (no 1e3, 2.5, 0x10 or leading spaces; the range check that follows it gives the bounds).
// seed_value(): decimal digits only, at most 2^64 - 1 (no sign, no exponent, no wrap-around).
CLI::Validator whole_number();
CLI::Validator seed_value();
// Range checks that say what they want in words: "must be a whole number from 1 to 16, got '0'",
// "must be > 0, got 0", "must be from 0 to 0.95, got 2". Their help text is empty, so --help
// shows the option's type and default alone (HelpFormatter, commands.cpp).
CLI::Validator whole_number_in(int64_t lo, int64_t hi);
// A finite number within a table row's bounds: "must be > 0, got 0", "must be from 0 to 0.95, got 2"
// (nan and inf are refused first: they pass CLI11's range checks, every comparison with NaN being false).
CLI::Validator number_within(const Bounds& b);
// `cpu`, `cuda` or `cuda:N`, as Device::parse reads it.
CLI::Validator device_name();

// The command-line option of one row of the option table: a choice is given by name, a device as
// Device::parse reads it, a number is checked against the row's bounds (a whole number's help ends
// with them: "stacked attention + feed-forward layers, 1 to 16").
template <class T>
CLI::Option* add_train_option(CLI::App* cmd, const OptionInfo& info, T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return cmd->add_flag(info.flag, value, info.help);
  } else if constexpr (ChoiceOption<T>) {
    return cmd
        ->add_option_function<std::string>(
            info.flag, [&value](const std::string& name) { value = *parse_choice<T>(name); }, info.help)
        ->check(CLI::IsMember(choice_names<T>()))
        ->default_str(Choices<T>::name(value));
  } else if constexpr (std::is_same_v<T, Device>) {
    return cmd
        ->add_option_function<std::string>(
            info.flag, [&value](const std::string& name) { value = Device::parse(name); }, info.help)
        ->check(device_name())
        ->default_str(value.str());
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return cmd->add_option(info.flag, value, info.help)->check(seed_value())->capture_default_str();
  } else if constexpr (std::is_integral_v<T>) {
    const auto low = static_cast<int64_t>(info.bounds.low), high = static_cast<int64_t>(info.bounds.high);
    return cmd->add_option(info.flag, value, fmt::format("{}, {} to {}", info.help, low, high))
        ->check(whole_number_in(low, high))
        ->capture_default_str();
  } else if constexpr (std::is_floating_point_v<T>) {
    return cmd->add_option(info.flag, value, info.help)->check(number_within(info.bounds))->capture_default_str();
  } else {
    return cmd->add_option(info.flag, value, info.help)->capture_default_str();
  }
}

// An option of another command from its row of the option table (train/run/train_options.h): the
// row's flag, check and help, so each shared option is declared once. `help`, when given, says
// what the value means to this command instead of the row's words.
template <class T>
CLI::Option* add_option_of_row(CLI::App* cmd, T TrainOptions::*member, T& value, const std::string& help = "") {
  CLI::Option* option = nullptr;
  for_each_option([&](const OptionInfo& info, auto row_member) {
    if constexpr (std::is_same_v<decltype(row_member), T TrainOptions::*>) {
      if (row_member != member) return;
      OptionInfo row = info;
      if (!help.empty()) row.help = help.c_str();
      option = add_train_option(cmd, row, value);
    }
  });
  if (option == nullptr) throw std::logic_error("add_option_of_row: the member has no row in the option table");
  return option;
}
// The options several commands share, each one row: --data and --seed (train's rows), --device
// (train's row, kept as text for commands that parse it when they load a model) and --checkpoint.
CLI::Option* add_data_option(CLI::App* cmd, std::string& dir, const std::string& help = "");
CLI::Option* add_seed_option(CLI::App* cmd, uint64_t& seed, const std::string& help);
CLI::Option* add_device_option(CLI::App* cmd, std::string& device);
CLI::Option* add_checkpoint_option(CLI::App* cmd, std::string& path);  // required

// --threads on a command: CPU threads for gemm and the loops, 0 (the default) meaning QKV_THREADS
// when it is set, else one per core. apply_threads sets the count before the command's work, so a
// bad QKV_THREADS fails at once with one line.
CLI::Option* add_threads_option(CLI::App* cmd, int& threads);
void apply_threads(int threads);
// --max-length on a command that decodes: the most Hindi words a sentence may get, 1 to
// Translator::kMaxDecodeLength (left out: 0, the model's own limit, Translator::decode_limit).
CLI::Option* add_max_length_option(CLI::App* cmd, int64_t& max_length);
// How translate and eval decode: reranked by channel models (models/noisy_channel.h), --channel's or
// the channel.safetensors and channel_right_to_left.safetensors beside the checkpoint, unless --greedy.
struct ChannelChoice {
  std::vector<std::string> paths, right_to_left, ensemble;
  int64_t beam = models::Channel::kDefaultBeam;
  bool greedy = false;
};
void add_channel_options(CLI::App* cmd, ChannelChoice& choice);
// The channel the choice names, loaded and checked against `forward`, or none (greedy decoding); one
// found beside the checkpoint is said on stderr.
std::optional<models::Channel> open_channel(const ChannelChoice& choice, const std::string& checkpoint,
                                            const models::LoadedTranslator& forward, Device device);

}  // namespace qkv::app
