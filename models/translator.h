// models/translator.h — the single-head self-attention translator: a prefix language model over
// [english ; <sep> hindi], N layers of one attention block (learned, static or none) and a
// feed-forward layer each, and a projection to the Hindi vocabulary. Shapes: B batch,
// T = S + T_tgt sequence, D model width, H head width (--d-k), F feed-forward width, vocab the vocabulary size.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/block.h"
#include "models/translator_config.h"
#include "framework/nn.h"
#include "framework/ops.h"

namespace qkv::models {

struct Channel;  // models/noisy_channel.h

// What one call of the translator's forward (or loss) records and runs. Given per call, so nothing
// stays switched on after the call returns or throws.
struct ForwardOptions {
  // Training and evaluation run the fused attention op, which never forms the weights. With
  // record_attention, forward takes the composed path (the same values to float rounding) and keeps
  // every layer's weights for last_attention; `attend`, the pictures and the tests use it.
  bool record_attention = false;
  // The head reads only the target positions, so by default the LAST layer computes its queries,
  // W_o, LayerNorm and feed-forward for the target positions alone (keys and values still come
  // from every position): the source rows of the last layer are dead work, about a third of a
  // one-layer training step, and skipping them changes no logit or gradient. With
  // keep_source_positions, and always while recording attention, every position goes through
  // every layer.
  bool keep_source_positions = false;
  Knockout knockout = {};  // none by default
  // When set, forward stores every layer's (B, T, D) output here, detached: [0] the input (token +
  // position embedding), [l] block l's output (l = 1 .. layers). Every position goes through every layer.
  std::vector<Tensor>* layer_outputs = nullptr;
  // Greedy decoding only: recompute the whole target prefix at every step instead of running the
  // new position against a cache of every layer's keys and values (the same tokens, slower; for
  // comparison: `qkv eval --no-cache` and the tests).
  bool recompute_prefix = false;
  // loss() only: PyTorch's label smoothing of the cross-entropy (0: none; see framework/ops.h).
  double label_smoothing = 0.0;
  // Greedy decoding only: the most Hindi words each sentence may get (0: the model's own,
  // Translator::decode_limit). Each sentence has its own limit, so its translation never depends on
  // the rest of the batch; one that reaches it without <eos> is cut there.
  int64_t max_length = 0;
  // translate() only: when set, gets one entry per sentence, 1 where it was cut at its limit.
  std::vector<uint8_t>* cut_at_limit = nullptr;
  // translate() only: when set, sentence b gets exactly (*exact_lengths)[b] Hindi words, <eos>
  // never chosen before them (the oracle-length decode of Newman et al., 2020: it separates
  // deciding when to stop from what to write; qkv eval --oracle-length).
  const std::vector<int64_t>* exact_lengths = nullptr;
  // translate() only: when set, each sentence is decoded by beam search and its candidates reranked
  // by this channel model (noisy-channel reranking, models/noisy_channel.h; qkv translate --channel).
  const Channel* channel = nullptr;
};

class Translator : public nn::Module {
 public:
  Translator(const TranslatorConfig& config, Generator& gen);

  // Teacher-forced logits over the target positions: (B, T_tgt, vocab).
  Tensor forward(const data::Batch& batch, const ForwardOptions& options = {});
  // Mean cross-entropy over real target tokens (<pad> ignored). With the default options, when the
  // batch knows its target lengths and has padding, the loss skips the padded positions in every
  // layer (packed_loss); otherwise it is cross_entropy(forward(batch, options)).
  Tensor loss(const data::Batch& batch, const ForwardOptions& options = {});
  int64_t layers() const { return static_cast<int64_t>(blocks_.size()); }
  // The (B, T, T) attention weights of layer `layer` (0-based) in the last forward pass (rows:
  // queries, columns: keys), or an undefined tensor when it did not record them; throws naming
  // the valid range when `layer` is out of range.
  const Tensor& last_attention(int64_t layer) const;
  // The last layer's weights (the only layer's in a one-layer model).
  const Tensor& last_attention() const { return last_attention(layers() - 1); }
  // The (B, T, T) 0/1 mask used for a batch: 1 where query i may attend to key j (every layer).
  Tensor attention_mask(const data::Batch& batch) const;

  // Greedy decoding of a batch of English token lists; returns Hindi tokens (without <eos>).
  // By default each step runs only the new target position against a cache of every layer's keys
  // and values (the source's, computed once, and the earlier steps'); options.recompute_prefix
  // recomputes the whole prefix at every step instead (the same tokens; tests compare the two).
  // options.knockout applies to every step; options.record_attention decodes by recomputing the
  // prefix through the composed path (slower; the tests compare it with the fused, cached one).
  std::vector<std::vector<std::string>> translate(const std::vector<std::vector<std::string>>& english,
                                                  const data::Vocab& english_vocab, const data::Vocab& hindi_vocab,
                                                  const ForwardOptions& options = {});
  // Decoding on ids: source (B, S) with its lengths -> each step's logits (B, 1, vocab) are passed
  // to `choose`, which sets the next input id per row and returns whether to stop. It may also fill
  // `from` (B entries; left empty, every row goes on as itself): row r then goes on from row
  // from[r]'s source, prefix and cache, as beam search needs. Rows so joined must have the same
  // source length.
  using ChooseNext =
      std::function<bool(const Tensor& logits, int64_t step, std::vector<int64_t>& next, std::vector<int64_t>& from)>;
  void decode(const Tensor& source, const std::vector<int64_t>& source_lengths, const ChooseNext& choose,
              const ForwardOptions& options = {});
  // Keeps the token embeddings fixed at their random start (the tutorial's "static embeddings"): only
  // position embeddings, attention, LayerNorm, feed-forward and head are trained.
  void freeze_token_embeddings();
  // Dropout on the embeddings, each attention output and each feed-forward output while training.
  void set_dropout(double p, uint64_t seed);
  Generator& dropout_generator() { return dropout_gen_; }  // its state is saved with a resumable run
  // Number of parameters in the attention mechanism itself (W_q, W_k, W_v, W_o of every layer).
  int64_t attention_parameter_count() const;

  const TranslatorConfig& config() const { return config_; }
  Device device() const { return src_embed.weight.device(); }
  // True when no position embedding ties the model to its layout (rotary or alibi positions): it
  // then reads and writes sentences longer than the layout it was trained with.
  bool reads_longer() const { return !pos_embed; }
  // The layout for sentences of up to `source_words` English words and `target_positions` target
  // positions (words + <eos>): the model's own when it has a position embedding (which throws
  // naming the lengths and its layout when they do not fit), else exactly the sentences' own, so
  // that cost follows the sentence, never the layout it was trained with.
  data::Layout layout_fitting(int64_t source_words, int64_t target_positions) const;
  // The source slots a batch whose longest sentence has `longest` words is laid out in (its target
  // slots follow them): the layout's for a model with a position embedding, else `longest`.
  int64_t source_slots(int64_t longest) const { return layout_fitting(longest, 1).max_source; }
  // The most Hindi words greedy decoding writes for a sentence of `source_words` words: max_length
  // when it is above 0, else the model's own limit, which follows the sentence for a model that
  // reads longer ones (2 * source_words + kDecodeMargin) and is the layout's (max_target - 1, room
  // for <eos>) for one with a position embedding. Throws naming the values when max_length is past
  // kMaxDecodeLength or past the layout of a model with a position embedding.
  int64_t decode_limit(int64_t source_words, int64_t max_length = 0) const;
  static constexpr int64_t kDecodeMargin = 10, kMaxDecodeLength = 1024;

 private:
  TranslatorConfig config_;
  nn::Embedding src_embed, tgt_embed;
  std::unique_ptr<nn::Embedding> pos_embed;  // (S + T_tgt, D), only with absolute positions
  std::vector<Block> blocks_;
  std::unique_ptr<nn::Linear> head;
  std::vector<Tensor> last_attention_;  // one (B, T, T) per layer
  double dropout_ = 0.0;
  Generator dropout_gen_{0};

  // The block options of this call: recording as asked, the model's dropout while training.
  BlockOptions block_options(bool record_attention);
  // [src_embed(source) ; tgt_embed(target_input)] + pos_embed   (B, T, D), T = S + target length
  // (without absolute positions, the token embeddings alone)
  Tensor embed(const data::Batch& batch) const;
  // The one layer loop that forward, packed_loss and decode share: x through every block in
  // `context`; observe (when set) sees each block's output. Stops after a block without query rows.
  using BlockObserver = std::function<void(size_t layer, const BlockOutput& output)>;
  Tensor run_blocks(Tensor x, AttentionContext& context, const BlockOptions& options,
                    const BlockObserver& observe = {}) const;
  // The loss over the real positions only, packed as rows (N, D): an English position past its
  // sentence is masked as a key and a target position past <eos> is seen only by later ones, so
  // neither reaches a counted logit. Attention reads each sentence's rows in place (the ragged
  // form of the fused op), except in a knocked-out layer, which runs on (B, T, H) tensors rebuilt
  // from the rows (zeros at the padding); everything else runs on the rows alone.
  Tensor packed_loss(const data::Batch& batch, const Knockout& knockout, double label_smoothing);
  // Greedy decoding by recomputing the whole target prefix through forward() at every step.
  void decode_recomputing(const Tensor& source, const std::vector<int64_t>& source_lengths, const ChooseNext& choose,
                          const ForwardOptions& options);
};

// One English word's vector after every layer, for each sentence: [l][i] is the D-vector of
// english[i]'s word at positions[i] after layer l (0: the input embedding, token + position; l >= 1:
// block l's output). Source positions attend to the source only, so no translation is needed.
std::vector<std::vector<std::vector<double>>> source_word_states(Translator& model,
                                                                 const std::vector<std::vector<std::string>>& english,
                                                                 const std::vector<int64_t>& positions,
                                                                 const data::Vocab& english_vocab);

// Greedy decoding with the final forward pass's attention in layer `layer` (0-based): the
// sentence, its translation and the (T, T) weights over [source ; <sep> translation] (padding
// removed), decoded with `max_length` as ForwardOptions's. A `layer` out of range throws naming the valid range. With a knockout, both the
// decoding and the traced pass run with it (its positions are the model's, as in Knockout).
struct AttentionTrace {
  int64_t layer = 0, layers = 1;            // which layer (0-based) of how many
  std::vector<std::string> english, hindi;  // hindi without <eos>
  std::vector<std::string> labels;          // english tokens, then <sep>, then hindi tokens
  std::vector<double> weights;              // labels.size()^2, row-major
  std::vector<uint8_t> masked;              // same size, 1 where the mask forbids the cell
};
AttentionTrace trace_attention(Translator& model, const std::vector<std::string>& english,
                               const data::Vocab& english_vocab, const data::Vocab& hindi_vocab, int64_t layer,
                               const Knockout& knockout = {}, int64_t max_length = 0);

}  // namespace qkv::models
