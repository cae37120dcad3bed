// train/run/data_parallel.cpp — a training run on several ranks: the device per rank, the agreement
// check, each rank's batch slice, the step's all-reduce and validation across the ranks.
#include "train/run/data_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "framework/distributed.h"
#ifdef QKV_WITH_CUDA
#include "framework/cuda/cuda_info.h"
#endif
#include "train/run/evaluate.h"
#include "train/run/run_state.h"
#include "train/run/step_guards.h"

namespace qkv::app {

Device run_device(const TrainOptions& o, [[maybe_unused]] dist::ProcessGroup* group) {
  Device device = o.device;
#ifdef QKV_WITH_CUDA
  if (group && device.type == DeviceType::CUDA && cuda_available())
    device = Device::cuda(group->rank() % cuda_device_count());
#endif
  return device;
}

// FNV-1a over the training and validation pairs: ranks compare it to find a different dataset.
static std::string dataset_fingerprint(const data::Dataset& ds) {
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&](const std::string& text) {
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // a separator no UTF-8 text holds
  };
  for (const auto* split : {&ds.train, &ds.valid})
    for (const auto& p : *split) {
      for (const auto& w : p.english) mix(w);
      mix("\t");
      for (const auto& w : p.hindi) mix(w);
    }
  return fmt::format("{} train and {} valid pairs, hash {:016x}", ds.train.size(), ds.valid.size(), h);
}

void check_ranks_agree(dist::ProcessGroup& group, const TrainOptions& o, const data::Dataset& ds,
                       const models::TranslatorConfig& config) {
  nlohmann::ordered_json mine;
  mine["options"] = nlohmann::json::parse(options_json(o));
  mine["options"]["out"] = o.out_dir;
  mine["options"]["resume"] = o.resume;
  mine["options"]["force"] = o.force;
  mine["options"]["stop_after_steps"] = o.stop_after_steps;
  mine["dataset"] = dataset_fingerprint(ds);
  mine["config"] = config.to_json();
  const std::vector<std::string> all = group.all_gather(mine.dump());
  const nlohmann::json first = nlohmann::json::parse(all[0]);
  for (int r = 1; r < group.size(); ++r) {
    const nlohmann::json other = nlohmann::json::parse(all[r]);
    // "lr" -> "--lr 0.002": the flag as typed, numbers saved as exact hex floats shown plainly
    const auto shown = [](const nlohmann::json& v) {
      if (!v.is_string()) return v.dump();
      const std::string text = v.get<std::string>();
      char* end = nullptr;
      const double number = std::strtod(text.c_str(), &end);
      return !text.empty() && *end == '\0' ? fmt::format("{:g}", number) : text;
    };
    for (const auto& [key, value] : first["options"].items())
      if (other["options"][key] != value) {
        std::string flag = "--" + key;
        std::replace(flag.begin(), flag.end(), '_', '-');
        throw std::runtime_error(fmt::format(
            "data-parallel: rank {} was started with {} {}, rank 0 with {} {}; every rank needs the same flags", r,
            flag, shown(other["options"][key]), flag, shown(value)));
      }
    for (const auto& [key, what] : {std::pair{"dataset", "dataset"}, {"config", "model config or vocabulary"}})
      if (other[key] != first[key])
        throw std::runtime_error(fmt::format("data-parallel: rank {}'s {} ({}) differs from rank 0's ({})", r, what,
                                             other[key].get<std::string>(), first[key].get<std::string>()));
  }
}

RankBatch rank_batch(const TrainingRun& run, std::vector<size_t> idx, int64_t step) {
  RankBatch r;
  if (run.group) {
    for (size_t i : idx) r.batch_tokens += static_cast<int64_t>(run.ds.train[i].hindi.size()) + 1;  // + <eos>
    const size_t n = idx.size(), rank = static_cast<size_t>(run.group->rank()),
                 N = static_cast<size_t>(run.group->size());
    idx = std::vector<size_t>(idx.begin() + n * rank / N, idx.begin() + n * (rank + 1) / N);
  }
  // each row's draws are keyed by the seed, the step and its pair, as one process would draw them
  std::vector<uint64_t> keys;
  for (size_t i : idx)
    keys.push_back(Generator::mixed_seed(Generator::mixed_seed(run.o.seed, static_cast<uint64_t>(step)), i));
  data::HiddenInputs hidden{run.o.target_noise, {}};
  if (hidden.rate > 0)
    for (uint64_t key : keys) hidden.row_keys.push_back(Generator::mixed_seed(key, 1));
  r.batch = idx.empty() ? data::Batch{}
                        : data::make_batch(run.ds.train, idx, run.english, run.hindi,
                                           trimmed_layout(run.config.layout, run.ds.train, idx), run.device, hidden);
  if (run.group) r.share = static_cast<double>(r.batch.target_tokens) / static_cast<double>(r.batch_tokens);
  if (run.config.random_positions > 0) r.batch.row_keys = std::move(keys);
  return r;
}

int all_reduce_step(const TrainingRun& run, Tensor& loss) {
  const Tensor zero = Tensor::zeros({}, run.trained.front().dtype(), run.device);
  const auto summed = dist::all_reduce_gradients(
      *run.group, run.trained,
      {loss.defined() ? loss.detach() : zero, Tensor::scalar(interrupt_signal.load() != 0 ? 1.0 : 0.0)});
  loss = reshape(summed[0], {});
  return static_cast<int>(summed[1].item());
}

EvalResult evaluate_across_ranks(TrainingRun& run) {
  dist::ProcessGroup& group = *run.group;
  const std::vector<data::SentencePair>& pairs = run.ds.valid;
  const size_t n = pairs.size(), r = static_cast<size_t>(group.rank()), N = static_cast<size_t>(group.size());
  const std::vector<data::SentencePair> mine(pairs.begin() + n * r / N, pairs.begin() + n * (r + 1) / N);
  const EvalResult local = evaluate(run.model, mine, run.english, run.hindi);
  Tensor sums = Tensor::from_vector(
      {local.loss * local.tokens, local.token_accuracy * local.tokens, local.exact_match * local.sentences,
       static_cast<double>(local.sentences), static_cast<double>(local.tokens), static_cast<double>(local.skipped)},
      {6}, DType::F64);
  group.all_reduce_sum(sums);
  const std::vector<double> s = sums.to_vector();
  EvalResult all;
  all.sentences = static_cast<int64_t>(std::llround(s[3]));
  all.tokens = static_cast<int64_t>(std::llround(s[4]));
  all.skipped = static_cast<int64_t>(std::llround(s[5]));
  all.loss = all.tokens ? s[0] / s[4] : 0;
  all.token_accuracy = all.tokens ? s[1] / s[4] : 0;
  all.exact_match = all.sentences ? std::round(s[2]) / s[3] : 0;
  all.decode_seconds = local.decode_seconds;
  return all;
}

}  // namespace qkv::app
