// train/experiments/scaling/scaling.h — `qkv scaling`'s options and run (scaling.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace qkv::app {

struct ScalingCommandOptions {
  std::string out = "runs/scaling";
  uint64_t seed = 0;
  int64_t pairs = 50000;
  int64_t max_d = 1024;
  int64_t draws = 200;
  int threads = 0;  // --threads
};

// Samples every head width up to o.max_d, prints the tables, then writes o.out/scaling.png.
void run_scaling_command(const ScalingCommandOptions& o);

}  // namespace qkv::app
