// train/experiments/probe/probe.cpp — the sense probe (sense_probe.cpp) of one or more checkpoints, as
// `qkv probe` and the demo run it: the sentences of each two-sense word, held-out accuracy per layer
// of a logistic regression that reads the sense from the word's vector, the console table and the
// TSV, JSON and line-plot files.
#include "train/experiments/probe/probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/file_util.h"
#include "train/experiments/probe/sense_probe.h"
#include "models/translator_io.h"
#include "tools/render/render.h"

namespace qkv::app {

namespace fs = std::filesystem;

// --cues, or the cue file of --data (probe and cues follow --data like every other command).
static std::string cue_file(const ProbeOptions& o) { return o.cues.empty() ? data::cue_file_of(o.data_dir) : o.cues; }

std::vector<data::SenseWord> load_sense_words(const ProbeOptions& o) {
  const std::vector<data::SentencePair> pairs = data::load_pairs((fs::path(o.data_dir) / (o.split + ".tsv")).string());
  return data::sense_examples(pairs, data::load_cues(cue_file(o)), o.per_sense, o.seed);
}

std::vector<ProbeResult> run_probes(const ProbeOptions& o, const std::vector<std::string>& checkpoints) {
  const std::vector<data::SenseWord> words = load_sense_words(o);
  if (words.empty())
    throw std::runtime_error(fmt::format("{}: no word of {} with two senses has sentences of both senses in split {}",
                                         o.data_dir, cue_file(o), o.split));
  std::vector<ProbeResult> results;
  for (const std::string& path : checkpoints) {
    models::LoadedTranslator loaded = models::load_translator(path, Device::parse(o.device));
    results.push_back({path, models::attention_mode_name(loaded.model->config().attention),
                       models::probe_senses(*loaded.model, words, loaded.english)});
  }
  return results;
}

std::string probe_table(const std::vector<ProbeResult>& results) {
  size_t layers = 0, width = 5;
  for (const auto& r : results)
    layers = std::max(layers, r.report.accuracy.size()), width = std::max(width, r.mode.size());
  std::string table = fmt::format("{:<{}} {:>9}", "model", width, "embedding");
  for (size_t l = 1; l < layers; ++l) table += fmt::format(" {:>7}", fmt::format("L{}", l));
  table += "\n";
  for (const auto& r : results) {
    table += fmt::format("{:<{}} {:>8.1f}%", r.mode, width, 100 * r.report.mean(0));
    for (size_t l = 1; l < r.report.accuracy.size(); ++l) table += fmt::format(" {:>6.1f}%", 100 * r.report.mean(l));
    table += "\n";
  }
  if (!results.empty()) {
    const auto& first = results.front().report;
    std::string words;
    for (size_t w = 0; w < first.words.size(); ++w)
      words += fmt::format("{}{} ({})", w ? ", " : "", first.words[w], first.examples[w]);
    table += fmt::format(
        "mean over the words {}: held-out accuracy of a logistic regression on the word's vector after each layer "
        "(embedding: token + position); chance 50%\n",
        words);
  }
  return table;
}

void write_probe_files(const std::vector<ProbeResult>& results, const ProbeOptions& o, const std::string& dir) {
  fs::create_directories(dir);
  std::string tsv = "checkpoint\tattention\tlayer\tword\texamples\taccuracy\n";
  nlohmann::ordered_json j = {{"split", o.split}, {"per_sense", o.per_sense}, {"seed", std::to_string(o.seed)}};
  render::LinePlotSpec plot{.title = fmt::format("sense probe: held-out accuracy reading the ambiguous word's sense "
                                                 "from its vector\nmean over the words, split {}; chance is 50%",
                                                 o.split),
                            .x_label = "layer (0: the input embedding)",
                            .y_label = "probe accuracy (%)",
                            .series = {}};
  static const render::RGB palette[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {148, 103, 189}};
  for (size_t m = 0; m < results.size(); ++m) {
    const ProbeResult& r = results[m];
    nlohmann::ordered_json model = {{"checkpoint", r.checkpoint}, {"attention", r.mode}, {"words", r.report.words}};
    render::Series s;
    s.name = fmt::format("{} ({})", r.mode, fs::path(r.checkpoint).parent_path().filename().string());
    s.color = palette[m % std::size(palette)];
    s.markers = true;
    for (size_t l = 0; l < r.report.accuracy.size(); ++l) {
      for (size_t w = 0; w < r.report.words.size(); ++w)
        tsv += fmt::format("{}\t{}\t{}\t{}\t{}\t{:.4f}\n", r.checkpoint, r.mode, l, r.report.words[w],
                           r.report.examples[w], r.report.accuracy[l][w]);
      model["layers"].push_back(
          {{"layer", l}, {"mean_accuracy", r.report.mean(l)}, {"accuracy", r.report.accuracy[l]}});
      s.x.push_back(static_cast<double>(l));
      s.y.push_back(100 * r.report.mean(l));
    }
    j["models"].push_back(model);
    plot.series.push_back(std::move(s));
  }
  double last_layer = 1;
  for (const ProbeResult& r : results)
    last_layer = std::max(last_layer, static_cast<double>(r.report.accuracy.size() - 1));
  // chance, drawn so that the axis starts there
  plot.series.push_back(
      {.name = "chance (50%)", .x = {0, last_layer}, .y = {50, 50}, .color = {127, 127, 127}, .dashed = true});
  plot.width = 1000;
  plot.integer_x = true;
  const std::string stem = (fs::path(dir) / "sense_probe").string();
  write_file_atomic(stem + ".tsv", tsv);
  write_file_atomic(stem + ".json", j.dump(2) + "\n");
  render::write_png(render::render_line_plot(plot), stem + ".png");
}

}  // namespace qkv::app
