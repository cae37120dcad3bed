// train/cli/demo.cpp — `qkv demo`: its options; the run is train/experiments/demo/demo.cpp.
#include <memory>

#include "train/cli/commands.h"
#include "train/experiments/demo/demo.h"

namespace qkv::app {

void register_demo(CLI::App& app) {
  auto d = std::make_shared<DemoOptions>();
  auto* demo = app.add_subcommand("demo",
                                  "the tutorial's experiment in one command: learned, static and no attention, "
                                  "compared, measured and drawn");
  demo->add_option("--out", d->out, "output directory")->capture_default_str();
  add_data_option(demo, d->base.data_dir);
  add_option_of_row(demo, &TrainOptions::epochs, d->base.epochs, "epochs per model");
  add_option_of_row(demo, &TrainOptions::layers, d->base.layers, "stacked blocks of the default model");
  add_seed_option(demo, d->base.seed, "random seed");
  demo->add_option("--grid", d->grid, "an ablation.tsv of qkv ablate to draw instead of the recorded grid");
  add_threads_option(demo, d->base.threads);
  demo->callback([d] {
    apply_threads(d->base.threads);
    run_demo(*d);
  });
}

}  // namespace qkv::app
