// train/cli/scaling.cpp — `qkv scaling`: its options, checked before the long computation; the
// computation and its tables and picture are train/experiments/scaling/scaling.cpp.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <stdexcept>

#include "train/cli/commands.h"
#include "train/experiments/scaling/scaling.h"

namespace qkv::app {

namespace fs = std::filesystem;

void register_scaling(CLI::App& app) {
  auto o = std::make_shared<ScalingCommandOptions>();
  auto* cmd = app.add_subcommand("scaling", "why scores are divided by sqrt(d_k): variance, saturation, gradients");
  cmd->add_option("--out", o->out, "output directory for scaling.png")->capture_default_str();
  add_seed_option(cmd, o->run.seed, "random seed (same seed, same numbers)");
  cmd->add_option("--pairs", o->run.pairs, "sampled (q, k) pairs per dimension")
      ->check(whole_number_in(int64_t{2}, int64_t{100000000}))
      ->capture_default_str();
  cmd->add_option("--max-d", o->run.max_d, "largest head width (a power of two; d = 1, 2, 4, ..., max)")
      ->check(whole_number_in(int64_t{1}, int64_t{16384}))
      ->capture_default_str();
  cmd->add_option("--draws", o->run.grad_draws, "random (Q, K) draws per dimension for the gradient table")
      ->check(whole_number_in(int64_t{1}, int64_t{1000000}))
      ->capture_default_str();
  add_threads_option(cmd, o->threads);
  cmd->callback([o] {
    apply_threads(o->threads);
    if ((o->run.max_d & (o->run.max_d - 1)) != 0)
      throw std::runtime_error(fmt::format("--max-d must be a power of two, got {}", o->run.max_d));
    if (o->out.empty()) throw std::runtime_error("--out must not be empty");
    // Fail before the long computation when the output path can never become a directory.
    std::error_code ec;
    if (fs::exists(o->out, ec) && !fs::is_directory(o->out, ec))
      throw std::runtime_error(fmt::format("--out '{}' exists and is not a directory", o->out));
    run_scaling_command(*o);
  });
}

}  // namespace qkv::app
