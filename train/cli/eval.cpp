// train/cli/eval.cpp — `qkv eval`: a checkpoint's loss, token accuracy and greedy exact match on each split.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/translator_io.h"
#include "train/cli/commands.h"
#include "train/run/evaluate.h"

namespace qkv::app {

// One split's figures as `qkv eval --format json` prints them.
static nlohmann::ordered_json json_row(const std::string& name, const EvalResult& r, double per_second) {
  nlohmann::ordered_json row;
  row["split"] = name;
  row["sentences"] = r.sentences;
  row["tokens"] = r.tokens;
  row["loss"] = r.loss;
  row["token_accuracy"] = r.token_accuracy;
  row["exact_match"] = r.exact_match;
  row["sentences_per_second"] = per_second;
  row["skipped"] = r.skipped;
  row["stopped_early"] = r.stopped_early;
  row["stopped_late"] = r.stopped_late;
  row["cut_at_limit"] = r.cut_at_limit;
  return row;
}

// qkv eval: one row (or JSON object) per split of a checkpoint's loss, accuracy and exact match.
void register_eval(CLI::App& app) {
  auto checkpoint = std::make_shared<std::string>();
  auto split = std::make_shared<std::string>("all");
  auto data_dir = std::make_shared<std::string>("data/idioms");
  auto device = std::make_shared<std::string>("cpu");
  auto* eval = app.add_subcommand("eval", "report loss, token accuracy and greedy exact-match");
  add_checkpoint_option(eval, *checkpoint);
  eval->add_option("--split", *split,
                   "a split of --data by name (NAME reads DIR/NAME.tsv), a path to a .tsv file, or all (every .tsv "
                   "in --data except train)")
      ->capture_default_str();
  add_data_option(eval, *data_dir);
  add_device_option(eval, *device);
  auto eval_format = std::make_shared<std::string>("text");
  eval->add_option("--format", *eval_format, "text (an aligned table) | json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  auto eval_threads = std::make_shared<int>(0);
  add_threads_option(eval, *eval_threads);
  auto no_cache = std::make_shared<bool>(false);
  eval->add_flag("--no-cache", *no_cache,
                 "decode by recomputing the whole prefix at every step instead of caching keys and values "
                 "(the same translations, slower; for comparison)");
  auto max_length = std::make_shared<int64_t>(0);
  add_max_length_option(eval, *max_length);
  auto oracle_length = std::make_shared<bool>(false);
  eval->add_flag("--oracle-length", *oracle_length,
                 "decode each sentence to exactly its reference's length, <eos> never chosen before it (Newman et "
                 "al., 2020: separates when to stop from what to write)");
  eval->callback([checkpoint, split, data_dir, device, no_cache, eval_format, eval_threads, max_length, oracle_length] {
    apply_threads(*eval_threads);
    const Device dev = Device::parse(*device);
    models::LoadedTranslator loaded = models::load_translator(*checkpoint, dev);
    models::ForwardOptions decoding;
    decoding.recompute_prefix = *no_cache;
    decoding.max_length = *max_length;
    loaded.model->decode_limit(1, *max_length);  // a --max-length past the model's layout fails before any work
    // "all": every split file but train (80,000 greedy decodes take minutes; ask for it by name).
    // Every split is read before any work, so a missing or malformed file fails first.
    const std::vector<std::string> names =
        *split == "all" ? data::evaluation_split_names(*data_dir) : std::vector<std::string>{*split};
    std::vector<data::NamedSplit> splits;
    for (const auto& name : names) splits.push_back(data::read_split(*data_dir, name));
    // One aligned row per split; exact match is greedy decoding of the whole sentence.
    const bool json = *eval_format == "json";
    nlohmann::ordered_json report;
    report["checkpoint"] = *checkpoint;
    report["data"] = *data_dir;
    report["splits"] = nlohmann::ordered_json::array();
    if (!json)
      fmt::print("{:<14} {:>9} {:>8} {:>8} {:>10} {:>12} {:>11} {:>14}\n", "split", "sentences", "tokens", "loss",
                 "token acc", "exact match", "early/late", "decoded/s");
    std::vector<std::string> notes;  // the sentences a model tied to its layout skipped, said after the table
    for (const auto& [name, pairs] : splits) {
      const EvalResult r = evaluate(*loaded.model, pairs, loaded.english, loaded.hindi, 256, decoding, *oracle_length);
      if (r.skipped > 0) notes.push_back(skipped_note(name, r.skipped, loaded.model->config()));
      if (r.cut_at_limit > 0)
        notes.push_back(fmt::format("{}: {} translation{} reached the decode limit without ending and {} cut there{}",
                                    name, r.cut_at_limit, r.cut_at_limit == 1 ? "" : "s",
                                    r.cut_at_limit == 1 ? "was" : "were",
                                    loaded.model->reads_longer() ? " (--max-length raises it)" : ""));

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
  });
}

}  // namespace qkv::app
