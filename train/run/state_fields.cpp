// train/run/state_fields.cpp — a saved training state's metadata fields as one table, and their
// read-back: every field checked for type, range and agreement with the others and with the run.
#include "train/run/state_fields.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "framework/bounded_json.h"
#include "train/run/run_state.h"

namespace qkv::app {

std::string exact(double v) { return fmt::format("{:a}", v); }  // hex float: round-trips exactly

std::string shown(const std::string& text) {
  return text.size() <= 40 ? "'" + text + "'" : fmt::format("'{}...' ({} bytes)", text.substr(0, 32), text.size());
}

// A number exactly as exact() writes it (so "nan", "1e308", " 0x1p+0" and "0X1P+0" are refused),
// finite and within [low, high].
double parse_exact(const std::string& text, const std::string& what, double low, double high) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || exact(v) != text)
    throw std::runtime_error(
        fmt::format("training state: '{}' is {}, not a number as qkv writes it (a hex float)", what, shown(text)));
  if (!std::isfinite(v) || v < low || v > high)
    throw std::runtime_error(fmt::format("training state: '{}' is {}, outside [{}, {}]", what, v, low, high));
  return v;
}

// An integer exactly as std::to_string writes it, within [low, high].
static int64_t parse_integer(const std::string& text, const std::string& what, int64_t low, int64_t high) {
  int64_t v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size() || std::to_string(v) != text)
    throw std::runtime_error(fmt::format("training state: '{}' is {}, not an integer", what, shown(text)));
  if (v < low || v > high)
    throw std::runtime_error(fmt::format("training state: '{}' is {}, outside [{}, {}]", what, v, low, high));
  return v;
}

// ---- the saved state as one table ----
// Every metadata field of a state but the four whose shape is their own (format, options, config,
// history) and adam_step (the optimiser's): its key, its member of RunState and the range read-back
// takes it from, given the fields before it. save_state writes the table, the field check lists it,
// validated_fields reads it in this order; a new field is one row here.
struct StateLimits {
  int64_t epochs, train_size, steps_per_epoch, batch, max_target;
  int64_t steps_in(int64_t position) const { return (position + batch - 1) / batch; }
};
using Range = std::pair<double, double>;
using FieldMember = std::variant<int64_t RunState::*, double RunState::*, std::string RunState::*>;
struct StateField {
  const char* key;
  FieldMember member;
  Range (*range)(const RunState& r, const StateLimits& l) = nullptr;  // null: text, checked on its own
  bool optional = false;                                              // an older qkv's state lacks it
};
static const StateField kStateTable[] = {
    // epochs + 1: all done, outputs pending
    {"epoch", &RunState::epoch, [](const RunState&, const StateLimits& l) { return Range(1, l.epochs + 1); }},
    {"position", &RunState::position,
     [](const RunState& r, const StateLimits& l) { return Range(0, r.epoch > l.epochs ? 0 : l.train_size); }},
    {"step", &RunState::step,
     [](const RunState&, const StateLimits& l) { return Range(0, l.steps_per_epoch * l.epochs); }},
    {"loss_count", &RunState::loss_count,
     [](const RunState& r, const StateLimits& l) { return Range(l.steps_in(r.position), l.steps_in(r.position)); }},
    // every step sees at least one target token (<eos>) and at most batch * max_target
    {"tokens_seen", &RunState::tokens_seen,
     [](const RunState& r, const StateLimits& l) {
       int64_t most = 0;
       if (__builtin_mul_overflow(r.step, l.batch * l.max_target, &most))
         most = std::numeric_limits<int64_t>::max() / 2;
       return Range(static_cast<double>(r.step), static_cast<double>(most));
     }},
    {"train_seconds", &RunState::train_seconds, [](const RunState&, const StateLimits&) { return Range(0, 1e12); }},
    {"best_epoch", &RunState::best_epoch,
     [](const RunState& r, const StateLimits&) { return Range(r.epoch > 1 ? 1 : 0, r.epoch - 1); }},
    {"best_exact", &RunState::best_exact,
     [](const RunState& r, const StateLimits&) { return r.best_epoch > 0 ? Range(0, 1) : Range(-1, -1); }},
    {"best_loss", &RunState::best_loss,
     [](const RunState& r, const StateLimits&) {
       return Range(0, r.best_epoch > 0 ? std::numeric_limits<double>::max() : 0);
     }},
    {"epoch_rng", &RunState::epoch_rng},
    {"dropout_rng", &RunState::dropout_rng},
    {"metrics_csv", &RunState::csv},
    {"steps_csv", &RunState::steps_csv, nullptr, true},  // without it steps.csv starts afresh
};
// The fields outside the table, every one required.
static const char* const kOtherStateFields[] = {"format", "options", "config", "history", "adam_step"};

// One table field as its state writes it: integers in decimal, reals as exact hex floats, text as it is.
static std::string field_text(const RunState& r, const FieldMember& member) {
  return std::visit(
      [&](auto m) -> std::string {
        using T = std::remove_cvref_t<decltype(r.*m)>;
        if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(r.*m);
        else if constexpr (std::is_same_v<T, double>)
          return exact(r.*m);
        else
          return r.*m;
      },
      member);
}

void write_state_fields(const RunState& st, SafeTensorsFile& file) {
  for (const StateField& f : kStateTable) file.metadata[f.key] = field_text(st, f.member);
}

// The state's history: one [epoch, train loss, valid loss, seconds] per finished epoch, agreeing
// with the fields already read into r (epoch, train_seconds, best_epoch, best_loss).
static void validate_history(const std::string& text, const TrainOptions& o, RunState& r) {
  const nlohmann::json history = [&] {
    try {
      return parse_bounded_json(text, {.max_depth = 2, .max_values = 1 + 5 * static_cast<size_t>(o.epochs)});
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("training state: 'history' {}", e.what()));
    }
  }();
  if (!history.is_array() || static_cast<int64_t>(history.size()) != r.epoch - 1)
    throw std::runtime_error(fmt::format("training state: 'history' must list the {} finished epoch{}", r.epoch - 1,
                                         r.epoch == 2 ? "" : "s"));
  double last_seconds = 0;
  for (const nlohmann::json& e : history) {
    const int64_t epoch = static_cast<int64_t>(r.history.size()) + 1;
    if (!e.is_array() || e.size() != 4 || !e[0].is_number_integer() || e[0].get<int64_t>() != epoch ||
        !e[1].is_string() || !e[2].is_string() || !e[3].is_string())
      throw std::runtime_error(
          fmt::format("training state: 'history' entry {} is not [{}, train loss, valid loss, "
                      "seconds] with the numbers as hex-float strings",
                      epoch, epoch));
    EpochRecord rec;
    rec.epoch = epoch;
    const double most = std::numeric_limits<double>::max();
    rec.train_loss = parse_exact(e[1].get<std::string>(), fmt::format("history[{}] train loss", epoch), 0, most);
    rec.valid.loss = parse_exact(e[2].get<std::string>(), fmt::format("history[{}] valid loss", epoch), 0, most);
    rec.seconds =
        parse_exact(e[3].get<std::string>(), fmt::format("history[{}] seconds", epoch), last_seconds, r.train_seconds);
    last_seconds = rec.seconds;
    r.history.push_back(rec);
  }
  if (r.best_epoch > 0 && r.best_loss != r.history[r.best_epoch - 1].valid.loss)
    throw std::runtime_error(fmt::format("training state: best_loss {} is not the valid loss of its best epoch {} ({})",
                                         r.best_loss, r.best_epoch, r.history[r.best_epoch - 1].valid.loss));
}

// metrics.csv so far (already in r.csv): the header and one line per finished epoch, the best
// epoch's line giving best_exact.
static void validate_metrics_csv(RunState& r) {
  std::vector<std::string> lines;
  for (size_t begin = 0; begin < r.csv.size();) {
    const size_t end = r.csv.find('\n', begin);
    if (end == std::string::npos) throw std::runtime_error("training state: 'metrics_csv' does not end with a newline");
    lines.push_back(r.csv.substr(begin, end - begin));
    begin = end + 1;
  }
  bool csv_ok =
      lines.empty() ? r.history.empty() : lines[0] + "\n" == kMetricsCsvHeader && lines.size() == r.history.size() + 1;
  for (size_t i = 1; csv_ok && i < lines.size(); ++i)
    csv_ok = lines[i].size() < 200 && lines[i].rfind(std::to_string(i) + ",", 0) == 0;
  if (!csv_ok)
    throw std::runtime_error(
        fmt::format("training state: 'metrics_csv' is not the header and one line for each of the {} finished epoch{}",
                    r.history.size(), r.history.size() == 1 ? "" : "s"));
  // the best epoch's exact match, as its metrics.csv line gives it (the fifth column, 6 decimals)
  if (r.best_epoch > 0) {
    const std::string& best_line = lines[static_cast<size_t>(r.best_epoch)];
    size_t column = 0;
    for (int comma = 0; comma < 4 && column != std::string::npos; ++comma) column = best_line.find(',', column + 1);
    const std::string written =
        column == std::string::npos ? "" : best_line.substr(column + 1, best_line.find(',', column + 1) - column - 1);
    if (written != fmt::format("{:.6f}", r.best_exact))
      throw std::runtime_error(fmt::format(
          "training state: best_exact {} is not the valid exact match of its best epoch {} in metrics_csv ({})",
          r.best_exact, r.best_epoch, shown(written)));
  }
}

// steps.csv so far (in r.steps_csv): the header, then one line per logged step, in order, none
// past the state's step, each "step,epoch,loss,lr" with finite numbers.
static void validate_steps_csv(const RunState& r, int64_t total_steps) {
  const std::string& text = r.steps_csv;
  const std::string header = kStepsCsvHeader;
  const auto bad = [](const std::string& why) { return std::runtime_error("training state: 'steps_csv' " + why); };
  if (text.empty()) return;
  if (text.compare(0, header.size(), header) != 0) throw bad("does not start with steps.csv's header");
  const int64_t every = steps_logged_every(total_steps);
  int64_t last = 0, lines = 0;
  for (size_t begin = header.size(); begin < text.size();) {
    const size_t end = text.find('\n', begin);
    if (end == std::string::npos) throw bad("does not end with a newline");
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    long long step = 0, epoch = 0;
    double loss = 0, lr = 0;
    int used = 0;
    if (line.size() > 100 || std::sscanf(line.c_str(), "%lld,%lld,%lf,%lf%n", &step, &epoch, &loss, &lr, &used) != 4 ||
        used != static_cast<int>(line.size()) || !std::isfinite(loss) || !std::isfinite(lr))
      throw bad(fmt::format("line {} is not step,epoch,loss,learning_rate", lines + 2));
    if (step <= last || step > r.step || epoch < 1 || epoch > r.epoch || (step % every != 0 && step != total_steps))
      throw bad(fmt::format("line {} logs step {}, which this run does not log after step {} (every {})", lines + 2,
                            step, last, every));
    last = step;
    ++lines;
  }
}

RunState validated_fields(const SafeTensorsFile& file, const TrainOptions& o, const data::Dataset& ds,
                          const models::TranslatorConfig& config, int64_t& adam_step) {
  const auto meta = [&](const char* key) -> const std::string& {
    const auto it = file.metadata.find(key);
    if (it == file.metadata.end()) throw std::runtime_error(fmt::format("training state has no '{}'", key));
    return it->second;
  };
  std::set<std::string> known(std::begin(kOtherStateFields), std::end(kOtherStateFields));
  for (const StateField& f : kStateTable) known.insert(f.key);
  for (const auto& [key, value] : file.metadata)
    if (!known.count(key)) throw std::runtime_error(fmt::format("training state: unknown field {}", shown(key)));
  for (const char* key : kOtherStateFields) meta(key);  // every one present
  for (const StateField& f : kStateTable)
    if (!f.optional) meta(f.key);
  const int64_t train_size = static_cast<int64_t>(ds.train.size());
  const StateLimits limits{o.epochs, train_size, (train_size + o.batch - 1) / o.batch, o.batch,
                           config.layout.max_target};
  RunState r;
  for (const StateField& f : kStateTable) {
    const auto it = file.metadata.find(f.key);
    if (it == file.metadata.end()) continue;  // an optional field
    std::visit(
        [&](auto m) {
          using T = std::remove_cvref_t<decltype(r.*m)>;
          if constexpr (std::is_same_v<T, std::string>) {
            r.*m = it->second;
          } else {
            const auto [low, high] = f.range(r, limits);
            if constexpr (std::is_same_v<T, int64_t>)
              r.*m = parse_integer(it->second, f.key, static_cast<int64_t>(low), static_cast<int64_t>(high));
            else
              r.*m = parse_exact(it->second, f.key, low, high);
          }
        },
        f.member);
  }
  const int64_t expected_step = (r.epoch - 1) * limits.steps_per_epoch + limits.steps_in(r.position);
  if (r.step != expected_step)
    throw std::runtime_error(fmt::format(
        "training state: step {} does not follow from epoch {} and position {} (batches of {}: step {} does)", r.step,
        r.epoch, r.position, o.batch, expected_step));
  adam_step = parse_integer(meta("adam_step"), "adam_step", r.step, r.step);  // AdamW steps once a step
  validate_history(meta("history"), o, r);
  validate_metrics_csv(r);
  if (!r.steps_csv.empty()) validate_steps_csv(r, limits.steps_per_epoch * o.epochs);
  return r;
}

}  // namespace qkv::app
