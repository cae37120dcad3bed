// train/experiments/scaling/scaling.h — `qkv scaling`'s options and run (scaling.cpp).
#pragma once

#include <string>

#include "train/experiments/scaling/scaling_experiment.h"

namespace qkv::app {

struct ScalingCommandOptions {
  std::string out = "runs/scaling";
  models::ScalingOptions run;  // --seed, --pairs, --max-d, --draws
  int threads = 0;             // --threads
};

// Samples every head width up to o.run.max_d, prints the tables, then writes o.out/scaling.png.
void run_scaling_command(const ScalingCommandOptions& o);

}  // namespace qkv::app
