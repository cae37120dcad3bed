// train/run/run_folder.h — the folder a training run owns (--out): the names of the files it
// writes, named here once (the end of an epoch's outputs, written by the loop and again by --resume
// of a run killed between them, are write_epoch_outputs's, run_state.h).
#pragma once

#include <string>
#include <vector>

namespace qkv::app {

class RunFolder {
 public:
  explicit RunFolder(std::string dir) : dir_(std::move(dir)) {}

  // The files a run writes, in the order of a finished run: the best model, the resumable state,
  // the metrics per epoch, the loss every few steps and the plot.
  static constexpr const char* kModel = "model.safetensors";
  static constexpr const char* kState = "train_state.safetensors";
  static constexpr const char* kMetrics = "metrics.csv";
  static constexpr const char* kSteps = "steps.csv";
  static constexpr const char* kPlot = "loss.png";
  static const std::vector<const char*>& file_names();

  std::string path(const char* name) const;  // DIR/name
  std::string model_path() const { return path(kModel); }
  std::string state_path() const { return path(kState); }
  bool has(const char* name) const;
  // A finished run: its state, written before the last model, metrics and plot and removed after
  // them, is gone and everything else is there.
  bool holds_finished_run() const;

  // Every file of a run (--force starts over), the temp files of killed runs, and the state (after a
  // run's last outputs: nothing is left to resume).
  void remove_run_files() const;
  void remove_stale_temp_files() const;
  void remove_state() const;

 private:
  std::string dir_;
};

// Creates the folder `out` (and its parents) or throws "--out <out>: cannot create that folder
// (<why>)": commands call it before their work, so that an --out that cannot be a folder fails at once.
void create_out_folder(const std::string& out);

}  // namespace qkv::app
