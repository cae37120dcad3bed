// train/cli/cues.cpp — `qkv cues`: its options; the measurement and its report are
// train/experiments/cues/cues.cpp.
#include <memory>

#include "train/cli/commands.h"
#include "train/experiments/cues/cues.h"

namespace qkv::app {

void register_cues(CLI::App& app) {
  auto o = std::make_shared<CuesOptions>();
  auto* cmd = app.add_subcommand(
      "cues", "cue attention and attention-knockout flip rates over the cue file of --data (DATA/cues.tsv)");
  add_checkpoint_option(cmd, o->checkpoint);
  cmd->add_option("--compare", o->compare, "more checkpoints, measured the same way (e.g. static)");
  cmd->add_option("--split", o->split, "sense_context | idiom_context | test")
      ->check(CLI::IsMember({"sense_context", "idiom_context", "test"}))
      ->capture_default_str();
  add_data_option(cmd, o->data_dir, "dataset directory, whose cues.tsv is read");
  cmd->add_option("--cues", o->cues,
                  "the cue file: per sentence the ambiguous word's and its cue's positions and readings "
                  "(train/README.md, qkv cues) [DATA/cues.tsv]");
  cmd->add_option("--out", o->out, "also write DIR/cues_SPLIT.tsv, .json and .png");
  add_seed_option(cmd, o->seed, "seed of the random knocked-out word");
  add_device_option(cmd, o->device);
  add_threads_option(cmd, o->threads);
  cmd->callback([o] {
    apply_threads(o->threads);
    run_cues(*o);
  });
}

}  // namespace qkv::app
