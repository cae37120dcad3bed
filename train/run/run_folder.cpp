// train/run/run_folder.cpp — the files of a training run's folder (RunFolder, training_run.h): their names
// and the removals that several places make.
#include "train/run/training_run.h"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace qkv::app {

namespace fs = std::filesystem;

const std::vector<const char*>& RunFolder::file_names() {
  static const std::vector<const char*> names = {kModel, kState, kMetrics, kSteps, kPlot};
  return names;
}

std::string RunFolder::path(const char* name) const { return (fs::path(dir_) / name).string(); }

bool RunFolder::has(const char* name) const {
  std::error_code ec;
  return fs::exists(fs::path(dir_) / name, ec);
}

bool RunFolder::holds_finished_run() const { return !has(kState) && has(kModel) && has(kMetrics) && has(kPlot); }

void RunFolder::remove_run_files() const {
  std::error_code ec;
  for (const char* name : file_names()) fs::remove(fs::path(dir_) / name, ec);
}

void RunFolder::remove_stale_temp_files() const {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    for (const char* output : file_names())
      if (name.rfind(std::string(output) + ".tmp", 0) == 0) fs::remove(entry.path(), ec);
  }
}

void RunFolder::remove_state() const {
  std::error_code ec;
  fs::remove(state_path(), ec);
}

void create_out_folder(const std::string& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out))
    throw std::runtime_error(
        fmt::format("--out {}: cannot create that folder ({})", out, ec ? ec.message() : "a file is in the way"));
}

}  // namespace qkv::app
