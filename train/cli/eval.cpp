// train/cli/eval.cpp — `qkv eval`: a checkpoint's loss, token accuracy and greedy exact match on each split.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/noisy_channel.h"
#include "models/translator_io.h"
#include "train/cli/commands.h"
#include "train/run/evaluate.h"

namespace qkv::app {

// One split's figures as `qkv eval --format json` prints them.
static nlohmann::ordered_json json_row(const std::string& name, const EvalResult& r, double per_second) {
  return {{"split", name},
          {"sentences", r.sentences},
          {"tokens", r.tokens},
          {"loss", r.loss},
          {"token_accuracy", r.token_accuracy},
          {"exact_match", r.exact_match},
          {"sentences_per_second", per_second},
          {"skipped", r.skipped},
          {"stopped_early", r.stopped_early},
          {"stopped_late", r.stopped_late},
          {"cut_at_limit", r.cut_at_limit},
          {"unreachable", r.unreachable}};
}

struct EvalOptions {
  std::string checkpoint, split = "all", data_dir = "data/idioms", device = "cpu", format = "text";
  int threads = 0;
  bool no_cache = false, oracle_length = false;
  int64_t max_length = 0;
  ChannelChoice channel;
};

static void run_eval(const EvalOptions& o) {
  apply_threads(o.threads);
  const Device dev = Device::parse(o.device);
  models::LoadedTranslator loaded = models::load_translator(o.checkpoint, dev);
  models::ForwardOptions decoding{.recompute_prefix = o.no_cache, .max_length = o.max_length};
  loaded.model->decode_limit(1, o.max_length);  // a --max-length past the model's layout fails before any work
  ChannelChoice choice = o.channel;
  if (o.oracle_length || o.no_cache) {  // both decode greedily: only a channel asked for by name is refused
    if (!choice.paths.empty() || !choice.right_to_left.empty() || !choice.ensemble.empty())
      throw std::runtime_error(
          "--channel, --right-to-left and --ensemble rerank a beam: they take neither --oracle-length nor --no-cache");
    choice.greedy = true;
  }
  const std::optional<models::Channel> channel = open_channel(choice, o.checkpoint, loaded, dev);
  decoding.channel = channel ? &*channel : nullptr;
  // "all": every split file but train (80,000 greedy decodes take minutes; ask for it by name).
  // Every split is read before any work, so a missing or malformed file fails first.
  const std::vector<std::string> names =
      o.split == "all" ? data::evaluation_split_names(o.data_dir) : std::vector<std::string>{o.split};
  std::vector<data::NamedSplit> splits;
  for (const auto& name : names) splits.push_back(data::read_split(o.data_dir, name));
  if (loaded.model->config().right_to_left)  // scored in the order it writes
    for (auto& split : splits) data::turn_targets(split.pairs);
  // One aligned row per split; exact match is greedy decoding of the whole sentence.
  const bool json = o.format == "json";
  nlohmann::ordered_json report = {
      {"checkpoint", o.checkpoint}, {"data", o.data_dir}, {"splits", nlohmann::ordered_json::array()}};
  if (!json)
    fmt::print("{:<14} {:>9} {:>8} {:>8} {:>10} {:>12} {:>11} {:>14}\n", "split", "sentences", "tokens", "loss",
               "token acc", "exact match", "early/late", "decoded/s");
  std::vector<std::string> notes;  // the sentences a model tied to its layout skipped, said after the table
  for (const auto& [name, pairs] : splits) {
    const EvalResult r = evaluate(*loaded.model, pairs, loaded.english, loaded.hindi, 256, decoding, o.oracle_length);
    if (r.skipped > 0) notes.push_back(skipped_note(name, r.skipped, loaded.model->config()));
    if (r.cut_at_limit > 0)
      notes.push_back(fmt::format("{}: {} translation{} reached the decode limit without ending and {} cut there{}",
                                  name, r.cut_at_limit, r.cut_at_limit == 1 ? "" : "s",
                                  r.cut_at_limit == 1 ? "was" : "were",
                                  loaded.model->reads_longer() ? " (--max-length raises it)" : ""));
    if (r.unreachable > 0)
      notes.push_back(fmt::format(
          "{}: {} of {} references hold a Hindi word the model's vocabulary lacks, so no "
          "translation can match them: exact match is at most {:.2f}%",
          name, r.unreachable, r.sentences, 100.0 * static_cast<double>(r.sentences - r.unreachable) / r.sentences));
    const double per_second = r.decode_seconds > 0 ? static_cast<double>(r.sentences) / r.decode_seconds : 0.0;
    if (json) {
      report["splits"].push_back(json_row(name, r, per_second));
      continue;
    }
    if (r.sentences == 0)  // every sentence skipped (or an empty file): no figure to show
      fmt::print("{:<14} {:>9} {:>8} {:>8} {:>10} {:>12} {:>11} {:>14}\n", name, 0, 0, "-", "-", "-", "-", "-");
    else  // early/late: the misses shorter and longer than the reference
      fmt::print("{:<14} {:>9} {:>8} {:>8.4f} {:>9.2f}% {:>11.2f}% {:>11} {:>14.0f}\n", name, r.sentences, r.tokens,
                 r.loss, 100 * r.token_accuracy, 100 * r.exact_match,
                 fmt::format("{}/{}", r.stopped_early, r.stopped_late), per_second);
    std::fflush(stdout);
  }
  if (json) fmt::print("{}\n", report.dump(2));
  for (const auto& note : notes) fmt::print(stderr, "{}\n", note);
}

void register_eval(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  auto* eval = app.add_subcommand(
      "eval", "report loss, token accuracy and exact match (greedy, or reranked by a channel model)");
  add_checkpoint_option(eval, o->checkpoint);
  eval->add_option("--split", o->split,
                   "a split of --data by name (NAME reads DIR/NAME.tsv), a path to a .tsv file, or all (every .tsv "
                   "in --data except train)")
      ->capture_default_str();
  add_data_option(eval, o->data_dir);
  add_device_option(eval, o->device);
  eval->add_option("--format", o->format, "text (an aligned table) | json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_threads_option(eval, o->threads);
  eval->add_flag("--no-cache", o->no_cache,
                 "decode by recomputing the whole prefix at every step instead of caching keys and values "
                 "(the same translations, slower; for comparison)");
  add_max_length_option(eval, o->max_length);
  eval->add_flag("--oracle-length", o->oracle_length,
                 "decode each sentence to exactly its reference's length, <eos> never chosen before it (Newman et "
                 "al., 2020: separates when to stop from what to write)");
  add_channel_options(eval, o->channel);
  eval->callback([o] { run_eval(*o); });
}

}  // namespace qkv::app
