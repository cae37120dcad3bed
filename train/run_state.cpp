// train/run_state.cpp — a resumable run's DIR/train_state.safetensors: its options as JSON, saving,
// and restoring it exactly (see run_state.h).
#include "run_state.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "framework/autograd.h"
#include "framework/distributed.h"
#include "framework/ops.h"

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
double parse_exact(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') throw std::runtime_error("training state: '" + what + "' is not a number");
  return v;
}

std::string options_json(const TrainOptions& o) {
  nlohmann::ordered_json j;
  j["data"] = o.data_dir;
  j["attention"] = o.attention;
  j["layers"] = o.layers;
  j["d_model"] = o.d_model;
  j["d_k"] = o.d_k;
  j["d_ff"] = o.d_ff;
  j["activation"] = o.activation;
  j["epochs"] = o.epochs;
  j["batch"] = o.batch;
  j["lr"] = exact(o.lr);
  j["weight_decay"] = exact(o.weight_decay);
  j["clip"] = exact(o.clip);
  j["dropout"] = exact(o.dropout);
  j["seed"] = std::to_string(o.seed);
  j["schedule"] = o.schedule;
  j["device"] = o.device;
  j["freeze_embeddings"] = o.freeze_embeddings;
  j["dtype"] = o.dtype;
  j["ranks"] = o.data_parallel ? dist::ProcessGroup::world().size() : 1;
  return j.dump();
}

// A saved state is a file like any other: its JSON is parsed with a depth bound.
nlohmann::json parse_state_json(const std::string& text) {
  return nlohmann::json::parse(text, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > 8) throw std::runtime_error("nested deeper than 8 levels");
    return true;
  });
}

TrainOptions options_from_json(const std::string& text, const TrainOptions& current) {
  TrainOptions o = current;  // out_dir, threads, quiet and the flags of this invocation stay
  try {
    const nlohmann::json j = parse_state_json(text);
    o.data_dir = j.at("data").get<std::string>();
    o.attention = j.at("attention").get<std::string>();
    o.layers = j.at("layers").get<int64_t>();
    o.d_model = j.at("d_model").get<int64_t>();
    o.d_k = j.at("d_k").get<int64_t>();
    o.d_ff = j.at("d_ff").get<int64_t>();
    o.activation = j.at("activation").get<std::string>();
    o.epochs = j.at("epochs").get<int64_t>();
    o.batch = j.at("batch").get<int64_t>();
    o.lr = parse_exact(j.at("lr").get<std::string>(), "lr");
    o.weight_decay = parse_exact(j.at("weight_decay").get<std::string>(), "weight_decay");
    o.clip = parse_exact(j.at("clip").get<std::string>(), "clip");
    o.dropout = parse_exact(j.at("dropout").get<std::string>(), "dropout");
    o.seed = std::stoull(j.at("seed").get<std::string>());
    o.schedule = j.at("schedule").get<std::string>();
    o.device = j.at("device").get<std::string>();
    o.freeze_embeddings = j.at("freeze_embeddings").get<bool>();
    o.dtype = j.contains("dtype") ? j.at("dtype").get<std::string>() : "float32";  // states before --dtype
    const int64_t ranks = j.contains("ranks") ? j.at("ranks").get<int64_t>() : 1;
    const int64_t now = current.data_parallel ? dist::ProcessGroup::world().size() : 1;
    if (ranks != now)
      throw std::runtime_error(fmt::format(
          "the run was saved by {} rank{}{} and is resumed with {}; resume it with the same number{}", ranks,
          ranks == 1 ? "" : "s", ranks == 1 ? " (no --data-parallel)" : "", now,
          ranks > 1 ? fmt::format(" (mpirun -np {} ... --data-parallel)", ranks) : std::string(" (without --data-parallel)")));
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).rfind("the run was saved by", 0) == 0) throw;
    throw std::runtime_error(std::string("training state: its options are unreadable: ") + e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("training state: its options are unreadable: ") + e.what());
  }
  // The same bounds as the command line's, before anything is sized from them.
  const auto within = [](const char* name, int64_t v, int64_t low, int64_t high) {
    if (v < low || v > high)
      throw std::runtime_error(fmt::format("training state: {} {} is outside [{}, {}]", name, v, low, high));
  };
  within("layers", o.layers, 1, models::TranslatorConfig::kMaxLayers);
  within("d_model", o.d_model, 1, 4096);
  within("d_k", o.d_k, 1, 4096);
  within("d_ff", o.d_ff, 1, 16384);
  within("epochs", o.epochs, 1, 100000);
  within("batch", o.batch, 1, 100000);
  if (!(std::isfinite(o.lr) && o.lr > 0) || !(std::isfinite(o.weight_decay) && o.weight_decay >= 0) ||
      !std::isfinite(o.clip) || !(o.dropout >= 0 && o.dropout <= 0.95))
    throw std::runtime_error("training state: its lr, weight decay, clip or dropout is out of range");
  if (o.dtype != "float32" && o.dtype != "float64")
    throw std::runtime_error("training state: its dtype '" + o.dtype + "' is not float32 or float64");
  if (o.schedule != "cosine" && o.schedule != "constant")
    throw std::runtime_error("training state: its schedule '" + o.schedule + "' is not cosine or constant");
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

Tensor tensor_from(const SafeTensor& t, const Tensor& like, const std::string& path, const std::string& name) {
  const DType dtype = t.dtype == "F64" ? DType::F64 : DType::F32;
  if ((t.dtype != "F32" && t.dtype != "F64") || t.shape != like.shape() || dtype != like.dtype())
    throw std::runtime_error(fmt::format("{}: tensor '{}' is {} {} but the run needs {}", path, name, t.dtype,
                                         shape_str(t.shape), like.describe()));
  Tensor host = Tensor::empty(t.shape, dtype);
  if (!t.data.empty()) std::memcpy(host.data_ptr(), t.data.data(), t.data.size());
  return like.device() == Device::cpu() ? host : host.to(like.device());
}


std::string state_path(const std::string& dir) { return (fs::path(dir) / "train_state.safetensors").string(); }

void save_state(const std::string& dir, const TrainOptions& o, const models::TranslatorConfig& config,
                       models::Translator& model, const optim::AdamW& optimizer, const std::vector<Tensor>& trained,
                       const RunState& st) {
  SafeTensorsFile file;
  file.metadata["format"] = kStateFormat;
  file.metadata["options"] = options_json(o);
  file.metadata["config"] = config.to_json();
  file.metadata["epoch"] = std::to_string(st.epoch);
  file.metadata["position"] = std::to_string(st.position);
  file.metadata["step"] = std::to_string(st.step);
  file.metadata["best_epoch"] = std::to_string(st.best_epoch);
  file.metadata["best_exact"] = exact(st.best_exact);
  file.metadata["best_loss"] = exact(st.best_loss);
  file.metadata["loss_count"] = std::to_string(st.loss_count);
  file.metadata["tokens_seen"] = std::to_string(st.tokens_seen);
  file.metadata["train_seconds"] = exact(st.train_seconds);
  file.metadata["epoch_rng"] = st.epoch_rng;
  file.metadata["dropout_rng"] = st.dropout_rng;
  file.metadata["metrics_csv"] = st.csv;
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
  }
  if (st.loss_sum.defined()) file.tensors.emplace("loss_sum", host_tensor(st.loss_sum));
  file.metadata["adam_step"] = std::to_string(optimizer.steps_taken());
  safetensors_write(state_path(dir), file);
}

const std::string& meta_of(const SafeTensorsFile& file, const std::string& key, const std::string& path) {
  auto it = file.metadata.find(key);
  if (it == file.metadata.end()) throw std::runtime_error(fmt::format("{}: training state has no '{}'", path, key));
  return it->second;
}

int64_t int_of(const SafeTensorsFile& file, const std::string& key, const std::string& path) {
  const std::string& text = meta_of(file, key, path);
  try {
    size_t used = 0;
    const int64_t v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw std::runtime_error(fmt::format("{}: training state '{}' is not an integer", path, key));
}

// Stale temp files of earlier runs that were killed: the next run removes them.
void remove_stale_temp_files(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    for (const char* output : {"model.safetensors.tmp", "train_state.safetensors.tmp", "metrics.csv.tmp", "loss.png.tmp"})
      if (name.rfind(output, 0) == 0) fs::remove(entry.path(), ec);
  }
}

std::unique_ptr<SafeTensorsFile> open_saved_state(const TrainOptions& requested, TrainOptions& o) {
  std::unique_ptr<SafeTensorsFile> saved;
  const std::string saved_path = state_path(requested.out_dir);
  if (requested.resume) {
    if (requested.force) throw std::runtime_error("--resume and --force cannot be combined");
    if (!fs::exists(saved_path))
      throw std::runtime_error(fmt::format("{}: no training state to resume (the run finished, or never saved one)",
                                           saved_path));
    saved = std::make_unique<SafeTensorsFile>(safetensors_read(saved_path));
    if (meta_of(*saved, "format", saved_path) != kStateFormat)
      throw std::runtime_error(fmt::format("{}: not a qkv training state", saved_path));
    o = options_from_json(meta_of(*saved, "options", saved_path), requested);
  } else if (!requested.force) {
    for (const char* name : {"model.safetensors", "train_state.safetensors", "metrics.csv"})
      if (fs::exists(fs::path(requested.out_dir) / name))
        throw std::runtime_error(fmt::format("{} already holds a run ({}); use --resume to continue it or --force to "
                                             "start over",
                                             requested.out_dir, name));
  }
  return saved;
}

void restore_state(const SafeTensorsFile* saved, const std::string& saved_path, const TrainOptions& o,
                   const data::Dataset& ds, const models::TranslatorConfig& config, models::Translator& model,
                   const std::vector<Tensor>& trained, optim::AdamW& optimizer, Generator& gen, Device device,
                   RunState& st) {
  if (meta_of(*saved, "config", saved_path) != config.to_json())
    throw std::runtime_error(fmt::format("{}: the saved run's model does not match {} (was the dataset changed?)",
                                         saved_path, o.data_dir));
  for (const auto& [name, param] : model.named_parameters()) {
    auto it = saved->tensors.find("param." + name);
    if (it == saved->tensors.end())
      throw std::runtime_error(fmt::format("{}: training state lacks tensor 'param.{}'", saved_path, name));
    Tensor target = param;
    NoGradGuard no_grad;
    target.copy_(tensor_from(it->second, param, saved_path, "param." + name));
  }
  std::vector<Tensor> m(trained.size()), v(trained.size());
  const auto names = model.named_parameters();
  for (size_t i = 0; i < trained.size(); ++i)
    for (const auto& [name, p] : names)
      if (p.same_impl(trained[i])) {
        auto a = saved->tensors.find("exp_avg." + name), b = saved->tensors.find("exp_avg_sq." + name);
        if (a != saved->tensors.end() && b != saved->tensors.end()) {
          m[i] = tensor_from(a->second, p, saved_path, "exp_avg." + name);
          v[i] = tensor_from(b->second, p, saved_path, "exp_avg_sq." + name);
        }
      }
  optimizer.restore(int_of(*saved, "adam_step", saved_path), m, v);
  st.epoch = int_of(*saved, "epoch", saved_path);
  st.position = int_of(*saved, "position", saved_path);
  st.step = int_of(*saved, "step", saved_path);
  st.best_epoch = int_of(*saved, "best_epoch", saved_path);
  st.loss_count = int_of(*saved, "loss_count", saved_path);
  st.tokens_seen = int_of(*saved, "tokens_seen", saved_path);
  st.best_exact = parse_exact(meta_of(*saved, "best_exact", saved_path), "best_exact");
  st.best_loss = parse_exact(meta_of(*saved, "best_loss", saved_path), "best_loss");
  st.train_seconds = parse_exact(meta_of(*saved, "train_seconds", saved_path), "train_seconds");
  st.epoch_rng = meta_of(*saved, "epoch_rng", saved_path);
  st.dropout_rng = meta_of(*saved, "dropout_rng", saved_path);
  st.csv = meta_of(*saved, "metrics_csv", saved_path);
  gen.set_state(st.epoch_rng);
  model.dropout_generator().set_state(st.dropout_rng);
  try {
    for (const auto& e : parse_state_json(meta_of(*saved, "history", saved_path))) {
      EpochRecord r;
      r.epoch = e.at(0).get<int64_t>();
      r.train_loss = parse_exact(e.at(1).get<std::string>(), "history");
      r.valid.loss = parse_exact(e.at(2).get<std::string>(), "history");
      r.seconds = parse_exact(e.at(3).get<std::string>(), "history");
      st.history.push_back(r);
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: training state history is unreadable: {}", saved_path, e.what()));
  }
  if (auto it = saved->tensors.find("loss_sum"); it != saved->tensors.end())
    st.loss_sum = tensor_from(it->second, Tensor::zeros({}, trained.front().dtype(), device), saved_path, "loss_sum");
  const int64_t steps_per_epoch = (static_cast<int64_t>(ds.train.size()) + o.batch - 1) / o.batch;
  if (st.epoch < 1 || st.epoch > o.epochs || st.position < 0 || st.position > static_cast<int64_t>(ds.train.size()) ||
      st.step < 0 || st.step > steps_per_epoch * o.epochs)
    throw std::runtime_error(fmt::format("{}: training state is inconsistent (epoch {}, position {}, step {})",
                                         saved_path, st.epoch, st.position, st.step));
}

}  // namespace qkv::app
