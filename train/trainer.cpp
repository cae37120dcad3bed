// train/trainer.cpp — the AdamW training loop with live progress, per-epoch validation, best-
// epoch checkpointing and metrics.csv; and the evaluation used by every command.
#include "trainer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "framework/autograd.h"
#include "framework/backend.h"
#include "framework/ops.h"
#include "framework/optim.h"
#include "models/translator_io.h"
#include "tools/render/render.h"

namespace qkv::app {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

data::Layout layout_for(const data::Dataset& ds) {
  data::Layout layout;
  for (const auto& p : ds.train) {
    layout.max_source = std::max<int64_t>(layout.max_source, static_cast<int64_t>(p.english.size()));
    layout.max_target = std::max<int64_t>(layout.max_target, static_cast<int64_t>(p.hindi.size()) + 1);
  }
  return layout;
}

// The layout with its target part cut to the longest target among pairs[idx] (plus <eos>). The slots
// past it would hold only padding, which the causal mask keeps from every real position and the loss
// ignores, so the result is the same as with the full layout, for less work. A target longer than
// the model's layout still reaches make_batch's file:line error.
static data::Layout trimmed_layout(const data::Layout& layout, const std::vector<data::SentencePair>& pairs,
                                   const std::vector<size_t>& idx) {
  int64_t longest = 1;
  for (size_t i : idx) longest = std::max(longest, static_cast<int64_t>(pairs[i].hindi.size()) + 1);
  data::Layout trimmed = layout;
  trimmed.max_target = std::min(layout.max_target, longest);
  return trimmed;
}

EvalResult evaluate(models::Translator& model, const std::vector<data::SentencePair>& pairs,
                    const data::Vocab& english, const data::Vocab& hindi, int64_t batch_size) {
  NoGradGuard no_grad;
  const bool was_training = model.training();
  model.train(false);
  EvalResult r;
  double loss_sum = 0;
  int64_t correct_tokens = 0, exact = 0;
  for (size_t start = 0; start < pairs.size(); start += batch_size) {
    std::vector<size_t> idx;
    for (size_t i = start; i < std::min(pairs.size(), start + batch_size); ++i) idx.push_back(i);
    const data::Batch batch =
        data::make_batch(pairs, idx, english, hindi, trimmed_layout(model.config().layout, pairs, idx), model.device());
    // teacher-forced loss and token accuracy over real target tokens (incl. <eos>)
    Tensor logits = model.forward(batch);
    const std::vector<int64_t> targets = batch.target_output.to_ids();
    int64_t counted = 0;
    for (int64_t t : targets) counted += t != data::Vocab::PAD;
    loss_sum += cross_entropy(logits, batch.target_output, data::Vocab::PAD).item() * counted;
    const std::vector<int64_t> predicted = max_with_indices(logits, -1).indices.to_ids();
    // A target word the vocabulary lacks became <unk>; predicting <unk> does not produce it.
    for (size_t i = 0; i < targets.size(); ++i)
      if (targets[i] != data::Vocab::PAD && targets[i] != data::Vocab::UNK && predicted[i] == targets[i]) ++correct_tokens;
    r.tokens += counted;
    // greedy exact match
    std::vector<std::vector<std::string>> sources;
    for (size_t i : idx) sources.push_back(pairs[i].english);
    const auto decode_start = Clock::now();
    const auto outputs = model.translate(sources, english, hindi);
    r.decode_seconds += seconds_since(decode_start);
    for (size_t k = 0; k < idx.size(); ++k) exact += outputs[k] == pairs[idx[k]].hindi;
  }
  r.sentences = static_cast<int64_t>(pairs.size());
  r.loss = r.tokens ? loss_sum / r.tokens : 0;
  r.token_accuracy = r.tokens ? static_cast<double>(correct_tokens) / r.tokens : 0;
  r.exact_match = r.sentences ? static_cast<double>(exact) / r.sentences : 0;
  model.train(was_training);
  return r;
}

void write_text_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write");
    out << text;
    if (!out.flush()) {
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": write failed");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename into place: " + ec.message());
  }
}

static std::string format_eta(double seconds) {
  const int s = static_cast<int>(seconds + 0.5);
  return s >= 60 ? fmt::format("{}m{:02d}s", s / 60, s % 60) : fmt::format("{}s", s);
}

static void write_loss_plot(const std::string& path, const std::vector<EpochRecord>& history,
                            const std::string& title) {
  render::LinePlotSpec spec;
  spec.title = title;
  spec.x_label = "epoch";
  spec.y_label = "cross-entropy loss (log scale)";
  spec.log_y = true;
  render::Series train{"train loss", {}, {}, {31, 119, 180}};
  render::Series valid{"valid loss", {}, {}, {255, 127, 14}};
  for (const auto& e : history) {
    train.x.push_back(static_cast<double>(e.epoch));
    train.y.push_back(e.train_loss);
    valid.x.push_back(static_cast<double>(e.epoch));
    valid.y.push_back(e.valid.loss);
  }
  spec.series = {train, valid};
  render::write_png(render::render_line_plot(spec), path);
}

static TrainResult run_training(const TrainOptions& o, const data::Dataset& ds, const data::Vocab& english,
                                const data::Vocab& hindi, const models::TranslatorConfig& config, Device device,
                                models::Translator& model, const std::vector<Tensor>& trained,
                                optim::AdamW& optimizer, Generator& gen);

TrainResult train_translator(const TrainOptions& o) {
  if (o.epochs <= 0) throw std::runtime_error(fmt::format("--epochs must be positive, got {}", o.epochs));
  if (o.batch <= 0) throw std::runtime_error(fmt::format("--batch must be positive, got {}", o.batch));
  if (!(o.lr > 0)) throw std::runtime_error(fmt::format("--lr must be positive, got {}", o.lr));
  if (!(o.weight_decay >= 0)) throw std::runtime_error(fmt::format("--weight-decay must be >= 0, got {}", o.weight_decay));
  if (o.threads < 0) throw std::runtime_error(fmt::format("--threads must be >= 0, got {}", o.threads));
  const Device device = Device::parse(o.device);
  if (o.threads > 0) set_cpu_threads(o.threads);

  // Everything that can fail on input happens before the output directory is touched.
  const data::Dataset ds = data::load_dataset(o.data_dir);
  std::vector<std::vector<std::string>> en_sentences, hi_sentences;
  for (const auto& p : ds.train) en_sentences.push_back(p.english), hi_sentences.push_back(p.hindi);
  const data::Vocab english = data::Vocab::build(en_sentences), hindi = data::Vocab::build(hi_sentences);
  models::TranslatorConfig config;
  config.attention = models::parse_attention_mode(o.attention);
  config.layers = o.layers;
  config.d_model = o.d_model;
  config.d_k = o.d_k;
  config.d_ff = o.d_ff;
  config.activation = o.activation;
  config.source_vocab = english.size();
  config.target_vocab = hindi.size();
  config.layout = layout_for(ds);
  config.validate();  // e.g. --layers out of range, before anything is written
  for (const std::string& name : ds.available())
    for (const auto& p : ds.split(name)) {
      if (static_cast<int64_t>(p.english.size()) > config.layout.max_source ||
          static_cast<int64_t>(p.hindi.size()) + 1 > config.layout.max_target)
        throw std::runtime_error(p.source + ": sentence is longer than every training sentence");
    }
  Generator gen(o.seed);
  models::Translator model(config, gen);
  if (device != Device::cpu()) model.to(device);
  model.set_dropout(o.dropout, o.seed + 1);
  if (o.freeze_embeddings) model.freeze_token_embeddings();
  std::vector<Tensor> trained;
  for (const Tensor& p : model.parameters())
    if (p.requires_grad()) trained.push_back(p);
  optim::AdamW optimizer(trained, {.lr = o.lr, .weight_decay = o.weight_decay});

  const bool created_out = !fs::exists(o.out_dir);
  fs::create_directories(o.out_dir);
  try {
    return run_training(o, ds, english, hindi, config, device, model, trained, optimizer, gen);
  } catch (...) {
    // A run that stops before its first checkpoint leaves no directory it made.
    std::error_code ec;
    if (created_out && !fs::exists(fs::path(o.out_dir) / "model.safetensors", ec)) fs::remove_all(o.out_dir, ec);
    throw;
  }
}

static TrainResult run_training(const TrainOptions& o, const data::Dataset& ds, const data::Vocab& english,
                                const data::Vocab& hindi, const models::TranslatorConfig& config, Device device,
                                models::Translator& model, const std::vector<Tensor>& trained,
                                optim::AdamW& optimizer, Generator& gen) {
  TrainResult result;
  result.checkpoint = (fs::path(o.out_dir) / "model.safetensors").string();
  const bool live = !o.quiet && isatty(STDOUT_FILENO);
  const int64_t steps_per_epoch = (static_cast<int64_t>(ds.train.size()) + o.batch - 1) / o.batch;
  const int64_t total_steps = steps_per_epoch * o.epochs;
  const int64_t warmup_steps = std::min(steps_per_epoch, std::max<int64_t>(1, total_steps / 10));
  if (!o.quiet)
    fmt::print("training {} attention, {} layer{}: {} train / {} valid pairs, {} parameters ({} in attention), {} steps\n",
               o.attention, o.layers, o.layers == 1 ? "" : "s", ds.train.size(), ds.valid.size(), model.parameter_count(),
               model.attention_parameter_count(), total_steps);

  const auto start = Clock::now();
  auto last_draw = start;
  double train_seconds = 0;
  int64_t tokens_seen = 0, step = 0;
  double best_key_exact = -1, best_key_loss = 0;
  constexpr int64_t kCheckEvery = 100;  // steps between non-finite checks on a GPU
  Tensor window_loss, window_norm;
  int64_t checked_steps = 0;
  // Where the last good checkpoint is, for the message that stops a run.
  const auto kept_note = [&] {
    return result.best_epoch > 0 ? fmt::format("; the last good checkpoint (epoch {}) is kept in {}", result.best_epoch,
                                               result.checkpoint)
                                 : std::string("; no checkpoint was written");
  };
  std::string csv = "epoch,train_loss,valid_loss,valid_token_accuracy,valid_exact_match,seconds\n";
  for (int64_t epoch = 1; epoch <= o.epochs; ++epoch) {
    model.train(true);
    const auto epoch_start = Clock::now();
    const std::vector<size_t> order = data::shuffled_indices(ds.train.size(), gen);
    Tensor loss_sum;  // summed on the device; read once per log line
    int64_t loss_count = 0;
    for (size_t begin = 0; begin < order.size(); begin += o.batch) {
      const std::vector<size_t> idx(order.begin() + begin, order.begin() + std::min(order.size(), begin + o.batch));
      const data::Batch batch =
          data::make_batch(ds.train, idx, english, hindi, trimmed_layout(config.layout, ds.train, idx), device);
      // linear warm-up over the first epoch (at most a tenth of the run), then cosine decay to 10% of --lr
      const double progress = static_cast<double>(step) / total_steps;
      const double warmup = std::min(1.0, static_cast<double>(step + 1) / warmup_steps);
      optimizer.lr = o.schedule == "constant" ? o.lr : o.lr * warmup * (0.1 + 0.45 * (1.0 + std::cos(M_PI * progress)));
      optimizer.zero_grad();
      Tensor loss = model.loss(batch);
      loss.backward();
      Tensor grad_norm = o.clip > 0 ? optim::clip_grad_norm(trained, o.clip) : Tensor();
      // Non-finite loss or gradient norm: stop before the step spoils the weights. The sums of a
      // window of steps stay on the device; the CPU reads them every step (a memory read), a GPU
      // every kCheckEvery steps, so there the message names the window.
      window_loss = window_loss.defined() ? add(window_loss, loss.detach()) : loss.detach();
      if (grad_norm.defined()) window_norm = window_norm.defined() ? add(window_norm, grad_norm) : grad_norm;
      if (device == Device::cpu() || (step + 1) % kCheckEvery == 0 || begin + o.batch >= order.size()) {
        const int64_t first = checked_steps + 1, last = step + 1;
        const auto where = [&] {
          return first == last ? fmt::format("epoch {}, step {}", epoch, last)
                               : fmt::format("epoch {}, one of steps {} to {}", epoch, first, last);
        };
        const double loss_value = window_loss.item();
        if (!std::isfinite(loss_value))
          throw std::runtime_error(fmt::format("training stopped: the loss was {} at {} (learning rate {:g}){}",
                                               loss_value, where(), optimizer.lr, kept_note()));
        if (window_norm.defined() && !std::isfinite(window_norm.item()))
          throw std::runtime_error(fmt::format("training stopped: the gradient norm was {} at {} (learning rate {:g}){}",
                                               window_norm.item(), where(), optimizer.lr, kept_note()));
        window_loss = Tensor();
        window_norm = Tensor();
        checked_steps = last;
      }
      optimizer.step();
      ++step;
      tokens_seen += batch.target_tokens;
      loss_sum = loss_sum.defined() ? add(loss_sum, loss.detach()) : loss.detach();
      ++loss_count;
      if (live && seconds_since(last_draw) > 0.2) {  // the live line reads the loss back ~5 times a second
        last_draw = Clock::now();
        const double loss_value = loss.item();
        const double elapsed = train_seconds + seconds_since(epoch_start);
        const double eta = elapsed / step * (total_steps - step);
        fmt::print("\r\033[Kepoch {:>3}/{}  step {:>5}/{}  loss {:.4f}  {:>7.0f} tok/s  ETA {}", epoch, o.epochs,
                   step, total_steps, loss_value, tokens_seen / std::max(elapsed, 1e-9), format_eta(eta));
        std::fflush(stdout);
      }
    }
    train_seconds += seconds_since(epoch_start);
    EpochRecord rec;
    rec.epoch = epoch;
    rec.train_loss = loss_sum.item() / std::max<int64_t>(loss_count, 1);
    rec.valid = evaluate(model, ds.valid, english, hindi);
    if (!std::isfinite(rec.valid.loss) || !std::isfinite(rec.train_loss))
      throw std::runtime_error(fmt::format("training stopped: the {} loss was {} after epoch {}{}",
                                           std::isfinite(rec.train_loss) ? "valid" : "train",
                                           std::isfinite(rec.train_loss) ? rec.valid.loss : rec.train_loss, epoch,
                                           kept_note()));
    rec.seconds = seconds_since(start);
    result.history.push_back(rec);
    // keep the best epoch by valid exact match, ties broken by valid loss
    const bool better = rec.valid.exact_match > best_key_exact ||
                        (rec.valid.exact_match == best_key_exact && rec.valid.loss < best_key_loss);
    if (better) {
      best_key_exact = rec.valid.exact_match;
      best_key_loss = rec.valid.loss;
      result.best_epoch = epoch;
      models::save_translator(result.checkpoint, model, english, hindi);
    }
    csv += fmt::format("{},{:.6f},{:.6f},{:.6f},{:.6f},{:.3f}\n", epoch, rec.train_loss, rec.valid.loss,
                       rec.valid.token_accuracy, rec.valid.exact_match, rec.seconds);
    write_text_atomic((fs::path(o.out_dir) / "metrics.csv").string(), csv);  // complete after every epoch
    if (!o.quiet) {
      if (live) fmt::print("\r\033[K");
      const double eta = train_seconds / step * (total_steps - step);
      fmt::print("epoch {:>3}/{}  train loss {:.4f}  valid loss {:.4f}  token acc {:5.1f}%  exact {:5.1f}%  {:>7.0f} tok/s  ETA {}{}\n",
                 epoch, o.epochs, rec.train_loss, rec.valid.loss, 100 * rec.valid.token_accuracy,
                 100 * rec.valid.exact_match, tokens_seen / std::max(train_seconds, 1e-9), format_eta(eta),
                 better ? "  *saved" : "");
      std::fflush(stdout);
    }
  }
  result.seconds = seconds_since(start);
  result.tokens_per_second = tokens_seen / std::max(train_seconds, 1e-9);
  write_loss_plot((fs::path(o.out_dir) / "loss.png").string(), result.history,
                  fmt::format("{} attention: loss per epoch", o.attention));
  if (!o.quiet)
    fmt::print("best valid epoch {} -> {}  ({:.1f}s, {:.0f} tokens/s)\n", result.best_epoch, result.checkpoint,
               result.seconds, result.tokens_per_second);
  return result;
}

}  // namespace qkv::app
