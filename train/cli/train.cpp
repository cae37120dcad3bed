// train/cli/train.cpp — `qkv train`: every option of the option table (train/run/train_options.h), checked
// here and again (with the data) by the training run (train/run/trainer.cpp).
#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "framework/distributed.h"
#include "train/cli/commands.h"
#include "train/run/trainer.h"

namespace qkv::app {

void register_train(CLI::App& app) {
  auto opts = std::make_shared<TrainOptions>();
  auto* train = app.add_subcommand("train", "train the self-attention translator");
  for_each_option([&](const OptionInfo& info, auto member) {
    if (info.kind == OptionKind::Internal) return;
    CLI::Option* option = add_train_option(train, info, (*opts).*member);
    if (info.kind == OptionKind::Testing) option->group("");  // hidden
  });
  train->callback([opts, train] {
    if (opts->resume)  // the saved state decides every setting of the run
      for_each_option([&](const OptionInfo& info, auto) {
        if (info.saved() && train->count(info.flag) > 0)
          throw std::runtime_error(fmt::format("--resume takes every setting from the saved run; drop {}", info.flag));
      });
    // mpirun without --data-parallel would run N identical trainings into one --out
    const int launched = dist::launched_process_count();
    if (launched > 1 && !opts->data_parallel)
      throw std::runtime_error(fmt::format(
          "mpirun started {} copies of qkv train without --data-parallel, and each would train the same model into {}; "
          "add --data-parallel (mpirun -np {} qkv train --data-parallel ...), or run qkv train without mpirun",
          launched, opts->out_dir, launched));
    if (opts->data_parallel && launched == 1 && dist::built_with_mpi())
      fmt::print(
          stderr,
          "note: --data-parallel with 1 rank (not launched by mpirun: mpirun -np N qkv train --data-parallel ...)\n");
    apply_threads(opts->threads);
    install_interrupt_handlers();
    train_translator(*opts);
  });
}

}  // namespace qkv::app
