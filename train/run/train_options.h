// train/run/train_options.h — every option of `qkv train`, declared once. QKV_TRAIN_OPTIONS is the
// table; from it come TrainOptions (the fields and their defaults), the command line with its
// range checks and --help (register_train, train/cli/train.cpp), the settings that --resume refuses, the
// options' JSON in a saved state (options_json and options_from_json, run_state.cpp) and the check
// of options built in code (check_option_bounds). Adding an option is one row here plus its use.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "framework/optim.h"
#include "framework/tensor.h"
#include "models/translator.h"

namespace qkv::app {

// What an option is to a run.
enum class OptionKind {
  Setting,       // decides the run: saved in its state, restored by --resume (which refuses the flag)
  LaterSetting,  // a Setting that states saved before it existed lack: they read as its default
  Run,           // this invocation only (where files go, threads, the flags): not saved
  Testing,       // like Run, and hidden from --help
  Internal,      // not on the command line
};

// The values a number option takes: [low, high], or (low, high] when low_excluded.
struct Bounds {
  double low = -std::numeric_limits<double>::infinity(), high = std::numeric_limits<double>::infinity();
  bool low_excluded = false;
  constexpr bool any() const { return low == -std::numeric_limits<double>::infinity() && high == -low; }
  constexpr bool holds(double v) const { return (low_excluded ? v > low : v >= low) && v <= high; }
};
constexpr Bounds unbounded() { return {}; }
constexpr Bounds from_to(double low, double high) { return {low, high, false}; }
constexpr Bounds above(double low) { return {low, std::numeric_limits<double>::infinity(), true}; }
constexpr Bounds at_least(double low) { return {low, std::numeric_limits<double>::infinity(), false}; }

// --random-positions' default: three times the layout's positions for a model with a rotary part
// (the shipped model: rotary, translation spreading its positions 3 apart), off for one without.
inline constexpr int64_t kAutoRandomPositions = -1, kAutoRandomPositionsFactor = 3;

// The table. X(type, member, default, flag, kind, bounds, help): the state's JSON key is the flag
// without its dashes, '-' read as '_' (--d-model: d_model). A choice option's type is an enum with
// a Choices entry below; its spellings are the same on the command line and in a state. Settings
// come first, in the order of a state's JSON; --help lists the options in this order.
#define QKV_TRAIN_OPTIONS(X)                                                                                          \
  X(std::string, data_dir, "data/idioms", "--data", Setting, unbounded(),                                             \
    "dataset directory with train/valid/test.tsv")                                                                    \
  X(models::AttentionMode, attention, models::AttentionMode::Learned, "--attention", Setting, unbounded(),            \
    "learned | static | none")                                                                                        \
  /* The architecture's defaults are TranslatorConfig's (chosen by measurement: RESULTS.md). */                       \
  X(int64_t, layers, models::TranslatorConfig{}.layers, "--layers", Setting,                                          \
    from_to(1, models::TranslatorConfig::kMaxLayers), "stacked attention + feed-forward layers")                      \
  X(int64_t, d_model, models::TranslatorConfig{}.d_model, "--d-model", Setting,                                       \
    from_to(1, models::TranslatorConfig::kMaxWidth), "model width D")                                                 \
  X(int64_t, d_k, models::TranslatorConfig{}.d_k, "--d-k", Setting, from_to(1, models::TranslatorConfig::kMaxWidth),  \
    "head width H")                                                                                                   \
  X(int64_t, d_ff, models::TranslatorConfig{}.d_ff, "--d-ff", Setting,                                                \
    from_to(1, models::TranslatorConfig::kMaxFeedForward), "feed-forward width F")                                    \
  X(models::Activation, activation, models::TranslatorConfig{}.activation, "--activation", Setting, unbounded(),      \
    "feed-forward activation: relu | gelu")                                                                           \
  X(int64_t, epochs, 3, "--epochs", Setting, from_to(1, 100000), "training epochs")                                   \
  X(int64_t, batch, 64, "--batch", Setting, from_to(1, 100000), "sentences per batch")                                \
  X(double, lr, 5e-3, "--lr", Setting, above(0), "AdamW learning rate")                                               \
  X(double, weight_decay, 0.1, "--weight-decay", Setting, at_least(0), "AdamW weight decay")                          \
  X(double, clip, 1.0, "--clip", Setting, above(0), "largest joint gradient norm (larger gradients are scaled down)") \
  X(double, dropout, 0.05, "--dropout", Setting, from_to(0, 0.95), "dropout probability while training")              \
  X(uint64_t, seed, 1, "--seed", Setting, unbounded(), "random seed (same seed, same checkpoint)")                    \
  /* cosine: a linear warm-up over one epoch or a tenth of the run, whichever is shorter, then cosine decay to */     \
  /* 10% (optim::scheduled_learning_rate and default_warmup_steps, framework/optim.cpp) | constant */                 \
  X(optim::Schedule, schedule, optim::Schedule::Cosine, "--schedule", Setting, unbounded(),                           \
    "learning-rate schedule: cosine | constant")                                                                      \
  X(Device, device, Device::cpu(), "--device", Setting, unbounded(), "cpu | cuda | cuda:N")                           \
  X(bool, freeze_embeddings, false, "--freeze-embeddings", Setting, unbounded(),                                      \
    "keep token embeddings at their random start (the tutorial's static embeddings)")                                 \
  /* the data-parallel exactness test trains in float64 */                                                            \
  X(DType, dtype, DType::F32, "--dtype", LaterSetting, unbounded(), "float32 | float64 (parameters and arithmetic)")  \
  X(models::Positions, positions, models::Positions::Rotary, "--positions", LaterSetting, unbounded(),                \
    "where word order enters: rotary (RoPE on queries and keys; reads longer sentences) | absolute (a learned "       \
    "embedding) | absolute+rotary | alibi (a bias of -1/8 per word of distance on every score; reads longer "         \
    "sentences)")                                                                                                     \
  X(int64_t, random_positions, kAutoRandomPositions, "--random-positions", LaterSetting,                              \
    from_to(kAutoRandomPositions, models::TranslatorConfig::kMaxRandomPositions),                                     \
    "L: half the training sequences take rotary positions sampled at random from 0 to L - 1, the others the "         \
    "positions translation spreads evenly (Ruoss et al., 2023; L at least the layout's positions; 0 = off; -1 = "     \
    "three times the layout's positions with rotary, off without)")                                                   \
  X(double, rotary_base, models::TranslatorConfig{}.rotary_base, "--rotary-base", LaterSetting, from_to(2, 1e9),      \
    "rotary positions' base: feature pair i of a head turns by position * base^(-2i / H) (RoFormer's 10000)")         \
  X(double, length_scale, models::TranslatorConfig{}.length_scale, "--length-scale", LaterSetting, from_to(0, 8),     \
    "p: a rotary model's attention scores for a sentence of n words, past the layout's M, are multiplied by "         \
    "(ln n / ln M)^p (log-length scaling; 0 = off)")                                                                  \
  /* 0: the longest train sentence; a longer valid or test sentence is then skipped (absolute) or read (rotary) */    \
  X(int64_t, max_source, 0, "--max-source", LaterSetting, from_to(0, data::kMaxSentenceWords),                        \
    "English positions of the model's layout (0 = train's longest sentence)")                                         \
  X(int64_t, max_target, 0, "--max-target", LaterSetting, from_to(0, data::kMaxSentenceWords + 1),                    \
    "Hindi positions of the model's layout, with <eos> (0 = train's longest sentence + 1)")                           \
  X(double, label_smoothing, 0.0, "--label-smoothing", LaterSetting, from_to(0, 1),                                   \
    "label smoothing of the training loss, as PyTorch's CrossEntropyLoss (validation reports the plain loss)")        \
  X(double, target_noise, 0.0, "--target-noise", LaterSetting, from_to(0, 0.9),                                       \
    "word dropout: each teacher-forced input word of the translation (Hindi; English with --reverse) becomes <unk> "  \
    "with this probability while training, so the next word is read from the source (the targets are kept; 0 = "      \
    "off)")                                                                                                           \
  X(double, ema, 0.0, "--ema", LaterSetting, from_to(0, 0.9999),                                                      \
    "decay of an exponential moving average of the weights (Polyak averaging), which validation, the best epoch "     \
    "and the checkpoint use (0 = off, the trained weights themselves)")                                               \
  X(bool, reverse, false, "--reverse", LaterSetting, unbounded(),                                                     \
    "train the other way round, Hindi to English (every pair turned): the channel model that translate and "          \
    "eval's --channel rerank with")                                                                                   \
  X(bool, right_to_left, false, "--right-to-left", LaterSetting, unbounded(),                                         \
    "write each translation last word first (the words of every target turned round): the second forward model "      \
    "that translate and eval's --channel rerank adds (right_to_left.safetensors beside the checkpoint)")              \
  /* 0: keep the count set before (apply_threads: QKV_THREADS, else one per core) */                                  \
  X(int, threads, 0, "--threads", Run, from_to(0, 256),                                                               \
    "CPU threads for gemm and the loops (0 = QKV_THREADS when set, else one per core; results are the same for "      \
    "any count)")                                                                                                     \
  X(std::string, out_dir, "runs/learned", "--out", Run, unbounded(), "output directory")                              \
  /* An --out that already holds a run is refused unless the run is resumed or force is set. */                       \
  X(bool, resume, false, "--resume", Run, unbounded(),                                                                \
    "continue the interrupted run saved in --out (its settings come from the saved state)")                           \
  X(bool, force, false, "--force", Run, unbounded(), "start over in an --out that already holds a run")               \
  /* Every rank trains the same model on its slice of each global batch; the gradients are summed with one */         \
  /* all-reduce per step; rank 0 alone writes files. */                                                               \
  X(bool, data_parallel, false, "--data-parallel", Run, unbounded(),                                                  \
    "data-parallel over the processes mpirun started: each rank takes a slice of every batch, gradients are "         \
    "summed with one all-reduce per step, rank 0 writes the files")                                                   \
  X(std::string, step_losses, "", "--step-losses", Testing, unbounded(),                                              \
    "testing: write each step's loss to this file")                                                                   \
  X(int64_t, stop_after_steps, 0, "--stop-after-steps", Testing, from_to(0, double(int64_t{1} << 40)),                \
    "testing: stop as if interrupted after this many steps, saving the state")                                        \
  X(bool, quiet, false, "", Internal, unbounded(), "no per-step progress (used by demo)")

struct TrainOptions {
#define QKV_OPTION_FIELD(type, member, default_value, flag, kind, bounds, help) type member = default_value;
  QKV_TRAIN_OPTIONS(QKV_OPTION_FIELD)
#undef QKV_OPTION_FIELD
};

// One row of the table, less its type and default.
struct OptionInfo {
  const char* flag;  // "" for an Internal option
  OptionKind kind;
  Bounds bounds;
  const char* help;
  bool saved() const { return kind == OptionKind::Setting || kind == OptionKind::LaterSetting; }
  // The state's JSON key: "--d-model" -> "d_model".
  std::string key() const {
    std::string k = flag[0] == '-' && flag[1] == '-' ? flag + 2 : flag;
    for (char& c : k)
      if (c == '-') c = '_';
    return k;
  }
};

// Calls f(info, &TrainOptions::member) for every row, in the table's order.
template <class F>
void for_each_option(F&& f) {
#define QKV_OPTION_VISIT(type, member, default_value, flag, kind, bounds, help) \
  f(OptionInfo{flag, OptionKind::kind, bounds, help}, &TrainOptions::member);
  QKV_TRAIN_OPTIONS(QKV_OPTION_VISIT)
#undef QKV_OPTION_VISIT
}

// The choices of an enum option: values (in the order --help lists them) and name(value), the
// spelling on the command line and in a saved state.
template <class E>
struct Choices;
template <>
struct Choices<models::AttentionMode> {
  static constexpr models::AttentionMode values[] = {models::AttentionMode::Learned, models::AttentionMode::Static,
                                                     models::AttentionMode::None};
  static std::string name(models::AttentionMode v) { return models::attention_mode_name(v); }
};
template <>
struct Choices<models::Positions> {
  static constexpr models::Positions values[] = {models::Positions::Absolute, models::Positions::Rotary,
                                                 models::Positions::AbsoluteRotary, models::Positions::Alibi};
  static std::string name(models::Positions v) { return models::positions_name(v); }
};
template <>
struct Choices<models::Activation> {
  static constexpr models::Activation values[] = {models::Activation::Relu, models::Activation::Gelu};
  static std::string name(models::Activation v) { return models::activation_name(v); }
};
template <>
struct Choices<optim::Schedule> {
  static constexpr optim::Schedule values[] = {optim::Schedule::Cosine, optim::Schedule::Constant};
  static std::string name(optim::Schedule v) { return v == optim::Schedule::Cosine ? "cosine" : "constant"; }
};
template <>
struct Choices<DType> {
  static constexpr DType values[] = {DType::F32, DType::F64};  // training never holds int64 parameters
  static std::string name(DType v) { return dtype_name(v); }
};

template <class T>
concept ChoiceOption = requires {
  Choices<T>::values;
};

template <ChoiceOption E>
std::vector<std::string> choice_names() {
  std::vector<std::string> names;
  for (const E v : Choices<E>::values) names.push_back(Choices<E>::name(v));
  return names;
}

template <ChoiceOption E>
std::optional<E> parse_choice(const std::string& text) {
  for (const E v : Choices<E>::values)
    if (Choices<E>::name(v) == text) return v;
  return std::nullopt;
}

// How bounds read after "must be": "a whole number from 1 to 16", "> 0", ">= 0", "from 0 to 0.95".
std::string bounds_text(const Bounds& b, bool whole);

// Every number option of `o` within its bounds (options built in code: the demo, ablate, tests);
// throws "--lr must be > 0, got 0".
void check_option_bounds(const TrainOptions& o);

}  // namespace qkv::app
