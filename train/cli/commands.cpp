// train/cli/commands.cpp — what every command shares: the option validators, the options of the
// option table's rows, --threads and --out, the list of commands, and how `qkv COMMAND --help` lists
// an option: `--layers N  stacked blocks, 1 to 16 [5]`, a short type (N, X, TEXT or the choices) and
// the default in brackets at the end.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <type_traits>

#include "framework/backend.h"
#include "framework/text_util.h"
#include "models/noisy_channel.h"
#include "train/cli/commands.h"

namespace qkv::app {

namespace {

class HelpFormatter : public CLI::Formatter {
 public:
  // " N", " X", " TEXT" or " {learned,static,none}"; " ..." after an option that takes a list.
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    if (opt->get_type_size() == 0 || opt->get_type_name().empty()) return "";  // a flag
    std::string out = " " + short_type(opt->get_type_name());
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
    if (opt->get_required()) out += " (required)";
    return out;
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    if (opt->get_type_size() != 0 && !opt->get_default_str().empty()) desc += " [" + opt->get_default_str() + "]";
    return desc;
  }

 private:
  // CLI11's type names are "INT", "FLOAT", "TEXT", "UINT", each followed by its validators'
  // descriptions after colons; the choices of a set ("{a,b}") say the most, the base type the rest.
  static std::string short_type(const std::string& full) {
    std::string base;
    for (const std::string& part : split(full, ':')) {
      if (!part.empty() && part.front() == '{') return part;
      if (base.empty()) base = part;
    }
    if (base == "INT" || base == "UINT") return "N";
    if (base == "FLOAT") return "X";
    return base.empty() ? "VALUE" : base;
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() { return std::make_shared<HelpFormatter>(); }

CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const size_t start = !text.empty() && text[0] == '-' ? 1 : 0;
        const bool digits = text.size() > start && text.size() <= 19 &&
                            std::all_of(text.begin() + start, text.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!digits) return "must be a whole number in decimal digits, got '" + text + "'";
        return {};
      },
      "INT");
}

CLI::Validator whole_number_in(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        const std::string problem = whole_number()(text);
        if (!problem.empty()) return problem;  // not decimal digits: says so
        errno = 0;
        const long long value = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE || value < lo || value > hi)
          return fmt::format("must be a whole number from {} to {}, got '{}'", lo, hi, text);
        return {};
      },
      "");
}

CLI::Validator number_within(const Bounds& b) {
  return CLI::Validator(
      [b, what = bounds_text(b, false)](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || errno == ERANGE)
          return "must be a finite number, got '" + text + "'";
        if (!b.holds(value)) return fmt::format("must be {}, got {}", what, text);
        return {};
      },
      "");
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 20 &&
                            std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
        errno = 0;
        if (digits) std::strtoull(text.c_str(), nullptr, 10);
        if (!digits || errno == ERANGE)
          return "must be a whole number from 0 to 18446744073709551615, got '" + text + "'";
        return {};
      },
      "SEED");
}

CLI::Validator device_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          Device::parse(text);
          return {};
        } catch (const std::exception& e) { return e.what(); }
      },
      "");
}

// Every command's --threads is qkv train's row of the option table.
CLI::Option* add_threads_option(CLI::App* cmd, int& threads) {
  return add_option_of_row(cmd, &TrainOptions::threads, threads);
}

CLI::Option* add_max_length_option(CLI::App* cmd, int64_t& max_length) {
  return cmd
      ->add_option("--max-length", max_length,
                   "the most Hindi words a sentence may get, 1 to 1024 (left out: 2 x its English words + 10 for a "
                   "rotary or alibi model, the layout's for one with a position embedding)")
      ->check(whole_number_in(1, models::Translator::kMaxDecodeLength));
}

void add_channel_options(CLI::App* cmd, ChannelChoice& choice) {
  auto* path = cmd->add_option("--channel", choice.paths,
                               "a model trained the other way round on the same data (qkv train --reverse): each "
                               "sentence is decoded by beam search and the candidate that best gives its English "
                               "back is kept (noisy-channel reranking; slower); may be given more than once (one "
                               "trained --reverse --right-to-left, another seed's), each one scores; left out: "
                               "channel.safetensors and channel_right_to_left.safetensors beside the checkpoint, "
                               "those there are")
                   ->allow_extra_args(false);
  auto* beam = cmd->add_option("--beam", choice.beam, "with a channel: hypotheses kept at each step, 1 to 64")
                   ->check(whole_number_in(1, models::Channel::kMaxBeam))
                   ->capture_default_str();
  auto* right_to_left = cmd->add_option("--right-to-left", choice.right_to_left,
                                        "with a channel: a model trained --right-to-left on the same data, whose "
                                        "beam's candidates and scores join the rerank (may be given more than once); "
                                        "left out: right_to_left.safetensors beside the checkpoint, when there is one")
                            ->allow_extra_args(false);
  auto* ensemble = cmd->add_option("--ensemble", choice.ensemble,
                                   "with a channel: another left-to-right model trained on the same data (another "
                                   "seed), whose beam's candidates and scores join the rerank, as --right-to-left's "
                                   "(may be given more than once)")
                       ->allow_extra_args(false);
  cmd->add_flag("--greedy", choice.greedy, "decode greedily, without the models beside the checkpoint")
      ->excludes(path)
      ->excludes(beam)
      ->excludes(right_to_left)
      ->excludes(ensemble);
}

std::optional<models::Channel> open_channel(const ChannelChoice& choice, const std::string& checkpoint,
                                            const models::LoadedTranslator& forward, Device device) {
  // Models named on the command line, else the files beside the checkpoint (each said on stderr), else none.
  using Files = std::initializer_list<std::pair<const char*, const char*>>;  // file name, what it holds
  const auto named_or_beside = [&](const std::vector<std::string>& named, Files files) {
    if (!named.empty() || choice.greedy) return named;
    std::vector<std::string> found;
    for (const auto& [file, what] : files) {
      const std::filesystem::path path = std::filesystem::path(checkpoint).parent_path() / file;
      if (!std::filesystem::is_regular_file(path)) continue;
      fmt::print(stderr, "note: reranking with {}, the {} model beside the checkpoint (--greedy: without it)\n",
                 path.string(), what);
      found.push_back(path.string());
    }
    return found;
  };
  const std::vector<std::string> paths = named_or_beside(
      choice.paths,
      {{"channel.safetensors", "channel"}, {"channel_right_to_left.safetensors", "right-to-left channel"}});
  if (paths.empty()) {
    if (!choice.right_to_left.empty() || !choice.ensemble.empty())
      throw std::runtime_error("--right-to-left and --ensemble join a channel's rerank: give --channel too");
    return std::nullopt;
  }
  models::Channel channel = models::load_channel(paths, forward, choice.beam, device);
  for (const std::string& path :
       named_or_beside(choice.right_to_left, {{"right_to_left.safetensors", "right-to-left"}}))
    models::load_writer(channel, path, forward, true, device);
  for (const std::string& path : choice.ensemble) models::load_writer(channel, path, forward, false, device);
  return channel;
}

CLI::Option* add_data_option(CLI::App* cmd, std::string& dir, const std::string& help) {
  return add_option_of_row(cmd, &TrainOptions::data_dir, dir, help.empty() ? "dataset directory" : help);
}

CLI::Option* add_seed_option(CLI::App* cmd, uint64_t& seed, const std::string& help) {
  return add_option_of_row(cmd, &TrainOptions::seed, seed, help);
}

CLI::Option* add_device_option(CLI::App* cmd, std::string& device) {
  CLI::Option* option = nullptr;
  for_each_option([&](const OptionInfo& info, auto member) {
    if constexpr (std::is_same_v<decltype(member), Device TrainOptions::*>)
      if (member == &TrainOptions::device)
        option = cmd->add_option(info.flag, device, info.help)->check(device_name())->capture_default_str();
  });
  return option;
}

CLI::Option* add_checkpoint_option(CLI::App* cmd, std::string& path) {
  return cmd->add_option("--checkpoint", path, "model.safetensors written by qkv train")->required();
}

void apply_threads(int threads) { set_cpu_threads(threads); }

void register_commands(CLI::App& app) {
  register_example(app);
  register_train(app);
  register_eval(app);
  register_translate(app);
  register_attend(app);
  register_demo(app);
  register_scaling(app);
  register_bench(app);
  register_explore(app);
  register_ablate(app);
  register_cues(app);
  register_probe(app);
}

}  // namespace qkv::app
