// train/run/run_state.cpp — a resumable run's DIR/train_state.safetensors: opening, saving and
// restoring it exactly (see run_state.h; its fields are state_fields.cpp's table, its options
// state_options.cpp's).
#include "train/run/run_state.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <cstdio>
#include <stdexcept>

#include "framework/autograd.h"
#include "framework/checkpoint.h"
#include "framework/distributed.h"
#include "framework/file_util.h"
#include "framework/ops.h"
#include "models/translator_io.h"
#include "train/run/state_fields.h"

namespace qkv::app {

namespace fs = std::filesystem;

// DIR/train_state.safetensors is written atomically every kStateEvery steps, at the end of every epoch and on an
// interrupt; removed when the run completes. It holds the current weights (model.safetensors holds the best
// epoch's), the AdamW moments and step, the random generators at the start of the epoch in progress and the position
// in its shuffled order, and the bookkeeping (best so far, metrics so far). Resuming from it gives the bytes an
// uninterrupted run gives (tests/cli/run.sh checks that).

constexpr const char* kStateFormat = "qkv-train-state-1";

// A saved tensor as the run's tensor `like`; every value must be finite (and >= 0 where
// non_negative: the second AdamW moment, the loss sum), as no training step leaves another.
Tensor tensor_from(const SafeTensor& t, const Tensor& like, const std::string& path, const std::string& name,
                   bool non_negative = false) {
  int64_t bad = 0;
  const Tensor host = host_tensor_of(t, bad, non_negative);
  if (!host.defined() || t.shape != like.shape() || host.dtype() != like.dtype())
    throw std::runtime_error(fmt::format("{}: tensor '{}' is {} {} but the run needs {}", path, name, t.dtype,
                                         shape_str(t.shape), like.describe()));
  if (bad > 0)
    throw std::runtime_error(
        fmt::format("{}: training state tensor '{}' holds {} value{} that no run leaves ({}) among {}", path, name, bad,
                    bad == 1 ? "" : "s", non_negative ? "NaN, Inf or negative" : "NaN or Inf", host.numel()));
  return like.device() == Device::cpu() ? host : host.to(like.device());
}

// The parameter name of each trained tensor (the state names its moments and averages by them).
static std::vector<std::string> trained_names(const TrainingRun& run) {
  std::vector<std::string> names(run.trained.size());
  for (const auto& [name, param] : run.model.named_parameters())
    for (size_t i = 0; i < run.trained.size(); ++i)
      if (param.same_impl(run.trained[i])) names[i] = name;
  return names;
}

void save_state(TrainingRun& run) {
  const TrainOptions& o = run.o;
  const models::Translator& model = run.model;
  const optim::AdamW& optimizer = run.optimizer;
  RunState& st = run.st;
  SafeTensorsFile file;
  file.metadata["format"] = kStateFormat;
  file.metadata["options"] = options_json(o);
  file.metadata["config"] = run.config.to_json();
  write_state_fields(st, file);
  nlohmann::json history = nlohmann::json::array();
  for (const EpochRecord& e : st.history)
    history.push_back({e.epoch, exact(e.train_loss), exact(e.valid.loss), exact(e.seconds)});
  file.metadata["history"] = history.dump();
  for (const auto& [name, param] : model.named_parameters())
    file.tensors.emplace("param." + name, safetensor_of(param));
  const std::vector<std::string> names = trained_names(run);
  for (size_t i = 0; i < names.size(); ++i) {
    file.tensors.emplace("exp_avg." + names[i], safetensor_of(optimizer.exp_avg()[i]));
    file.tensors.emplace("exp_avg_sq." + names[i], safetensor_of(optimizer.exp_avg_sq()[i]));
    if (run.average) file.tensors.emplace("average." + names[i], safetensor_of(run.average->averages()[i]));
  }
  if (st.loss_sum.defined()) file.tensors.emplace("loss_sum", safetensor_of(st.loss_sum));
  file.metadata["adam_step"] = std::to_string(optimizer.steps_taken());
  safetensors_write(run.folder.state_path(), file);
  st.saved_step = st.step;
}

const std::string& meta_of(const SafeTensorsFile& file, const std::string& key, const std::string& path) {
  auto it = file.metadata.find(key);
  if (it == file.metadata.end()) throw std::runtime_error(fmt::format("{}: training state has no '{}'", path, key));
  return it->second;
}

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
      throw std::runtime_error(fmt::format(
          "{} already holds a run (model.safetensors), finished; use --force to start over in it, or another --out",
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

void restore_state(const SafeTensorsFile& saved, const std::string& saved_path, TrainingRun& run) {
  const std::vector<Tensor>& trained = run.trained;
  check_saved_config(saved, saved_path, run.config, run.o.data_dir);
  RunState r;
  int64_t adam_step = 0;
  try {
    r = validated_fields(saved, run.o, run.ds, run.config, adam_step);
    restore_generator(run.gen, r.epoch_rng, "epoch_rng");
    restore_generator(run.model.dropout_generator(), r.dropout_rng, "dropout_rng");
  } catch (const std::runtime_error& e) { throw std::runtime_error(fmt::format("{}: {}", saved_path, e.what())); }
  // The model's best epoch is in model.safetensors, or, at the end of that very epoch, in the
  // state's weights (write_finished_epoch_outputs writes it).
  if (r.best_epoch > 0 && !(r.position == 0 && r.best_epoch == r.epoch - 1) && !run.folder.has(RunFolder::kModel))
    throw std::runtime_error(fmt::format(
        "{}: the saved run's best model (epoch {}) should be in {}, which is missing; start over with --force",
        saved_path, r.best_epoch, run.folder.model_path()));

  // Exactly the tensors a run saves at this point: every parameter, both AdamW moments of every
  // trained one (AdamW makes them, zero, before its first step), its average with --ema, and the
  // epoch's loss sum once it has a step.
  if ((run.o.ema > 0) != (run.average != nullptr))
    throw std::logic_error("restore_state: --ema's averages and the run's disagree");
  const auto params = run.model.named_parameters();
  const std::vector<std::string> names = trained_names(run);
  std::set<std::string> expected;
  for (const auto& [name, param] : params) expected.insert("param." + name);
  for (const std::string& name : names) expected.insert({"exp_avg." + name, "exp_avg_sq." + name});
  if (run.average)
    for (const std::string& name : names) expected.insert("average." + name);
  if (r.loss_count > 0) expected.insert("loss_sum");
  for (const auto& [name, tensor] : saved.tensors)
    if (!expected.count(name))
      throw std::runtime_error(fmt::format("{}: training state has a tensor that no run at step {} saves: {}",
                                           saved_path, r.step, shown(name)));
  for (const std::string& name : expected)
    if (!saved.tensors.count(name))
      throw std::runtime_error(fmt::format("{}: training state lacks tensor '{}'", saved_path, name));

  const auto load = [&](const std::string& key, const Tensor& like, bool non_negative = false) {
    return tensor_from(saved.tensors.at(key), like, saved_path, key, non_negative);
  };
  std::vector<Tensor> m, v, averages;
  for (size_t i = 0; i < trained.size(); ++i) {
    m.push_back(load("exp_avg." + names[i], trained[i]));
    v.push_back(load("exp_avg_sq." + names[i], trained[i], true));
  }
  if (run.average)
    for (size_t i = 0; i < trained.size(); ++i) averages.push_back(load("average." + names[i], trained[i]));
  if (r.loss_count > 0) r.loss_sum = load("loss_sum", Tensor::zeros({}, trained.front().dtype(), run.device), true);
  for (const auto& [name, param] : params) {
    Tensor target = param;
    NoGradGuard no_grad;
    target.copy_(load("param." + name, param));
  }
  run.optimizer.restore(adam_step, m, v);
  if (run.average) run.average->restore(std::move(averages));
  run.st = std::move(r);
  if (!saved.checksum_verified)
    fmt::print(stderr, "note: {}: no checksum (written by an older qkv); it was checked field by field only\n",
               saved_path);
}

void write_epoch_outputs(const TrainingRun& run, bool best) {
  const optim::WeightAverage::SwappedIn averaged(run.average);  // --ema: the averaged weights are written
  if (best) models::save_translator(run.folder.model_path(), run.model, run.english, run.hindi);
  write_file_atomic(run.folder.path(RunFolder::kMetrics), run.st.csv);  // complete after every epoch
  if (!run.st.steps_csv.empty()) write_file_atomic(run.folder.path(RunFolder::kSteps), run.st.steps_csv);
}

void write_finished_epoch_outputs(const TrainingRun& run) {
  const RunState& st = run.st;
  if (st.position != 0 || st.epoch == 1) return;  // not saved at the end of an epoch
  write_epoch_outputs(run, st.best_epoch == st.epoch - 1);
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
