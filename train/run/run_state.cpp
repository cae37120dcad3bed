// train/run/run_state.cpp — a resumable run's DIR/train_state.safetensors: its options as JSON, saving,
// and restoring it exactly (see run_state.h).
#include "train/run/run_state.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include "framework/autograd.h"
#include "framework/bounded_json.h"
#include "framework/distributed.h"
#include "framework/file_util.h"
#include "framework/ops.h"
#include "models/translator_io.h"

namespace qkv::app {

namespace fs = std::filesystem;

// ---- a resumable run: DIR/train_state.safetensors ----
// Written atomically every kStateEvery steps, at the end of every epoch and on an interrupt; removed
// when the run completes. It holds the current weights (model.safetensors holds the best epoch's),
// the AdamW moments and step, the random generators at the start of the epoch in progress and the
// position in its shuffled order, and the bookkeeping (best so far, metrics so far). Resuming from
// it gives the bytes an uninterrupted run gives (tests/cli/run.sh checks that).

constexpr const char* kStateFormat = "qkv-train-state-1";

std::string exact(double v) { return fmt::format("{:a}", v); }  // hex float: round-trips exactly

// A value from a saved state, shown in a message: at most 40 bytes of it.
static std::string shown(const std::string& text) {
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

// JSON from a saved state: one linear pass, its depth and size bounded.
static nlohmann::json parse_state_json(const std::string& text, int max_depth, size_t max_values) {
  return parse_bounded_json(text, {.max_depth = max_depth, .max_values = max_values});
}

// A saved option as its state writes it: a real number as an exact hex float and the seed as
// decimal text (JSON numbers are doubles to many readers), a choice or device by name.
template <class T>
static nlohmann::ordered_json state_value(const T& value) {
  if constexpr (std::is_same_v<T, double>)
    return exact(value);
  else if constexpr (std::is_same_v<T, uint64_t>)
    return std::to_string(value);
  else if constexpr (ChoiceOption<T>)
    return Choices<T>::name(value);
  else if constexpr (std::is_same_v<T, Device>)
    return value.str();
  else
    return value;  // a whole number, a flag, text
}

std::string options_json(const TrainOptions& o) {
  nlohmann::ordered_json j;
  for_each_option([&](const OptionInfo& info, auto member) {
    if (info.saved()) j[info.key()] = state_value(o.*member);
  });
  j["ranks"] = o.data_parallel ? dist::ProcessGroup::world().size() : 1;
  return j.dump();
}

// A saved real number: exactly as exact() writes it, within the option's bounds.
static double read_state_number(const std::string& text, const std::string& key, const Bounds& b) {
  const double v = parse_exact(text, key, b.low, std::min(b.high, std::numeric_limits<double>::max()));
  if (b.low_excluded && v == b.low)
    throw std::runtime_error(fmt::format("training state: its {} is {}; it must be {}", key, v,
                                         b.low == 0 ? "positive" : "> " + fmt::format("{}", b.low)));
  return v;
}

// One saved option into `value`, checked for type, spelling and the table's bounds as the command
// line checks it (before anything is sized from it).
template <class T>
static void read_state_value(const nlohmann::json& j, const OptionInfo& info, T& value) {
  const std::string key = info.key();
  const auto refused = [&](const std::string& text) {
    return std::runtime_error(fmt::format("training state: its {} {} is not one qkv train accepts", key, shown(text)));
  };
  if constexpr (std::is_same_v<T, double>) {
    value = read_state_number(j.at(key).get<std::string>(), key, info.bounds);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    const std::string text = j.at(key).get<std::string>();
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || std::to_string(value) != text)
      throw std::runtime_error(
          fmt::format("training state: its {} {} is not an integer in [0, 2^64)", key, shown(text)));
  } else if constexpr (ChoiceOption<T>) {
    const std::string text = j.at(key).get<std::string>();
    const std::optional<T> choice = parse_choice<T>(text);
    if (!choice) throw refused(text);
    value = *choice;
  } else if constexpr (std::is_same_v<T, Device>) {
    const std::string text = j.at(key).get<std::string>();
    try {
      value = Device::parse(text);
    } catch (const std::exception&) { throw refused(text); }
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    value = j.at(key).get<T>();
    const auto low = static_cast<int64_t>(info.bounds.low), high = static_cast<int64_t>(info.bounds.high);
    if (value < low || value > high)
      throw std::runtime_error(fmt::format("training state: {} {} is outside [{}, {}]", key, value, low, high));
  } else {
    value = j.at(key).get<T>();  // a flag, text
  }
}

TrainOptions options_from_json(const std::string& text, const TrainOptions& current) {
  TrainOptions o = current;  // out_dir, threads, quiet and the flags of this invocation stay
  try {
    const nlohmann::json j = parse_state_json(text, 1, 64);  // one flat object
    if (!j.is_object()) throw std::runtime_error("not a JSON object");
    for_each_option([&](const OptionInfo& info, auto member) {
      if (!info.saved()) return;
      if (info.kind == OptionKind::LaterSetting && !j.contains(info.key()))
        o.*member = TrainOptions{}.*member;
      else
        read_state_value(j, info, o.*member);
    });
    const int64_t ranks = j.contains("ranks") ? j.at("ranks").get<int64_t>() : 1;
    const int64_t now = current.data_parallel ? dist::ProcessGroup::world().size() : 1;
    if (ranks != now)
      throw std::runtime_error(
          fmt::format("the run was saved by {} rank{}{} and is resumed with {}; resume it with the same number{}",
                      ranks, ranks == 1 ? "" : "s", ranks == 1 ? " (no --data-parallel)" : "", now,
                      ranks > 1 ? fmt::format(" (mpirun -np {} ... --data-parallel)", ranks)
                                : std::string(" (without --data-parallel)")));
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (what.rfind("the run was saved by", 0) == 0 || what.rfind("training state: ", 0) == 0) throw;
    throw std::runtime_error("training state: its options are unreadable: " + what);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("training state: its options are unreadable: ") + e.what());
  }
  return o;
}

static SafeTensor host_tensor(const Tensor& t) {
  const Tensor host = t.device() == Device::cpu() ? t : t.to(Device::cpu());
  SafeTensor out;
  out.dtype = host.dtype() == DType::F64 ? "F64" : "F32";
  out.shape = host.shape();
  out.data.resize(static_cast<size_t>(host.numel()) * dtype_size(host.dtype()));
  if (!out.data.empty()) std::memcpy(out.data.data(), host.data_ptr(), out.data.size());
  return out;
}

// A saved tensor as the run's tensor `like`; every value must be finite (and >= 0 where
// non_negative: the second AdamW moment, the loss sum), as no training step leaves another.
Tensor tensor_from(const SafeTensor& t, const Tensor& like, const std::string& path, const std::string& name,
                   bool non_negative = false) {
  const DType dtype = t.dtype == "F64" ? DType::F64 : DType::F32;
  if ((t.dtype != "F32" && t.dtype != "F64") || t.shape != like.shape() || dtype != like.dtype())
    throw std::runtime_error(fmt::format("{}: tensor '{}' is {} {} but the run needs {}", path, name, t.dtype,
                                         shape_str(t.shape), like.describe()));
  Tensor host = Tensor::empty(t.shape, dtype);
  if (!t.data.empty()) std::memcpy(host.data_ptr(), t.data.data(), t.data.size());
  int64_t bad = 0;
  for (const double v : host.to_vector()) bad += !std::isfinite(v) || (non_negative && v < 0);
  if (bad > 0)
    throw std::runtime_error(
        fmt::format("{}: training state tensor '{}' holds {} value{} that no run leaves ({}) among {}", path, name, bad,
                    bad == 1 ? "" : "s", non_negative ? "NaN, Inf or negative" : "NaN or Inf", host.numel()));
  return like.device() == Device::cpu() ? host : host.to(like.device());
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

void save_state(TrainingRun& run) {
  const TrainOptions& o = run.o;
  const models::Translator& model = run.model;
  const std::vector<Tensor>& trained = run.trained;
  const optim::AdamW& optimizer = run.optimizer;
  RunState& st = run.st;
  SafeTensorsFile file;
  file.metadata["format"] = kStateFormat;
  file.metadata["options"] = options_json(o);
  file.metadata["config"] = run.config.to_json();
  for (const StateField& f : kStateTable) file.metadata[f.key] = field_text(st, f.member);
  nlohmann::json history = nlohmann::json::array();
  for (const EpochRecord& e : st.history)
    history.push_back({e.epoch, exact(e.train_loss), exact(e.valid.loss), exact(e.seconds)});
  file.metadata["history"] = history.dump();
  for (const auto& [name, param] : model.named_parameters()) file.tensors.emplace("param." + name, host_tensor(param));
  const auto names = model.named_parameters();
  for (size_t i = 0; i < trained.size(); ++i) {
    std::string name;
    for (const auto& [n, p] : names)
      if (p.same_impl(trained[i])) name = n;
    if (optimizer.exp_avg()[i].defined()) {
      file.tensors.emplace("exp_avg." + name, host_tensor(optimizer.exp_avg()[i]));
      file.tensors.emplace("exp_avg_sq." + name, host_tensor(optimizer.exp_avg_sq()[i]));
    }
    if (run.average) file.tensors.emplace("average." + name, host_tensor(run.average->averages()[i]));
  }
  if (st.loss_sum.defined()) file.tensors.emplace("loss_sum", host_tensor(st.loss_sum));
  file.metadata["adam_step"] = std::to_string(optimizer.steps_taken());
  safetensors_write(run.folder.state_path(), file);
  st.saved_step = st.step;
}

const std::string& meta_of(const SafeTensorsFile& file, const std::string& key, const std::string& path) {
  auto it = file.metadata.find(key);
  if (it == file.metadata.end()) throw std::runtime_error(fmt::format("{}: training state has no '{}'", path, key));
  return it->second;
}

// Stale temp files of earlier runs that were killed: the next run removes them.
bool resumed_run_is_complete(const TrainOptions& requested) {
  return requested.resume && !requested.force && RunFolder(requested.out_dir).holds_finished_run();
}

TrainOptions saved_options(const SafeTensorsFile& saved, const std::string& saved_path, const TrainOptions& requested) {
  if (meta_of(saved, "format", saved_path) != kStateFormat)
    throw std::runtime_error(fmt::format("{}: not a qkv training state", saved_path));
  try {
    return options_from_json(meta_of(saved, "options", saved_path), requested);
  } catch (const std::runtime_error& e) { throw std::runtime_error(fmt::format("{}: {}", saved_path, e.what())); }
}

std::unique_ptr<SafeTensorsFile> open_saved_state(const TrainOptions& requested, TrainOptions& o) {
  const std::string& dir = requested.out_dir;
  const RunFolder folder(dir);
  // --out is a folder (or a new name), and what the run writes in it are files (or new names).
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw std::runtime_error(fmt::format("--out {} is not a directory; give a new name or a directory", dir));
  for (const char* name : RunFolder::file_names()) check_output_file(folder.path(name));
  std::unique_ptr<SafeTensorsFile> saved;
  const std::string saved_path = folder.state_path();
  if (requested.resume) {
    if (requested.force) throw std::runtime_error("--resume and --force cannot be combined");
    if (!fs::exists(saved_path)) {
      if (!folder.has(RunFolder::kModel) && !folder.has(RunFolder::kMetrics))
        throw std::runtime_error(fmt::format(
            "{} holds no saved run to resume (a run stopped before its first save, which comes before any training, "
            "leaves none): start it again with the command that started it",
            dir));
      throw std::runtime_error(fmt::format(
          "{}: no training state to resume: {} holds a model but no state (an older qkv killed at the end of an "
          "epoch could leave that); start it over with the command that started it and --force",
          saved_path, dir));
    }
    saved = std::make_unique<SafeTensorsFile>(safetensors_read(saved_path));
    o = saved_options(*saved, saved_path, requested);
  } else if (!requested.force) {
    if (folder.has(RunFolder::kState))
      throw std::runtime_error(
          fmt::format("{} already holds a run (train_state.safetensors); continue it with qkv train "
                      "--resume --out {}, or start over with --force",
                      dir, dir));
    if (folder.holds_finished_run())
      throw std::runtime_error(
          fmt::format("{} already holds a run (model.safetensors), finished; use --force to start "
                      "over in it, or another --out",
                      dir));
    for (const char* name : {RunFolder::kModel, RunFolder::kMetrics})
      if (folder.has(name))
        throw std::runtime_error(
            fmt::format("{} already holds a run ({}) without a training state to resume; use "
                        "--force to start over in it, or another --out",
                        dir, name));
  }
  return saved;
}

// ---- restoring: every field checked against the run it must continue ----

void check_saved_config(const SafeTensorsFile& saved, const std::string& saved_path,
                        const models::TranslatorConfig& config, const std::string& data_dir) {
  if (meta_of(saved, "config", saved_path) != config.to_json())
    throw std::runtime_error(
        fmt::format("{}: the saved run's model does not match {} (was the dataset changed?)", saved_path, data_dir));
}

// A generator state exactly as Generator::state() writes it.
static void restore_generator(Generator& gen, const std::string& text, const char* what) {
  try {
    gen.set_state(text);
  } catch (const std::exception&) {
    throw std::runtime_error(fmt::format("training state: '{}' is not a random generator's state", what));
  }
  if (gen.state() != text)
    throw std::runtime_error(
        fmt::format("training state: '{}' is not a random generator's state as qkv writes it", what));
}

// The state's history: one [epoch, train loss, valid loss, seconds] per finished epoch, agreeing
// with the fields already read into r (epoch, train_seconds, best_epoch, best_loss).
static void validate_history(const std::string& text, const TrainOptions& o, RunState& r) {
  const nlohmann::json history = [&] {
    try {
      return parse_state_json(text, 2, 1 + 5 * static_cast<size_t>(o.epochs));
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
        fmt::format("training state: 'metrics_csv' is not the header and one line for each of "
                    "the {} finished epoch{}",
                    r.history.size(), r.history.size() == 1 ? "" : "s"));
  // the best epoch's exact match, as its metrics.csv line gives it (the fifth column, 6 decimals)
  if (r.best_epoch > 0) {
    const std::string& best_line = lines[static_cast<size_t>(r.best_epoch)];
    size_t column = 0;
    for (int comma = 0; comma < 4 && column != std::string::npos; ++comma) column = best_line.find(',', column + 1);
    const std::string written =
        column == std::string::npos ? "" : best_line.substr(column + 1, best_line.find(',', column + 1) - column - 1);
    if (written != fmt::format("{:.6f}", r.best_exact))
      throw std::runtime_error(
          fmt::format("training state: best_exact {} is not the valid exact match of its best epoch "
                      "{} in metrics_csv ({})",
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

// The metadata of a saved state as a RunState, each field checked for type, range and agreement
// with the others and with the run (o, ds, config), before anything is sized or copied from it.
static RunState validated_fields(const SafeTensorsFile& file, const TrainOptions& o, const data::Dataset& ds,
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
    throw std::runtime_error(
        fmt::format("training state: step {} does not follow from epoch {} and position {} "
                    "(batches of {}: step {} does)",
                    r.step, r.epoch, r.position, o.batch, expected_step));
  adam_step = parse_integer(meta("adam_step"), "adam_step", r.step, r.step);  // AdamW steps once a step
  validate_history(meta("history"), o, r);
  validate_metrics_csv(r);
  if (!r.steps_csv.empty()) validate_steps_csv(r, limits.steps_per_epoch * o.epochs);
  return r;
}

void restore_state(const SafeTensorsFile& saved_file, const std::string& saved_path, TrainingRun& run) {
  const SafeTensorsFile* saved = &saved_file;
  const TrainOptions& o = run.o;
  const data::Dataset& ds = run.ds;
  const models::TranslatorConfig& config = run.config;
  models::Translator& model = run.model;
  const std::vector<Tensor>& trained = run.trained;
  optim::AdamW& optimizer = run.optimizer;
  Generator& gen = run.gen;
  const Device device = run.device;
  RunState& st = run.st;
  check_saved_config(*saved, saved_path, config, o.data_dir);
  RunState r;
  int64_t adam_step = 0;
  try {
    r = validated_fields(*saved, o, ds, config, adam_step);
    restore_generator(gen, r.epoch_rng, "epoch_rng");
    restore_generator(model.dropout_generator(), r.dropout_rng, "dropout_rng");
  } catch (const std::runtime_error& e) { throw std::runtime_error(fmt::format("{}: {}", saved_path, e.what())); }
  // The model's best epoch is in model.safetensors, or, at the end of that very epoch, in the
  // state's weights (write_finished_epoch_outputs writes it).
  if (r.best_epoch > 0 && !(r.position == 0 && r.best_epoch == r.epoch - 1) && !run.folder.has(RunFolder::kModel))
    throw std::runtime_error(
        fmt::format("{}: the saved run's best model (epoch {}) should be in {}, which is missing; "
                    "start over with --force",
                    saved_path, r.best_epoch, run.folder.model_path()));

  // Exactly the tensors a run saves at this point: every parameter, both AdamW moments of every
  // trained one (AdamW makes them, zero, before its first step), its average with --ema, and the
  // epoch's loss sum once it has a step.
  if ((o.ema > 0) != (run.average != nullptr))
    throw std::logic_error("restore_state: --ema's averages and the run's disagree");
  const auto names = model.named_parameters();
  std::vector<std::string> trained_names(trained.size());
  for (size_t i = 0; i < trained.size(); ++i)
    for (const auto& [name, p] : names)
      if (p.same_impl(trained[i])) trained_names[i] = name;
  std::set<std::string> expected;
  for (const auto& [name, param] : names) expected.insert("param." + name);
  for (const std::string& name : trained_names) expected.insert({"exp_avg." + name, "exp_avg_sq." + name});
  if (run.average)
    for (const std::string& name : trained_names) expected.insert("average." + name);
  if (r.loss_count > 0) expected.insert("loss_sum");
  for (const auto& [name, tensor] : saved->tensors)
    if (!expected.count(name))
      throw std::runtime_error(fmt::format("{}: training state has a tensor that no run at step {} saves: {}",
                                           saved_path, r.step, shown(name)));
  for (const std::string& name : expected)
    if (!saved->tensors.count(name))
      throw std::runtime_error(fmt::format("{}: training state lacks tensor '{}'", saved_path, name));

  std::vector<Tensor> m(trained.size()), v(trained.size());
  for (size_t i = 0; i < trained.size(); ++i) {
    const std::string& name = trained_names[i];
    m[i] = tensor_from(saved->tensors.at("exp_avg." + name), trained[i], saved_path, "exp_avg." + name);
    v[i] = tensor_from(saved->tensors.at("exp_avg_sq." + name), trained[i], saved_path, "exp_avg_sq." + name, true);
  }
  std::vector<Tensor> averages;
  if (run.average)
    for (size_t i = 0; i < trained.size(); ++i)
      averages.push_back(tensor_from(saved->tensors.at("average." + trained_names[i]), trained[i], saved_path,
                                     "average." + trained_names[i]));
  if (r.loss_count > 0)
    r.loss_sum = tensor_from(saved->tensors.at("loss_sum"), Tensor::zeros({}, trained.front().dtype(), device),
                             saved_path, "loss_sum", true);
  for (const auto& [name, param] : names) {
    Tensor target = param;
    NoGradGuard no_grad;
    target.copy_(tensor_from(saved->tensors.at("param." + name), param, saved_path, "param." + name));
  }
  optimizer.restore(adam_step, m, v);
  if (run.average) run.average->restore(std::move(averages));
  st = std::move(r);
  if (!saved->checksum_verified)
    fmt::print(stderr, "note: {}: no checksum (written by an older qkv); it was checked field by field only\n",
               saved_path);
}

void write_finished_epoch_outputs(const TrainingRun& run) {
  const RunState& st = run.st;
  if (st.position != 0 || st.epoch == 1) return;                // not saved at the end of an epoch
  const optim::WeightAverage::SwappedIn averaged(run.average);  // --ema: the averaged weights are written
  run.folder.write_epoch_outputs(st.best_epoch == st.epoch - 1, run.model, run.english, run.hindi, st.csv,
                                 st.steps_csv);
}

void rethrow_noting_full_disk(const RunState& st, const std::string& dir) {
  try {
    throw;
  } catch (const Interrupted&) { throw; } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (what.find(std::strerror(ENOSPC)) == std::string::npos) throw;
    if (st.saved_step >= 0 && RunFolder(dir).has(RunFolder::kState))
      throw std::runtime_error(
          fmt::format("{} (the disk is full; the run is saved at step {}: free space and continue it "
                      "with qkv train --resume --out {})",
                      what, st.saved_step, dir));
    throw std::runtime_error(what +
                             " (the disk is full before the run's first save, and nothing of the run is kept: free "
                             "space and start it again)");
  }
}

}  // namespace qkv::app
