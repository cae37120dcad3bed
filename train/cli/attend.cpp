// train/cli/attend.cpp — the inspection command `attend`: its options; the maps and the knockout are
// train/experiments/attend/attend.cpp.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/file_util.h"
#include "framework/text_util.h"
#include "train/cli/commands.h"
#include "train/experiments/attend/attend.h"

namespace qkv::app {

void register_attend(CLI::App& app) {
  auto a = std::make_shared<AttendOptions>();
  auto* attend = app.add_subcommand("attend", "show the attention weights for a sentence and its greedy translation");
  add_checkpoint_option(attend, a->checkpoint);
  attend->add_option("--compare", a->compare, "a second checkpoint (e.g. static) drawn on the left");
  attend->add_option("--out", a->out, "write to this file (PNG by default) instead of stdout");
  attend->add_option("--format", a->format, "png | text | csv | json (default: png with --out, else text)")
      ->check(CLI::IsMember({"png", "text", "csv", "json"}));
  auto* layer = attend->add_option("--layer", a->layer, "which layer's attention to show, 1-based (default: the last)")
                    ->check(whole_number());
  add_device_option(attend, a->device);
  auto attend_words = std::make_shared<std::vector<std::string>>();
  attend
      ->add_option("sentence", *attend_words, "the English sentence, quoted or not (lower-cased, punctuation dropped)")
      ->required();
  attend->add_option("--knockout", a->knockout,
                     "QUERY:KEY: hide key KEY from query QUERY (rows and columns of the text map, 0-based; QUERY "
                     "target: every target row, all: every row) and print the translation with and without it");
  auto* knockout_layer =
      attend->add_option("--knockout-layer", a->knockout_layer, "the layer of --knockout, 1-based, or all")
          ->capture_default_str();
  add_threads_option(attend, a->threads);
  add_max_length_option(attend, a->max_length);
  attend->callback([a, layer, attend_words, knockout_layer] {
    apply_threads(a->threads);
    if (a->knockout.empty() && knockout_layer->count() > 0)
      throw std::runtime_error("--knockout-layer needs --knockout QUERY:KEY");
    if (!a->knockout.empty() &&
        (layer->count() > 0 || !a->out.empty() || (!a->format.empty() && a->format != "json") || !a->compare.empty()))
      throw std::runtime_error(
          "--knockout prints two translations (or, with --format json, them and every layer's "
          "weights): it takes no --layer (use --knockout-layer), --out, --format other than json or --compare");
    a->sentence = join(*attend_words, " ");
    a->layer_given = layer->count() > 0;
    if (!a->out.empty()) check_output_file(a->out);  // a device, pipe or folder is refused before any work
    run_attend(*a);
  });
}

}  // namespace qkv::app
