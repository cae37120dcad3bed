// models/noisy_channel.cpp — beam search, one sentence at a time, and the channel's rerank of its
// candidates (noisy_channel.h).
#include "models/noisy_channel.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "framework/autograd.h"
#include "framework/ops.h"

namespace qkv::models {

namespace {

using data::Vocab;

struct Candidate {
  std::vector<int64_t> ids;  // Hindi words, without <eos>
  double score = 0;          // log p(ids [+ <eos>] | english) under the forward model
  bool ended = false;        // chose <eos> (else cut at the limit)
};

// A teacher-forced batch: row r reads sources[r] (laid in S slots, padded) and <sep> targets[r]
// (padded to the longest); target_output is target_input's shape, unread.
data::Batch forced_batch(const std::vector<std::vector<int64_t>>& sources, int64_t S,
                         const std::vector<std::vector<int64_t>>& targets, Device device) {
  const int64_t B = static_cast<int64_t>(sources.size());
  int64_t Tt = 1;
  for (const auto& t : targets) Tt = std::max<int64_t>(Tt, static_cast<int64_t>(t.size()) + 1);
  std::vector<int64_t> src(B * S, Vocab::PAD), tgt(B * Tt, Vocab::PAD);
  data::Batch batch;
  for (int64_t b = 0; b < B; ++b) {
    std::copy(sources[b].begin(), sources[b].end(), src.begin() + b * S);
    batch.source_lengths.push_back(static_cast<int64_t>(sources[b].size()));
    tgt[b * Tt] = Vocab::SEP;
    std::copy(targets[b].begin(), targets[b].end(), tgt.begin() + b * Tt + 1);
  }
  batch.source = Tensor::from_ids(src, {B, S}, device);
  batch.target_input = Tensor::from_ids(tgt, {B, Tt}, device);
  batch.target_output = batch.target_input;
  return batch;
}

// The beam's candidates for one sentence: each step every live hypothesis offers its `beam` best
// next words; in order of score (ties in the order offered), one that chose <eos> has ended, and
// the others live on until `beam` of them do. The search stops when none lives, when 4 x beam have
// ended, or at the limit, where the live ones may still end; when none ever ended, the ones cut
// at the limit are the candidates. The hypotheses are the rows of one cached decode (the sentence
// in `beam` rows), each step's survivors going on from their parents' rows.
std::vector<Candidate> beam_candidates(Translator& model, const std::vector<int64_t>& source, int64_t limit,
                                       int64_t beam) {
  const int64_t n = static_cast<int64_t>(source.size()), S = model.source_slots(n);
  std::vector<int64_t> rows(beam * S, Vocab::PAD);
  for (int64_t r = 0; r < beam; ++r) std::copy(source.begin(), source.end(), rows.begin() + r * S);
  std::vector<Candidate> live{Candidate{}}, ended;
  bool cut = false;  // none ended by the limit: the live ones, cut there, are the candidates
  const ForwardOptions options{.max_length = limit};
  const auto step = [&](const Tensor& logits, int64_t t, std::vector<int64_t>& next, std::vector<int64_t>& from) {
    const std::vector<double> log_p = log_softmax(logits).to_vector();  // (beam, 1, V): row a is live[a]
    const int64_t V = logits.size(2), k = std::min(beam, V);
    struct Offer {
      double score;
      size_t from;
      int64_t word;
    };
    std::vector<Offer> offers;
    std::vector<int64_t> order(static_cast<size_t>(V));
    for (size_t a = 0; a < live.size(); ++a) {
      const double* p = log_p.data() + a * V;
      for (int64_t v = 0; v < V; ++v) order[v] = v;
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](int64_t x, int64_t y) { return p[x] > p[y] || (p[x] == p[y] && x < y); });
      for (int64_t i = 0; i < k; ++i)
        if (t < limit || order[i] == Vocab::EOS)  // at the limit a hypothesis may only end
          offers.push_back({live[a].score + p[order[i]], a, order[i]});
    }
    std::stable_sort(offers.begin(), offers.end(), [](const Offer& x, const Offer& y) { return x.score > y.score; });
    std::vector<Candidate> survivors;
    from.assign(beam, 0), next.assign(beam, Vocab::PAD);
    for (const Offer& offer : offers) {
      Candidate c{live[offer.from].ids, offer.score, offer.word == Vocab::EOS};
      if (c.ended) {
        ended.push_back(std::move(c));
        continue;
      }
      c.ids.push_back(offer.word);
      from[survivors.size()] = static_cast<int64_t>(offer.from), next[survivors.size()] = offer.word;
      survivors.push_back(std::move(c));
      if (static_cast<int64_t>(survivors.size()) == beam) break;
    }
    cut = t == limit && ended.empty();
    if (!cut) live = std::move(survivors);
    return cut || live.empty() || static_cast<int64_t>(ended.size()) >= 4 * beam;
  };
  model.decode(Tensor::from_ids(rows, {beam, S}, model.device()), std::vector<int64_t>(beam, n), step, options);
  return ended.empty() ? live : ended;
}

// log p(targets[r] + <eos> | sources[r]) under `model` for each row, read from one teacher-forced batch.
std::vector<double> forced_scores(Translator& model, const std::vector<std::vector<int64_t>>& sources,
                                  const std::vector<std::vector<int64_t>>& targets) {
  int64_t longest = 0;
  for (const auto& s : sources) longest = std::max<int64_t>(longest, static_cast<int64_t>(s.size()));
  const Tensor logits = model.forward(forced_batch(sources, model.source_slots(longest), targets, model.device()));
  const std::vector<double> log_p = log_softmax(logits).to_vector();  // (rows, longest target + 1, V)
  const int64_t T = logits.size(1), V = logits.size(2);
  std::vector<double> scores;
  for (size_t r = 0; r < sources.size(); ++r) {
    const std::vector<int64_t>& target = targets[r];
    double sum = 0;
    for (size_t t = 0; t <= target.size(); ++t)
      sum += log_p[(r * T + t) * V + (t < target.size() ? target[t] : Vocab::EOS)];
    scores.push_back(sum);
  }
  return scores;
}

// The sum over the channels of log p(english + <eos> | candidate) for each candidate (a channel's
// vocabularies are the forward model's turned round, so a candidate's ids are its source ids; one
// trained right to left scores the English turned round); a candidate with no words gets -infinity
// (it cannot give any English back).
std::vector<double> channel_scores(const Channel& channel, const std::vector<int64_t>& english_ids,
                                   const std::vector<Candidate>& candidates) {
  std::vector<double> scores(candidates.size(), -std::numeric_limits<double>::infinity());
  std::vector<std::vector<int64_t>> sources;
  std::vector<size_t> scored;
  for (size_t c = 0; c < candidates.size(); ++c)
    if (!candidates[c].ids.empty()) sources.push_back(candidates[c].ids), scored.push_back(c), scores[c] = 0;
  for (const LoadedTranslator& model : channel.loaded) {
    std::vector<int64_t> english = english_ids;
    if (model.model->config().right_to_left) std::ranges::reverse(english);
    const std::vector<double> back = forced_scores(*model.model, sources, {scored.size(), english});
    for (size_t r = 0; r < scored.size(); ++r) scores[scored[r]] += back[r];
  }
  return scores;
}

// Each writer's candidates (a right-to-left one's turned round; its words have the forward model's
// ids) added where new, then each candidate scored by log p under the forward model plus under each writer.
void add_writers(const std::vector<LoadedTranslator>& writers, Translator& forward, const std::vector<int64_t>& source,
                 int64_t limit, int64_t beam, std::vector<Candidate>& candidates) {
  for (const LoadedTranslator& writer : writers)
    for (Candidate& c : beam_candidates(*writer.model, source, limit, beam)) {
      if (writer.model->config().right_to_left) std::ranges::reverse(c.ids);
      if (std::ranges::none_of(candidates, [&](const Candidate& d) { return d.ids == c.ids; }))
        candidates.push_back(std::move(c));
    }
  std::vector<std::vector<int64_t>> words, turned;
  for (const Candidate& c : candidates) words.push_back(c.ids), turned.emplace_back(c.ids.rbegin(), c.ids.rend());
  const std::vector<std::vector<int64_t>> sources(candidates.size(), source);
  std::vector<double> total = forced_scores(forward, sources, words);
  for (const LoadedTranslator& writer : writers) {
    const std::vector<double> own =
        forced_scores(*writer.model, sources, writer.model->config().right_to_left ? turned : words);
    for (size_t c = 0; c < candidates.size(); ++c) total[c] += own[c];
  }
  for (size_t c = 0; c < candidates.size(); ++c) candidates[c].score = total[c];
}

}  // namespace

Channel load_channel(const std::vector<std::string>& paths, const LoadedTranslator& forward, int64_t beam,
                     Device device) {
  if (beam < 1 || beam > Channel::kMaxBeam)
    throw std::runtime_error(fmt::format("--beam {} is outside 1 to {}", beam, Channel::kMaxBeam));
  if (forward.model->config().right_to_left)
    throw std::runtime_error(
        "this checkpoint writes right to left: the rerank takes it as --right-to-left beside a "
        "left-to-right model, not as the model it reranks");
  Channel channel{{}, beam, {}};
  for (const std::string& path : paths) {
    const LoadedTranslator& c = channel.loaded.emplace_back(load_translator(path, device));
    if (c.english.words() != forward.hindi.words() || c.hindi.words() != forward.english.words())
      throw std::runtime_error(fmt::format(
          "{}: its vocabularies ({} source, {} target words) are not this model's turned round ({} Hindi, {} "
          "English): train the channel with `qkv train --reverse` on the same data",
          path, c.english.size(), c.hindi.size(), forward.hindi.size(), forward.english.size()));
    if (!c.model->reads_longer())
      throw std::runtime_error(
          fmt::format("{}: a channel model must read any length (rotary or alibi positions); this one has {} positions",
                      path, positions_name(c.model->config().positions)));
  }
  return channel;
}

void load_writer(Channel& channel, const std::string& path, const LoadedTranslator& forward, bool right_to_left,
                 Device device) {
  LoadedTranslator model = load_translator(path, device);
  const char* mismatch =
      model.english.words() == forward.hindi.words() && model.hindi.words() == forward.english.words()
          ? "it was trained with `qkv train --reverse` (give it as --channel)"
      : model.english.words() != forward.english.words() || model.hindi.words() != forward.hindi.words()
          ? "its vocabularies are not this model's (train it on the same data)"
      : model.model->config().right_to_left != right_to_left
          ? (right_to_left ? "it was not trained with `qkv train --right-to-left`"
                           : "it was trained with `qkv train --right-to-left` (give it as --right-to-left)")
      : !model.model->reads_longer() ? "it must read any length (rotary or alibi positions)"
                                     : nullptr;
  if (mismatch)
    throw std::runtime_error(fmt::format("{}: not a {} model for this one: {}", path,
                                         right_to_left ? "right-to-left" : "left-to-right", mismatch));
  channel.writers.push_back(std::move(model));
}

std::vector<std::vector<std::string>> translate_reranked(Translator& forward,
                                                         const std::vector<std::vector<std::string>>& english,
                                                         const data::Vocab& english_vocab,
                                                         const data::Vocab& hindi_vocab, const Channel& channel,
                                                         const ForwardOptions& options) {
  NoGradGuard no_grad;
  std::vector<std::vector<std::string>> out;
  if (options.cut_at_limit) options.cut_at_limit->assign(english.size(), 0);
  for (size_t b = 0; b < english.size(); ++b) {
    std::vector<int64_t> ids;
    for (const std::string& word : english[b]) ids.push_back(english_vocab.id(word));
    const int64_t limit = forward.decode_limit(static_cast<int64_t>(ids.size()), options.max_length);
    std::vector<Candidate> candidates = beam_candidates(forward, ids, limit, channel.beam);
    if (!channel.writers.empty()) add_writers(channel.writers, forward, ids, limit, channel.beam, candidates);
    const std::vector<double> back = channel_scores(channel, ids, candidates);
    size_t best = 0;
    for (size_t c = 1; c < candidates.size(); ++c)
      if (candidates[c].score + back[c] > candidates[best].score + back[best]) best = c;
    std::vector<std::string> words;
    for (int64_t id : candidates[best].ids) words.push_back(hindi_vocab.word(id));
    out.push_back(std::move(words));
    if (options.cut_at_limit && !candidates[best].ended) (*options.cut_at_limit)[b] = 1;
  }
  return out;
}

}  // namespace qkv::models
