// train/cli/bench.cpp — `qkv bench`: its options and its report (text, or JSON with every
// measurement and its unit); the measurements are train/experiments/bench/bench.cpp's.
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "framework/backend.h"
#include "framework/distributed.h"
#include "train/cli/commands.h"
#include "train/experiments/bench/bench.h"

namespace qkv::app {

void register_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "measure matmul overhead and training throughput");
  auto o = std::make_shared<BenchOptions>();
  cmd->add_option("--size", o->only, "toy | large | all")
      ->check(CLI::IsMember({"toy", "large", "all"}))
      ->capture_default_str();
  add_threads_option(cmd, o->threads);
  cmd->add_option("--device", o->devices, "devices to measure (repeatable): cpu, cuda")->capture_default_str();
  cmd->add_option("--steps", o->steps, "timed training steps per size")
      ->check(whole_number_in(1, 100000))
      ->capture_default_str();
  auto* attention_length =
      cmd->add_option("--attention-length", o->lengths,
                      "instead of training, time the fused and the composed attention op (forward and backward, "
                      "causal, one head of --attention-width) at these sequence lengths, on the first --device")
          ->check(whole_number_in(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--attention-width", o->width, "the head width H for --attention-length")
      ->check(whole_number_in(int64_t{1}, int64_t{4096}))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "text | json (every measurement with its unit, printed at the end)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  auto* by_positions = cmd->add_option("--positions", o->positions,
                                       "instead of the full set, time a training step with each of these positions "
                                       "schemes beside absolute, in alternating rounds, on the first --device")
                           ->check(CLI::IsMember({"absolute", "rotary", "absolute+rotary", "alibi"}));
  auto* parallel = cmd->add_flag(
      "--data-parallel", o->data_parallel,
      "under mpirun: time data-parallel training steps (step, all-reduce, bytes) and project the scaling");
  by_positions->excludes(attention_length)->excludes(parallel);  // three different benchmarks
  attention_length->excludes(parallel);
  cmd->callback([o] {
    apply_threads(o->threads);
    BenchOutput out;
    out.json = o->format == "json";
    measure_all(out, *o);
    if (o->data_parallel && dist::ProcessGroup::world().rank() != 0) return;  // rank 0 reports
    if (out.json) {
      nlohmann::ordered_json report;
      const std::string version = version_text();  // "qkv X.Y.Z\nbuild: ..."
      report["version"] = version.substr(0, version.find('\n'));
      report["build"] = version.substr(version.find('\n') + 1);
      report["threads"] = cpu_threads();  // the count used (--threads 0: QKV_THREADS or one per core)
      report["measurements"] = out.measurements;
      fmt::print("{}\n", report.dump(2));
    }
  });
}

}  // namespace qkv::app
