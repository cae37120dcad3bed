// train/cli/commands.cpp — the `example`, `train`, `eval` and `translate` commands.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>
#include <iostream>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <type_traits>

#include "train/cli/commands.h"
#include "framework/distributed.h"
#include "framework/text_util.h"

#include "data/dataset.h"
#include "framework/backend.h"
#include "models/seed_example.h"
#include "models/translator_io.h"
#include "train/run/trainer.h"

namespace qkv::app {


// Prints a (rows, cols) tensor as a labelled table, the way the seed lays its tables out.
static void print_table(const std::string& title, const Tensor& t, const std::vector<std::string>& rows,
                        const std::vector<std::string>& cols, int decimals) {
  fmt::print("{}\n", title);
  const std::vector<double> v = t.to_vector();
  const int64_t n_cols = t.size(1);
  fmt::print("{:>8}", "");
  for (const auto& c : cols) fmt::print("  {:>7}", c);
  fmt::print("\n");
  for (size_t r = 0; r < rows.size(); ++r) {
    fmt::print("{:>8}  [", rows[r]);
    for (int64_t c = 0; c < n_cols; ++c) fmt::print("{}{:>7.{}f}", c ? "  " : "", v[r * n_cols + c], decimals);
    fmt::print(" ]\n");
  }
  fmt::print("\n");
}

void register_example(CLI::App& app) {
  auto* cmd = app.add_subcommand("example", "compute the seed's running example (money bank grows) with qkv ops");
  auto threads = std::make_shared<int>(0);
  add_threads_option(cmd, *threads);
  cmd->callback([threads] {
    apply_threads(*threads);
    const models::SeedExample ex = models::run_seed_example();
    const std::vector<std::string> dims = {"d0", "d1", "d2", "d3"};
    print_table("Static embeddings E (T=3, d=4):", ex.E, ex.tokens, dims, 0);
    print_table("Step 1: scores S = E E^T", ex.S, ex.tokens, ex.tokens, 0);
    print_table("Step 2: scaled S / sqrt(4)", ex.S_scaled, ex.tokens, ex.tokens, 1);
    print_table("Step 3: weights W = softmax(S / sqrt(4)) by row", ex.W, ex.tokens, ex.tokens, 4);
    std::vector<std::string> ys;
    for (const auto& t : ex.tokens) ys.push_back("y_" + t);
    print_table("Step 4: contextual embeddings Y = W E", ex.Y, ys, dims, 4);
    fmt::print("cos(bank, money): {:.4f} -> {:.4f}   (static -> after self-attention)\n", ex.cos_before, ex.cos_after);
  });
}


// Batch translation: one sentence per line from `path` (stdin when empty), english<TAB>hindi per
// line on stdout in input order, decoded in batches. Blank lines are passed over. A bad line (not
// UTF-8, too long) is reported with its line number on stderr and skipped; returns false if any was.
static bool translate_lines(models::Translator& model, const models::LoadedTranslator& loaded, const std::string& path) {
  std::ifstream file;
  if (!path.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw std::runtime_error(fmt::format("{}: not a readable regular file", path));
    file.open(path, std::ios::binary);
    if (!file) throw std::runtime_error(fmt::format("{}: cannot open file", path));
  }
  std::istream& in = path.empty() ? std::cin : file;
  const std::string name = path.empty() ? "stdin" : path;
  // a model tied to its layout reads at most its source positions; a rotary one any sentence
  const int64_t max_words = model.reads_longer() ? data::kMaxSentenceWords : model.config().layout.max_source;
  constexpr size_t kBatch = 256;
  bool all_ok = true, noted = false;
  int64_t line_no = 0, translated = 0;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> lines;
  std::vector<std::vector<std::string>> batch;
  const auto flush = [&] {
    if (batch.empty()) return;
    const auto out = model.translate(batch, loaded.english, loaded.hindi);
    for (size_t i = 0; i < batch.size(); ++i) {
      std::string hindi;
      for (const auto& w : out[i]) hindi += (hindi.empty() ? "" : " ") + w;
      fmt::print("{}\t{}\n", lines[i], hindi);
    }
    std::fflush(stdout);
    translated += static_cast<int64_t>(batch.size());
    batch.clear();
    lines.clear();
  };
  std::string line;
  while (read_bounded_line(in, line, fmt::format("{}:{}", name, line_no + 1))) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = fmt::format("{}:{}", name, line_no);
    if (!data::valid_utf8(line)) {
      fmt::print(stderr, "{}: skipped: not valid UTF-8\n", where);
      all_ok = false;
      continue;
    }
    const std::vector<std::string> typed = data::tokenize(line);
    const std::vector<std::string> words = data::normalize_english(typed);
    if (words.empty()) continue;  // blank lines separate nothing and translate to nothing
    if (words != typed && !noted) {  // said once: the first line that changed
      fmt::print(stderr, "{}: note: read as '{}' (lower case, sentence punctuation dropped; likewise for later lines)\n",
                 where, join(words, " "));
      noted = true;
    }
    if (static_cast<int64_t>(words.size()) > max_words) {
      fmt::print(stderr, "{}: skipped: {} words; this model reads at most {}\n", where, words.size(), max_words);
      all_ok = false;
      continue;
    }
    const std::string unknown = unknown_words(words, loaded.english);
    if (!unknown.empty()) fmt::print(stderr, "{}: warning: unknown words mapped to <unk>: {}\n", where, unknown);
    if (every_word_unknown(words, loaded.english))
      fmt::print(stderr, "{}: warning: {}\n", where, kMeaninglessTranslation);
    lines.push_back(join(words, " "));
    batch.push_back(words);
    if (batch.size() == kBatch) flush();
  }
  flush();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (translated > 0)
    fmt::print(stderr, "translated {} sentence{} in {:.2f}s ({:.0f} sentences/s)\n", translated,
               translated == 1 ? "" : "s", seconds, translated / std::max(seconds, 1e-9));
  return all_ok;
}

// A finite number within a table row's bounds: "must be > 0, got 0", "must be from 0 to 0.95, got 2".
static CLI::Validator number_within(const Bounds& b);

// `cpu`, `cuda` or `cuda:N`, as Device::parse reads it.
static CLI::Validator device_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          Device::parse(text);
          return {};
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      "");
}

// The command-line option of one row of the option table: a choice is given by name, a device as
// Device::parse reads it, a number is checked against the row's bounds (a whole number's help ends
// with them: "stacked attention + feed-forward layers, 1 to 16").
template <class T>
static CLI::Option* add_train_option(CLI::App* cmd, const OptionInfo& info, T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return cmd->add_flag(info.flag, value, info.help);
  } else if constexpr (ChoiceOption<T>) {
    return cmd->add_option_function<std::string>(
                  info.flag, [&value](const std::string& name) { value = *parse_choice<T>(name); }, info.help)
        ->check(CLI::IsMember(choice_names<T>()))
        ->default_str(Choices<T>::name(value));
  } else if constexpr (std::is_same_v<T, Device>) {
    return cmd->add_option_function<std::string>(
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

// qkv train: every option of the table (train_options.h), checked here and again (with the data)
// by train_translator.
static void register_train(CLI::App& app) {
  auto opts = std::make_shared<TrainOptions>();
  auto* train = app.add_subcommand("train", "train the self-attention translator");
  for_each_option([&](const OptionInfo& info, auto member) {
    if (info.kind == OptionKind::Internal) return;
    CLI::Option* option = add_train_option(train, info, (*opts).*member);
    if (info.kind == OptionKind::Testing) option->group("");  // hidden
  });
  train->callback([opts, train] {
    if (opts->resume)  // the saved state decides every setting of the run
      for_each_option([&](const OptionInfo& info, auto) {
        if (info.saved() && train->count(info.flag) > 0)
          throw std::runtime_error(fmt::format("--resume takes every setting from the saved run; drop {}", info.flag));
      });
    // mpirun without --data-parallel would run N identical trainings into one --out
    const int launched = dist::launched_process_count();
    if (launched > 1 && !opts->data_parallel)
      throw std::runtime_error(fmt::format(
          "mpirun started {} copies of qkv train without --data-parallel, and each would train the same model into {}; "
          "add --data-parallel (mpirun -np {} qkv train --data-parallel ...), or run qkv train without mpirun",
          launched, opts->out_dir, launched));
    if (opts->data_parallel && launched == 1 && dist::built_with_mpi())
      fmt::print(stderr, "note: --data-parallel with 1 rank (not launched by mpirun: mpirun -np N qkv train --data-parallel ...)\n");
    apply_threads(opts->threads);
    install_interrupt_handlers();
    train_translator(*opts);
  });
}

// qkv eval: one row (or JSON object) per split of a checkpoint's loss, accuracy and exact match.
static void register_eval(CLI::App& app) {
  auto checkpoint = std::make_shared<std::string>();
  auto split = std::make_shared<std::string>("all");
  auto data_dir = std::make_shared<std::string>("data/idioms");
  auto device = std::make_shared<std::string>("cpu");
  auto* eval = app.add_subcommand("eval", "report loss, token accuracy and greedy exact-match");
  eval->add_option("--checkpoint", *checkpoint, "model.safetensors written by qkv train")->required();
  eval->add_option("--split", *split,
                   "a split of --data by name (NAME reads DIR/NAME.tsv), a path to a .tsv file, or all (every .tsv "
                   "in --data except train)")
      ->capture_default_str();
  eval->add_option("--data", *data_dir, "dataset directory")->capture_default_str();
  eval->add_option("--device", *device, "cpu | cuda | cuda:N")->capture_default_str();
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
  eval->callback([checkpoint, split, data_dir, device, no_cache, eval_format, eval_threads] {
    apply_threads(*eval_threads);
    const Device dev = Device::parse(*device);
    models::LoadedTranslator loaded = models::load_translator(*checkpoint, dev);
    loaded.model->set_decode_cache(!*no_cache);
    // "all": every split file but train (60,000 greedy decodes take minutes; ask for it by name).
    // Every split is read before any work, so a missing or malformed file fails first.
    const std::vector<std::string> names = *split == "all" ? data::evaluation_split_names(*data_dir)
                                                           : std::vector<std::string>{*split};
    std::vector<data::NamedSplit> splits;
    for (const auto& name : names) splits.push_back(data::read_split(*data_dir, name));
    // One aligned row per split; exact match is greedy decoding of the whole sentence.
    const bool json = *eval_format == "json";
    nlohmann::ordered_json report;
    report["checkpoint"] = *checkpoint;
    report["data"] = *data_dir;
    report["splits"] = nlohmann::ordered_json::array();
    if (!json)
      fmt::print("{:<14} {:>9} {:>8} {:>8} {:>10} {:>12} {:>14}\n", "split", "sentences", "tokens", "loss", "token acc",
                 "exact match", "decoded/s");
    std::vector<std::string> notes;  // the sentences a model tied to its layout skipped, said after the table
    for (const auto& [name, pairs] : splits) {
      const EvalResult r = evaluate(*loaded.model, pairs, loaded.english, loaded.hindi);
      if (r.skipped > 0) notes.push_back(skipped_note(name, r.skipped, loaded.model->config()));
      const double per_second = r.decode_seconds > 0 ? static_cast<double>(r.sentences) / r.decode_seconds : 0.0;
      if (json) {
        nlohmann::ordered_json row;
        row["split"] = name;
        row["sentences"] = r.sentences;
        row["tokens"] = r.tokens;
        row["loss"] = r.loss;
        row["token_accuracy"] = r.token_accuracy;
        row["exact_match"] = r.exact_match;
        row["sentences_per_second"] = per_second;
        row["skipped"] = r.skipped;
        report["splits"].push_back(row);
        continue;
      }
      if (r.sentences == 0)  // every sentence skipped (or an empty file): no figure to show
        fmt::print("{:<14} {:>9} {:>8} {:>8} {:>10} {:>12} {:>14}\n", name, 0, 0, "-", "-", "-", "-");
      else
        fmt::print("{:<14} {:>9} {:>8} {:>8.4f} {:>9.2f}% {:>11.2f}% {:>14.0f}\n", name, r.sentences, r.tokens, r.loss,
                   100 * r.token_accuracy, 100 * r.exact_match, per_second);
      std::fflush(stdout);
    }
    if (json) fmt::print("{}\n", report.dump(2));
    for (const auto& note : notes) fmt::print(stderr, "{}\n", note);
  });
}

// qkv translate: one sentence from the command line, or one per line from stdin or --input.
static void register_translate(CLI::App& app) {
  auto sentence_parts = std::make_shared<std::vector<std::string>>();
  auto translate_checkpoint = std::make_shared<std::string>();
  auto translate_device = std::make_shared<std::string>("cpu");
  auto input = std::make_shared<std::string>();
  auto* translate = app.add_subcommand(
      "translate", "translate an English sentence greedily; with no sentence (or -), one per line from stdin");
  translate->add_option("--checkpoint", *translate_checkpoint, "model.safetensors")->required();
  translate->add_option("--device", *translate_device, "cpu | cuda | cuda:N")->capture_default_str();
  translate->add_option("--input", *input, "read sentences from this file, one per line (english<TAB>hindi lines out)");
  translate->add_option("sentence", *sentence_parts,
                        "the English sentence, quoted or not (lower-cased, punctuation dropped); - or none: read stdin");
  auto translate_threads = std::make_shared<int>(0);
  add_threads_option(translate, *translate_threads);
  translate->callback([sentence_parts, translate_checkpoint, translate_device, input, translate_threads] {
    apply_threads(*translate_threads);
    const std::string sentence = join(*sentence_parts, " ");
    if (!sentence_parts->empty() && data::tokenize(sentence).empty())
      throw std::runtime_error("the sentence is empty (give words, or - to read stdin)");
    if (!input->empty() && !sentence.empty())
      throw std::runtime_error("give either a sentence or --input FILE, not both");
    models::LoadedTranslator loaded = models::load_translator(*translate_checkpoint, Device::parse(*translate_device));
    if (sentence.empty() || sentence == "-" || !input->empty()) {
      if (input->empty() && ::isatty(STDIN_FILENO))
        fmt::print(stderr, "reading sentences from stdin, one per line; Ctrl-D ends\n");
      if (!translate_lines(*loaded.model, loaded, *input)) throw std::runtime_error("some lines could not be translated (see above)");
      return;
    }
    const std::vector<std::string> words = sentence_words(sentence);
    check_sentence(words, *loaded.model, loaded.english);
    const auto out = loaded.model->translate({words}, loaded.english, loaded.hindi);
    fmt::print("{}\n", join(out[0], " "));
  });
}

void register_translator(CLI::App& app) {
  register_train(app);
  register_eval(app);
  register_translate(app);
}

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || errno == ERANGE)
          return "must be a finite number, got '" + text + "'";
        return {};
      },
      "FINITE");
}

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

// A finite number with a bound or two; `what` is how the bound reads ("> 0", "from 0 to 0.95").
static CLI::Validator number_where(std::function<bool(double)> ok, std::string what) {
  return CLI::Validator(
      [ok, what](std::string& text) -> std::string {
        const std::string problem = finite_number()(text);
        if (!problem.empty()) return problem;
        const double value = std::strtod(text.c_str(), nullptr);
        if (!ok(value)) return fmt::format("must be {}, got {}", what, text);
        return {};
      },
      "");
}
static CLI::Validator number_within(const Bounds& b) {
  return number_where([b](double v) { return b.holds(v); }, bounds_text(b, false));
}
CLI::Validator number_above(double lo) { return number_within(above(lo)); }
CLI::Validator number_at_least(double lo) { return number_within(at_least(lo)); }
CLI::Validator number_in(double lo, double hi) { return number_within(from_to(lo, hi)); }

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

// Every command's --threads is qkv train's row of the option table.
CLI::Option* add_threads_option(CLI::App* cmd, int& threads) {
  CLI::Option* option = nullptr;
  for_each_option([&](const OptionInfo& info, auto member) {
    if constexpr (std::is_same_v<decltype(member), int TrainOptions::*>)
      if (member == &TrainOptions::threads) option = add_train_option(cmd, info, threads);
  });
  return option;
}

void apply_threads(int threads) { set_cpu_threads(threads); }

void create_out_folder(const std::string& out) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec || !std::filesystem::is_directory(out))
    throw std::runtime_error(
        fmt::format("--out {}: cannot create that folder ({})", out, ec ? ec.message() : "a file is in the way"));
}

void register_commands(CLI::App& app) {
  register_example(app);
  register_translator(app);
  register_inspection(app);
  register_demo(app);
  register_scaling(app);
  register_bench(app);
  register_explore(app);
  register_ablate(app);
  register_cues(app);
  register_probe(app);
}

}  // namespace qkv::app
