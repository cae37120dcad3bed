// models/translator.cpp — the translator: the attention mask, and forward, the
// packed loss and greedy decoding, which differ only in the row layout (an AttentionContext,
// models/row_layouts.h) they hand to one loop over the blocks. The blocks are models/block.cpp; the
// config's JSON form is translator_config.cpp, and what inspection reads translator_analysis.cpp.
#include "translator.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "framework/autograd.h"
#include "framework/ops.h"
#include "models/noisy_channel.h"
#include "models/row_layouts.h"

namespace qkv::models {

using namespace row_layouts;

static TranslatorConfig checked(const TranslatorConfig& c) {
  c.validate();
  return c;
}

Translator::Translator(const TranslatorConfig& config, Generator& gen)
    : config_(checked(config)), src_embed(config.source_vocab, config.d_model, gen),
      tgt_embed(config.target_vocab, config.d_model, gen),
      pos_embed(has_position_embedding(config.positions)
                    ? std::make_unique<nn::Embedding>(config.layout.length(), config.d_model, gen)
                    : nullptr),
      blocks_(static_cast<size_t>(config.layers)) {
  // Generator draws: the embeddings, then layer 0's feed-forward, the head and layer 0's
  // attention (the order of the original single-block model, so that one-layer checkpoints stay
  // byte-identical for a seed), then each further layer's attention and feed-forward. Only learned
  // attention draws.
  for (size_t l = 0; l < blocks_.size(); ++l) {
    blocks_[l].index = l;
    blocks_[l].ln1 = std::make_unique<nn::LayerNorm>(config.d_model);
  }
  blocks_[0].ffn = std::make_unique<FeedForward>(config.d_model, config.d_ff, config.activation, gen);
  head = std::make_unique<nn::Linear>(config.d_model, config.target_vocab, true, gen);
  blocks_[0].attention = make_attention(config.attention, config.d_model, config.d_k, gen);
  for (size_t l = 1; l < blocks_.size(); ++l) {
    blocks_[l].attention = make_attention(config.attention, config.d_model, config.d_k, gen);
    blocks_[l].ffn = std::make_unique<FeedForward>(config.d_model, config.d_ff, config.activation, gen);
  }

  register_module("src_embed", src_embed);
  register_module("tgt_embed", tgt_embed);
  if (pos_embed) register_module("pos_embed", *pos_embed);
  // Embeddings start at N(0, 1/D) instead of nn.Embedding's N(0, 1): with unit entries a token's
  // score with itself (|x|^2 / sqrt D ~ 2 sqrt D) dwarfs every other, so parameter-free attention
  // would start (and, its gradients vanishing, stay) one-hot on the token itself.
  {
    NoGradGuard no_grad;
    const double scale = 1.0 / std::sqrt(static_cast<double>(config.d_model));
    for (nn::Embedding* e : {&src_embed, &tgt_embed, pos_embed.get()})
      if (e) e->weight.copy_(mul_scalar(e->weight, scale));
  }
  // Layer 0 keeps the single-block names; layer l >= 1 is prefixed "layers.l.". Static and none
  // attention have no parameters, so "attn" names nothing for them.
  for (const Block& block : blocks_) {
    const std::string prefix = block.index == 0 ? "" : fmt::format("layers.{}.", block.index);
    register_module(prefix + "attn", *block.attention);
    register_module(prefix + "ln1", *block.ln1);
    register_module(prefix + "ffn", *block.ffn);
  }
  register_module("head", *head);
}

const Tensor& Translator::last_attention(int64_t layer) const {
  if (layer < 0 || layer >= layers())
    throw std::runtime_error(fmt::format("attention layer {} is out of range: this model has {} layer{} (0 to {})",
                                         layer, layers(), layers() == 1 ? "" : "s", layers() - 1));
  static const Tensor none;
  return static_cast<size_t>(layer) < last_attention_.size() ? last_attention_[layer] : none;
}

data::Layout Translator::layout_fitting(int64_t source_words, int64_t target_positions) const {
  const data::Layout own = config_.layout;
  if (reads_longer()) return {source_words, target_positions};
  if (source_words <= own.max_source && target_positions <= own.max_target) return own;
  throw std::runtime_error(
      fmt::format("a sentence of {} words and {} target positions is longer than this model's layout ({} source, {} "
                  "target positions): its {} positions cannot read past it (a rotary or alibi model can)",
                  source_words, target_positions, own.max_source, own.max_target, positions_name(config_.positions)));
}

int64_t Translator::decode_limit(int64_t source_words, int64_t max_length) const {
  if (max_length < 0 || max_length > kMaxDecodeLength)
    throw std::runtime_error(fmt::format("--max-length must be in [1, {}], got {}", kMaxDecodeLength, max_length));
  const int64_t layout_words = config_.layout.max_target - 1;  // the layout's target slots, less <eos>'s
  if (reads_longer()) return max_length > 0 ? max_length : 2 * source_words + kDecodeMargin;
  if (max_length > layout_words)
    throw std::runtime_error(
        fmt::format("--max-length {} is past this model's layout: its {} positions write at most {} Hindi words (a "
                    "rotary or alibi model can write more)",
                    max_length, positions_name(config_.positions), layout_words));
  return max_length > 0 ? max_length : layout_words;
}

// The target slots decoding needs for a batch: room for the longest limit's words and <eos>.
static int64_t decode_slots(const Translator& model, const std::vector<int64_t>& source_lengths, int64_t max_length) {
  int64_t slots = 1;
  for (int64_t n : source_lengths) slots = std::max(slots, model.decode_limit(n, max_length) + 1);
  return slots;
}

Tensor Translator::attention_mask(const data::Batch& batch) const {
  const int64_t B = batch.size(), S = batch.source.size(1), T = S + batch.target_input.size(1);
  std::vector<double> keep(static_cast<size_t>(B * T * T), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n_src = batch.source_lengths.at(b);
    for (int64_t i = 0; i < T; ++i) {
      double* row = keep.data() + (b * T + i) * T;
      // every query sees the real source words; target queries, causal over the target; as the mode allows
      for (int64_t j = 0; j < T; ++j)
        row[j] = blocks_.front().attention->sees(i, j, j < n_src || (i >= S && j >= S && j <= i)) ? 1.0 : 0.0;
    }
  }
  return Tensor::from_vector(keep, {B, T, T}, src_embed.weight.dtype(), src_embed.weight.device());
}

// ---- forward, loss and decoding: one layer loop ----

BlockOptions Translator::block_options(bool record_attention) {
  return {record_attention, dropout_, training(), &dropout_gen_};
}

Tensor Translator::embed(const data::Batch& batch) const {
  const int64_t T = batch.source.size(1) + batch.target_input.size(1);
  // without a position embedding, rotary positions enter where q meets k
  Tensor positions;
  if (pos_embed) positions = T == config_.layout.length() ? pos_embed->weight : slice(pos_embed->weight, 0, 0, T);
  return embedding_concat({src_embed.weight, tgt_embed.weight}, {batch.source, batch.target_input}, positions);
}

// The batch's (S, T_tgt) checked against the model: T_tgt at least 1; with a position embedding the
// layout's S and at most its T_tgt (without one, any S at least the longest sentence).
static void check_batch_layout(const data::Batch& batch, const TranslatorConfig& config, bool any_length) {
  const int64_t S = batch.source.size(1), Tt = batch.target_input.size(1);
  const bool fits =
      any_length ? S >= 1 && Tt >= 1 : S == config.layout.max_source && Tt >= 1 && Tt <= config.layout.max_target;
  bool lengths_fit = true;
  for (int64_t n : batch.source_lengths) lengths_fit = lengths_fit && n >= 0 && n <= S;
  if (!fits || !lengths_fit)
    throw std::runtime_error(fmt::format("translator: batch layout ({}, {}) does not fit the model's ({}, {})", S, Tt,
                                         config.layout.max_source, config.layout.max_target));
}

Tensor Translator::run_blocks(Tensor x, AttentionContext& context, const BlockOptions& options,
                              const BlockObserver& observe) const {
  for (const Block& block : blocks_) {
    BlockOutput output = block.forward(x, context, options);
    if (observe) observe(block.index, output);
    x = output.out;
    if (!x.defined()) break;  // a layer without query rows ends the pass
  }
  return x;
}

Tensor Translator::forward(const data::Batch& batch, const ForwardOptions& options) {
  // The target part may be shorter than the layout's (greedy decoding grows it one step at a time).
  check_batch_layout(batch, config_, reads_longer());
  const int64_t S = batch.source.size(1), T = S + batch.target_input.size(1);
  options.knockout.validate(T, layers());
  Tensor embedded = embed(batch);  // (B, T, D)
  Tensor x = dropout(embedded, dropout_, training(), dropout_gen_);
  // The fused op unless the weights are wanted (the composed path forms them).
  const bool composed = options.record_attention;
  const bool trim_last = !composed && !options.keep_source_positions && !options.layer_outputs;
  const std::vector<int64_t> positions = sequence_positions(S, T - S, batch.source_lengths);
  const AttentionMask mask = AttentionMask::prefix_lm(S, batch.source_lengths, distance_slope(config_.positions));
  SequenceContext context(
      S, T, blocks_.size(), composed ? attention_mask(batch) : Tensor(), mask, trim_last, options.knockout,
      make_turn(config_, positions, {batch.size(), T}, embedded.dtype(), device(), false,
                row_gains(config_, batch.source_lengths, even_starts(batch.size(), T))),
      composed ? distance_bias(config_, positions, batch.size(), T, embedded.dtype(), device()) : Tensor());
  last_attention_.assign(blocks_.size(), Tensor());
  if (options.layer_outputs) *options.layer_outputs = {embedded.detach()};
  x = run_blocks(x, context, block_options(options.record_attention), [&](size_t layer, const BlockOutput& output) {
    if (options.record_attention) last_attention_[layer] = output.weights;
    if (options.layer_outputs) options.layer_outputs->push_back(output.out.detach());
  });
  Tensor target_part = trim_last ? x : slice(x, 1, S, T);  // (B, T_tgt, D)
  return head->forward(target_part);                       // (B, T_tgt, vocab)
}

Tensor Translator::loss(const data::Batch& batch, const ForwardOptions& options) {
  const int64_t B = batch.size(), S = batch.source.size(1), Tt = batch.target_input.size(1);
  const bool packed = !options.record_attention && !options.keep_source_positions;
  if (packed && static_cast<int64_t>(batch.target_lengths.size()) == B &&
      static_cast<int64_t>(batch.source_lengths.size()) == B) {
    int64_t real = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n_src = batch.source_lengths[b], n_tgt = batch.target_lengths[b];
      if (n_src < 0 || n_src > S || n_tgt < 0 || n_tgt > Tt)
        throw std::runtime_error(
            fmt::format("translator: batch row {} has {} source and {} target positions; the batch holds {} and {}", b,
                        n_src, n_tgt, S, Tt));
      real += n_src + n_tgt;
    }
    // randomized positions are sampled by the packed loss alone, so it runs even without padding
    if (real < B * (S + Tt) || (training() && config_.random_positions > 0))
      return packed_loss(batch, options.knockout,
                         options.label_smoothing);  // else every position is real: no rows to skip
  }
  return cross_entropy(forward(batch, options), batch.target_output, data::Vocab::PAD, options.label_smoothing);
}

Tensor Translator::packed_loss(const data::Batch& batch, const Knockout& knockout, double label_smoothing) {
  check_batch_layout(batch, config_, reads_longer());
  const int64_t S = batch.source.size(1), Tt = batch.target_input.size(1);
  knockout.validate(S + Tt, layers());
  PackedRows rows = pack_rows(batch, S, device(), distance_slope(config_.positions));
  const bool sampled = training() && config_.random_positions > 0;
  if (sampled) sample_positions(rows, batch, config_.random_positions, config_.position_stride(), dropout_gen_);
  Tensor embedded = embed(batch);  // (B, T, D)
  last_attention_.assign(blocks_.size(), Tensor());
  // the real rows of the embedded sequence   (N, D)
  Tensor x = dropout(embedding(reshape(embedded, {rows.B * rows.T, config_.d_model}), rows.position_ids), dropout_,
                     training(), dropout_gen_);
  const Shape all_rows = {static_cast<int64_t>(rows.row_positions.size())},
              target_rows = {static_cast<int64_t>(rows.target_row_positions.size())};
  const AttentionMask mask = AttentionMask::prefix_lm(S, batch.source_lengths, distance_slope(config_.positions));
  PackedContext context(rows, S, blocks_.size(), mask, knockout,
                        make_turn(config_, rows.row_positions, all_rows, embedded.dtype(), device(), sampled,
                                  row_gains(config_, batch.source_lengths, rows.all_queries.query_starts)),
                        make_turn(config_, rows.target_row_positions, target_rows, embedded.dtype(), device(), sampled,
                                  row_gains(config_, batch.source_lengths, rows.target_queries.query_starts)));
  x = run_blocks(x, context, block_options(false));  // (N_tgt, D)
  // The head over the target rows, placed back in (B, Tt, vocab) with zeros at the padding, which
  // cross_entropy ignores.
  Tensor logits = unpack_rows(head->forward(x), rows.target_slots, rows.B, Tt);
  return cross_entropy(logits, batch.target_output, data::Vocab::PAD, label_smoothing);
}

// ChooseNext's `from`, checked: one row per row, each joining a row of the same source length.
static const std::vector<int64_t>& checked_rows(const std::vector<int64_t>& from,
                                                const std::vector<int64_t>& source_lengths) {
  const int64_t B = static_cast<int64_t>(source_lengths.size());
  bool fits = static_cast<int64_t>(from.size()) == B;
  for (int64_t r = 0; fits && r < B; ++r)
    fits = from[r] >= 0 && from[r] < B && source_lengths[from[r]] == source_lengths[r];
  if (!fits) throw std::logic_error("translator: decode's rows may only go on from rows of the same source length");
  return from;
}

void Translator::decode(const Tensor& source, const std::vector<int64_t>& source_lengths, const ChooseNext& choose,
                        const ForwardOptions& options) {
  NoGradGuard no_grad;
  const bool cached = !options.recompute_prefix && !options.record_attention && (!training() || dropout_ == 0.0);
  if (!cached) return decode_recomputing(source, source_lengths, choose, options);
  const int64_t B = source.size(0), S = source.size(1), Tt = decode_slots(*this, source_lengths, options.max_length);
  if (pos_embed && S != config_.layout.max_source)
    throw std::runtime_error(
        fmt::format("translator: a source of {} slots does not fit the model's {}", S, config_.layout.max_source));
  options.knockout.validate(S + Tt, layers());
  const Device device = this->device();
  const DType dtype = src_embed.weight.dtype();
  std::vector<int64_t> inputs(static_cast<size_t>(B), data::Vocab::SEP), from;  // this step's target input per row
  CachedContext context(B, S, Tt, blocks_.size(), source_lengths, device, options.knockout,
                        distance_slope(config_.positions));
  const BlockOptions block = block_options(false);
  // the rows' position embedding, when the model has one
  auto placed = [&](Tensor tokens, int64_t from, int64_t to) {
    return pos_embed ? add(tokens, slice(pos_embed->weight, 0, from, to)) : tokens;
  };
  // the source's tables: (S, H/2) for every row alike, or (B, S, H/2) when a sentence has a gain
  const std::vector<double> source_gains = row_gains(config_, source_lengths, even_starts(B, S)),
                            step_gains = row_gains(config_, source_lengths, even_starts(B, 1));
  std::vector<int64_t> source_positions;
  for (int64_t row = 0; row < (source_gains.empty() ? 1 : B); ++row)
    for (int64_t p = 0; p < S; ++p) source_positions.push_back(p);
  context.move_to(0, make_turn(config_, source_positions, source_gains.empty() ? Shape{S} : Shape{B, S}, dtype, device,
                               false, source_gains));
  run_blocks(placed(src_embed.forward(source), 0, S), context, block);  // (B, S, D)
  for (int64_t t = 0; t < Tt; ++t) {
    const int64_t position = S + t;
    std::vector<int64_t> step_positions;  // each row's target slot t sits right after its sentence
    for (int64_t n_src : source_lengths) step_positions.push_back(n_src + t);
    context.move_to(position, make_turn(config_, step_positions, {B, 1}, dtype, device, false, step_gains));
    Tensor x =
        placed(tgt_embed.forward(Tensor::from_ids(inputs, {B, 1}, device)), position, position + 1);  // (B, 1, D)
    from.clear();
    if (choose(head->forward(run_blocks(x, context, block)), t, inputs, from)) return;  // (B, 1, vocab)
    if (!from.empty()) context.reorder(checked_rows(from, source_lengths));
  }
}

void Translator::decode_recomputing(const Tensor& source, const std::vector<int64_t>& source_lengths,
                                    const ChooseNext& choose, const ForwardOptions& options) {
  // The mask is causal, so only the first t + 1 target slots can influence position t.
  const int64_t B = source.size(0), S = source.size(1), Tt = decode_slots(*this, source_lengths, options.max_length);
  std::vector<int64_t> inputs(static_cast<size_t>(B), data::Vocab::SEP), from;  // this step's target input per row
  std::vector<int64_t> prefix_ids;
  data::Batch batch;
  batch.source = source;
  batch.source_lengths = source_lengths;
  for (int64_t t = 0; t < Tt; ++t) {
    std::vector<int64_t> grown;
    for (int64_t b = 0; b < B; ++b) {
      grown.insert(grown.end(), prefix_ids.begin() + b * t, prefix_ids.begin() + (b + 1) * t);
      grown.push_back(inputs[b]);
    }
    prefix_ids = grown;
    batch.target_input = Tensor::from_ids(prefix_ids, {B, t + 1}, device());
    // a knockout of queries past this prefix is cut to it (forward checks against the prefix's length)
    ForwardOptions step = options;
    step.knockout.query_to = std::min(step.knockout.query_to, S + t + 1);
    if (step.knockout.active() && step.knockout.query_from >= step.knockout.query_to) step.knockout = Knockout{};
    if (step.knockout.key >= S + t + 1) step.knockout = Knockout{};  // a key not there yet
    from.clear();
    if (choose(slice(forward(batch, step), 1, t, t + 1), t, inputs, from)) return;
    if (from.empty()) continue;
    const std::vector<int64_t> ids = batch.source.to_ids(), prefixes = prefix_ids;
    std::vector<int64_t> source_ids;
    prefix_ids.clear();
    for (int64_t r : checked_rows(from, source_lengths)) {
      source_ids.insert(source_ids.end(), ids.begin() + r * S, ids.begin() + (r + 1) * S);
      prefix_ids.insert(prefix_ids.end(), prefixes.begin() + r * (t + 1), prefixes.begin() + (r + 1) * (t + 1));
    }
    batch.source = Tensor::from_ids(source_ids, {B, S}, device());
  }
}

void Translator::freeze_token_embeddings() {
  src_embed.weight.set_requires_grad(false);
  tgt_embed.weight.set_requires_grad(false);
}

void Translator::set_dropout(double p, uint64_t seed) {
  if (p < 0.0 || p >= 1.0) throw std::runtime_error(fmt::format("dropout must be in [0, 1), got {}", p));
  dropout_ = p;
  dropout_gen_.seed(seed);
}

std::vector<std::vector<std::string>> Translator::translate(const std::vector<std::vector<std::string>>& english,
                                                            const data::Vocab& english_vocab,
                                                            const data::Vocab& hindi_vocab,
                                                            const ForwardOptions& options) {
  NoGradGuard no_grad;
  const int64_t B = static_cast<int64_t>(english.size());
  std::vector<std::vector<std::string>> out(B);
  if (B == 0) return out;
  int64_t longest = 0;
  for (const auto& sentence : english) {
    if (sentence.empty()) throw std::runtime_error("translate: the sentence is empty");
    longest = std::max(longest, static_cast<int64_t>(sentence.size()));
  }
  if (longest > config_.layout.max_source && !reads_longer())
    throw std::runtime_error(fmt::format(
        "translate: the sentence has {} words; this model reads at most {} (its {} positions cannot read past them)",
        longest, config_.layout.max_source, positions_name(config_.positions)));
  if (options.channel) {
    if (options.exact_lengths || options.record_attention || options.knockout.active() || options.recompute_prefix)
      throw std::runtime_error("translate: a channel's rerank takes no oracle length, knockout or recorded attention");
    return translate_reranked(*this, english, english_vocab, hindi_vocab, *options.channel, options);
  }
  // A model with a position embedding reads its layout's slots; any other, the batch's longest
  // sentence (padding keys are masked and positions count from each sentence's own start, so the
  // padding changes no row's result).
  const int64_t S = source_slots(longest);
  std::vector<int64_t> src(B * S, data::Vocab::PAD), lengths, limits;
  for (int64_t b = 0; b < B; ++b) {
    const auto& sentence = english[b];
    for (size_t i = 0; i < sentence.size(); ++i) src[b * S + i] = english_vocab.id(sentence[i]);
    lengths.push_back(static_cast<int64_t>(sentence.size()));
    limits.push_back(decode_limit(lengths.back(), options.max_length));
    if (options.exact_lengths) {  // the oracle's: checked against the layout as --max-length is
      const int64_t exact = options.exact_lengths->at(b);
      if (exact < 0) throw std::runtime_error(fmt::format("translate: an exact length of {} words", exact));
      limits.back() = exact;
      decode_limit(lengths.back(), std::max<int64_t>(exact, 1));
    }
  }
  std::vector<bool> done(B, false);
  if (options.cut_at_limit) options.cut_at_limit->assign(B, 0);
  decode(
      Tensor::from_ids(src, {B, S}, this->device()), lengths,
      [&](const Tensor& logits, int64_t t, std::vector<int64_t>& next, std::vector<int64_t>&) {
        std::vector<int64_t> best = max_with_indices(logits, -1).indices.to_ids();  // (B, 1)
        if (options.exact_lengths) {  // <eos> is never chosen before the exact length: the best other word
          const std::vector<double> scores = logits.to_vector();
          const int64_t vocab = logits.size(-1);
          for (int64_t b = 0; b < B; ++b) {
            if (best[b] != data::Vocab::EOS) continue;
            int64_t other = best[b] == 0 ? 1 : 0;
            for (int64_t w = 0; w < vocab; ++w)
              if (w != data::Vocab::EOS && scores[b * vocab + w] > scores[b * vocab + other]) other = w;
            best[b] = other;
          }
        }
        bool all_done = true;
        for (int64_t b = 0; b < B; ++b) {
          next[b] = data::Vocab::PAD;  // a finished row is fed padding (its outputs are not read)
          if (done[b]) continue;
          if (best[b] == data::Vocab::EOS || t == limits[b]) {
            done[b] = true;
            if (best[b] != data::Vocab::EOS && options.cut_at_limit && !options.exact_lengths)
              (*options.cut_at_limit)[b] = 1;
            continue;  // a translation that reaches its limit is cut there
          }
          out[b].push_back(hindi_vocab.word(best[b]));
          next[b] = best[b];
          all_done = false;
        }
        return all_done;
      },
      options);
  return out;
}

}  // namespace qkv::models
