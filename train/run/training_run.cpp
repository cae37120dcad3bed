// train/run/training_run.cpp — a training run made from its options: the dataset's vocabularies, the
// config (its size checked), the model made ready to train and the optimiser. TrainingRun::open,
// which reads the options and a saved state first, is the trainer's (trainer.cpp).
#include "train/run/training_run.h"

#include "framework/backend.h"
#include "framework/distributed.h"
#include "models/memory_budget.h"
#include "train/run/run_config.h"

namespace qkv::app {

bool TrainingRun::writer() const { return !group || group->rank() == 0; }

// The run's model config, its size checked before any model is made from it.
static models::TranslatorConfig fitting_config(const TrainOptions& o, const data::Dataset& ds,
                                               const data::Vocab& english, const data::Vocab& hindi) {
  const models::TranslatorConfig config = translator_config(o, ds, english, hindi);
  models::check_training_fits(config, static_cast<int>(dtype_size(o.dtype)),
                              o.resume ? RunFolder(o.out_dir).state_path() : std::string("qkv train"));
  return config;
}

// The model made ready to train (its dtype, device, dropout and frozen embeddings), and the
// parameters the optimiser updates.
static std::vector<Tensor> trained_parameters(models::Translator& model, const TrainOptions& o, const data::Dataset& ds,
                                              Device device, dist::ProcessGroup* group) {
  check_validation_measures(model, ds, o.data_dir);
  if (o.dtype != DType::F32) model.to(o.dtype);
  if (device != Device::cpu()) model.to(device);
  // Each rank draws its own dropout masks (runs with dropout are not bit-equal to one process).
  model.set_dropout(o.dropout, o.seed + 1 + (group ? static_cast<uint64_t>(group->rank()) : 0));
  if (o.freeze_embeddings) model.freeze_token_embeddings();
  std::vector<Tensor> trained;
  for (const Tensor& p : model.parameters())
    if (p.requires_grad()) trained.push_back(p);
  return trained;
}

TrainingRun::TrainingRun(const TrainOptions& options, data::Dataset dataset, Device device_, dist::ProcessGroup* group_)
    : o(options), ds(std::move(dataset)), vocabularies_(train_vocabularies(ds)),
      config(fitting_config(o, ds, english, hindi)), device(device_), gen(o.seed), model(config, gen),
      trained(trained_parameters(model, o, ds, device, group_)),
      optimizer(trained, {.lr = o.lr, .weight_decay = o.weight_decay}), group(group_), folder(o.out_dir) {
  if (o.ema > 0) average = &average_.emplace(trained, o.ema);
}

}  // namespace qkv::app
