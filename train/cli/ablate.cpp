// train/cli/ablate.cpp — `qkv ablate`: its options; the grid's run is train/experiments/ablation/ablation.cpp.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/cli/commands.h"
#include "train/experiments/ablation/ablation.h"
#include "train/run/trainer.h"

namespace qkv::app {

void register_ablate(CLI::App& app) {
  auto o = std::make_shared<AblateOptions>();
  auto* cmd = app.add_subcommand(
      "ablate",
      "the tutorial's experiment as a grid: blocks x learned/static/none x trained/frozen embeddings, cached per cell");
  cmd->add_option("--out", o->out, "output directory (cells/NAME per model, ablation.tsv, .json, .png)")
      ->capture_default_str();
  add_data_option(cmd, o->base.data_dir);
  cmd->add_option("--layers,--blocks", o->blocks,
                  "numbers of blocks (qkv train --layers), comma-separated, each 1 to 16")
      ->delimiter(',')
      ->check(whole_number_in(1, models::TranslatorConfig::kMaxLayers))
      ->capture_default_str();
  cmd->add_option_function<std::vector<std::string>>(
         "--modes",
         [o](const std::vector<std::string>& names) {
           o->modes.clear();
           for (const auto& name : names) o->modes.push_back(*parse_choice<models::AttentionMode>(name));
         },
         "attention modes, comma-separated: learned, static, none")
      ->delimiter(',')
      ->check(CLI::IsMember(choice_names<models::AttentionMode>()))
      ->default_str("[learned,static,none]");
  cmd->add_flag("--no-frozen", o->no_frozen, "skip the cells with frozen token embeddings");
  cmd->add_flag("--no-control", o->no_control, "skip the equal-parameter control (static with a wider feed-forward)");
  add_option_of_row(cmd, &TrainOptions::epochs, o->base.epochs, "epochs per cell (the same budget for every cell)");
  add_option_of_row(cmd, &TrainOptions::d_model, o->base.d_model);
  add_option_of_row(cmd, &TrainOptions::d_k, o->base.d_k);
  add_option_of_row(cmd, &TrainOptions::d_ff, o->base.d_ff, "feed-forward width F (the control's is wider)");
  add_seed_option(cmd, o->base.seed, "random seed, the same for every cell");
  cmd->add_option("--rerun", o->rerun,
                  "train these cells again although cached (names as printed, e.g. learned-frozen-L2)")
      ->delimiter(',');
  add_threads_option(cmd, o->base.threads);
  cmd->callback([o] {
    if (o->modes.empty()) throw std::runtime_error("--modes: name at least one of learned, static, none");
    std::sort(o->blocks.begin(), o->blocks.end());
    o->blocks.erase(std::unique(o->blocks.begin(), o->blocks.end()), o->blocks.end());
    apply_threads(o->base.threads);
    install_interrupt_handlers();
    run_ablate(*o);
  });
}

}  // namespace qkv::app
