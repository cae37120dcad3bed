// train/experiments/demo/demo.h — `qkv demo`'s options and run (demo.cpp).
#pragma once

#include <string>

#include "train/run/train_options.h"

namespace qkv::app {

struct DemoOptions {
  // every model's run: data, epochs, the default model's blocks, seed and threads from the command
  // line, the rest `qkv train`'s defaults (and the recorded grid's); each model overrides its own
  TrainOptions base;
  std::string out = "demo_out";
  std::string grid;  // an ablation.tsv to draw; empty: the recorded one (tools/demo/ablation_grid.tsv)
};

// Trains the demo's models into o.out and writes its page and the explorer there.
void run_demo(const DemoOptions& o);

}  // namespace qkv::app
