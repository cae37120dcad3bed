// train/cli/probe.cpp — `qkv probe`: the sense probe of one or more checkpoints (train/experiments/probe/probe.cpp),
// as a table and, with --out, TSV, JSON and a line plot. This file reads the options only.
#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/cli/commands.h"
#include "train/experiments/probe/probe.h"
#include "train/run/training_run.h"

namespace qkv::app {

void register_probe(CLI::App& app) {
  auto o = std::make_shared<ProbeOptions>();
  auto checkpoint = std::make_shared<std::string>();
  auto compare = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("probe",
                                 "sense probe: can a logistic regression read an ambiguous word's sense "
                                 "from its vector after each layer?");
  add_checkpoint_option(cmd, *checkpoint);
  cmd->add_option("--compare", *compare, "more checkpoints, probed the same way (e.g. static)");
  add_data_option(cmd, o->data_dir);
  cmd->add_option("--split", o->split, "the split whose sentences are probed")->capture_default_str();
  cmd->add_option("--cues", o->cues, "the cue file, whose labels give each word's senses [DATA/cues.tsv]");
  cmd->add_option("--per-sense", o->per_sense, "sentences of each sense of each word (half fit, half score)")
      ->check(whole_number_in(4, 100000))
      ->capture_default_str();
  add_seed_option(cmd, o->seed, "seed of the sentence draw");
  cmd->add_option("--out", o->out, "also write DIR/sense_probe.tsv, .json and .png");
  add_device_option(cmd, o->device);
  add_threads_option(cmd, o->threads);
  cmd->callback([o, checkpoint, compare] {
    apply_threads(o->threads);
    if (o->split.empty() || o->split.find('/') != std::string::npos)
      throw std::runtime_error(fmt::format("--split '{}' must name a split of --data (train, test, ...)", o->split));
    if (!o->out.empty()) create_out_folder(o->out);  // an --out that cannot be a folder is refused before any work
    std::vector<std::string> checkpoints = {*checkpoint};
    checkpoints.insert(checkpoints.end(), compare->begin(), compare->end());
    const std::vector<ProbeResult> results = run_probes(*o, checkpoints);
    fmt::print("{}", probe_table(results));
    if (o->out.empty()) return;
    write_probe_files(results, *o, o->out);
    fmt::print("wrote {0}/sense_probe.tsv, .json and .png\n", o->out);
  });
}

}  // namespace qkv::app
