// train/cli/explore.cpp — `qkv explore`: one self-contained offline HTML page that embeds trained
// checkpoints and translates in the browser (train/experiments/explorer/explorer_page.cpp writes it; the page
// and its JavaScript forward pass live in tools/explorer/explorer.html). This file reads the options.
#include <memory>
#include <string>
#include <vector>

#include "framework/file_util.h"
#include "train/cli/commands.h"

namespace qkv::app {

struct ExploreOptions {
  std::string checkpoint, out;
  std::vector<std::string> compare, sentences;
  std::string weights = "float32";  // --weights
  int threads = 0;                  // --threads
};

void register_explore(CLI::App& app) {
  auto o = std::make_shared<ExploreOptions>();
  auto* cmd =
      app.add_subcommand("explore", "write an offline HTML page that translates and draws attention in the browser");
  add_checkpoint_option(cmd, o->checkpoint);
  cmd->add_option("--compare", o->compare, "more checkpoints shown side by side (repeatable, e.g. static and none)");
  cmd->add_option("--out", o->out, "the HTML file to write")->required();
  cmd->add_option("--sentence", o->sentences, "a starting sentence (repeatable; default: the demo's showcase)");
  cmd->add_option(
         "--weights", o->weights,
         "the weights in the page: float32 (translates exactly as qkv translate) or float16 (about half the size)")
      ->check(CLI::IsMember({"float16", "float32"}))
      ->capture_default_str();
  add_threads_option(cmd, o->threads);
  cmd->callback([o] {
    check_output_file(o->out);  // a device, pipe or folder is refused before any work
    apply_threads(o->threads);
    std::vector<std::string> paths = {o->checkpoint};
    paths.insert(paths.end(), o->compare.begin(), o->compare.end());
    write_explorer_page(paths, o->sentences, o->out, false,
                        o->weights == "float16" ? PageWeights::float16 : PageWeights::float32);
  });
}

}  // namespace qkv::app
