// train/experiments/cues/cues.cpp — `qkv cues`: cue attention and the knockout flip rates of one or more
// checkpoints over a split of the cue file, as a table (the demo prints it too), TSV, JSON and a
// histogram PNG. The measuring is cue_analysis.cpp; this file reads the checkpoints and writes the results.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/experiments/cues/cues.h"
#include "data/cues.h"
#include "framework/file_util.h"
#include "models/translator_io.h"
#include "tools/render/render.h"

namespace qkv::app {

namespace fs = std::filesystem;

std::string cue_tables(const std::vector<CueResult>& results) {
  std::string table =
      fmt::format("{:<8} {:>5} {:>9} {:>9} {:>10}\n", "mode", "layer", "cue peak", "others", "cue above");
  for (const CueResult& r : results)
    for (const models::CueLayer& l : r.report.layers)
      table += fmt::format("{:<8} {:>5} {:>9.3f} {:>9.3f} {:>9.1f}%\n", r.mode, l.layer + 1, l.cue_mean,
                           l.baseline_mean, 100 * l.cue_above_fraction);
  table += fmt::format("\n{:<8} {:>7} {:>12} {:>15} {:>14} {:>17} {:>19} {:>22}  {}\n", "mode", "trials", "cue KO flip",
                       "random KO flip", "cue KO change", "random KO change", "cue KO flip, all q",
                       "random KO flip, all q", "checkpoint");
  for (const CueResult& r : results) {
    const models::CueReport& k = r.report;
    if (k.trials == 0) {  // no rate was measured: say so rather than print 0.0%, which reads as "no effect"
      table += fmt::format("{:<8} {:>7}  no trials: no sentence kept its reading, so nothing was knocked out  {}\n",
                           r.mode, 0, r.checkpoint);
      continue;
    }
    table += fmt::format("{:<8} {:>7} {:>11.1f}% {:>14.1f}% {:>13.1f}% {:>16.1f}% {:>18.1f}% {:>21.1f}%  {}\n", r.mode,
                         k.trials, 100 * k.cue_flip_rate(), 100 * k.random_flip_rate(),
                         100 * k.rate(k.cue_changes, k.trials), 100 * k.rate(k.random_changes, k.trials),
                         100 * k.cue_flip_rate_all_queries(), 100 * k.random_flip_rate_all_queries(), r.checkpoint);
  }
  return table;
}

namespace {

std::string results_tsv(const std::vector<CueResult>& results, const std::string& split) {
  std::string tsv =
      "checkpoint\tattention\tsplit\tlayer\tsentences\tcue_peak\tbaseline_peak\tcue_above_baseline\t"
      "knockout_trials\tcue_knockout_flip_rate\trandom_knockout_flip_rate\tcue_knockout_change_rate\t"
      "random_knockout_change_rate\tcue_knockout_all_queries_flip_rate\trandom_knockout_all_queries_flip_rate\n";
  for (const CueResult& r : results)
    for (const models::CueLayer& l : r.report.layers)
      tsv += fmt::format(
          "{}\t{}\t{}\t{}\t{}\t{:.4f}\t{:.4f}\t{:.4f}\t{}\t{:.4f}\t{:.4f}\t{:.4f}\t{:.4f}\t{:.4f}\t{:.4f}\n",
          r.checkpoint, r.mode, split, l.layer + 1, l.cue_peaks.size(), l.cue_mean, l.baseline_mean,
          l.cue_above_fraction, r.report.trials, r.report.cue_flip_rate(), r.report.random_flip_rate(),
          models::CueReport::rate(r.report.cue_changes, r.report.trials),
          models::CueReport::rate(r.report.random_changes, r.report.trials), r.report.cue_flip_rate_all_queries(),
          r.report.random_flip_rate_all_queries());
  return tsv;
}

nlohmann::ordered_json results_json(const std::vector<CueResult>& results, const CuesOptions& o) {
  nlohmann::ordered_json j = {{"split", o.split}, {"cues", o.cues}, {"seed", o.seed}};
  for (const CueResult& r : results) {
    nlohmann::ordered_json m = {{"checkpoint", r.checkpoint},
                                {"attention", r.mode},
                                {"sentences", r.report.sentences},
                                {"knockout_trials", r.report.trials},
                                {"cue_knockout_flips", r.report.cue_flips},
                                {"random_knockout_flips", r.report.random_flips},
                                {"cue_knockout_changes", r.report.cue_changes},
                                {"random_knockout_changes", r.report.random_changes},
                                {"cue_knockout_flip_rate", r.report.cue_flip_rate()},
                                {"random_knockout_flip_rate", r.report.random_flip_rate()},
                                {"cue_knockout_all_queries_flips", r.report.cue_flips_all_queries},
                                {"random_knockout_all_queries_flips", r.report.random_flips_all_queries}};
    for (const models::CueLayer& l : r.report.layers)
      m["layers"].push_back({{"layer", l.layer + 1},
                             {"sentences", l.cue_peaks.size()},
                             {"cue_peak", l.cue_mean},
                             {"baseline_peak", l.baseline_mean},
                             {"cue_above_baseline", l.cue_above_fraction}});
    j["models"].push_back(m);
  }
  return j;
}

// Counts of values in [0, 1] over `bins` equal bins, as (bin centre, fraction of the values).
render::Series histogram(const std::vector<double>& values, int bins, const std::string& name, render::RGB colour,
                         bool dashed) {
  render::Series s{.name = name, .x = {}, .y = {}, .color = colour, .dashed = dashed};
  std::vector<double> counts(static_cast<size_t>(bins), 0.0);
  for (double v : values) counts[static_cast<size_t>(std::clamp(static_cast<int>(v * bins), 0, bins - 1))] += 1.0;
  for (int b = 0; b < bins; ++b) {
    s.x.push_back((b + 0.5) / bins);
    s.y.push_back(values.empty() ? 0.0 : counts[b] / static_cast<double>(values.size()));
  }
  return s;
}

// One panel per model, side by side; in each, one colour per layer (the cue solid, the other
// words dashed), so that no two layers share a colour and the legend fits its panel.
void write_histogram(const std::vector<CueResult>& results, const CuesOptions& o, const std::string& path) {
  std::vector<render::Image> panels;
  for (const CueResult& r : results) {
    render::LinePlotSpec spec;
    spec.title = fmt::format(
        "{} ({}): cue attention on {}\nthe cue's peak weight over the target queries (solid)\n"
        "against the other source words' mean peak (dashed)",
        r.mode, std::filesystem::path(r.checkpoint).parent_path().filename().string(), o.split);
    spec.x_label = "peak attention weight (20 bins)";
    spec.y_label = "fraction of sentences";
    spec.width = 640;
    const size_t layers = r.report.layers.size(), shown = std::min<size_t>(layers, 10);  // tab10 has 10 colours
    for (size_t i = layers - shown; i < layers; ++i) {
      const models::CueLayer& l = r.report.layers[i];
      const render::RGB c = render::tab10(static_cast<int>(i - (layers - shown)));
      spec.series.push_back(histogram(l.cue_peaks, 20, fmt::format("L{} cue", l.layer + 1), c, false));
      spec.series.push_back(histogram(l.baseline_peaks, 20, fmt::format("L{} others", l.layer + 1), c, true));
    }
    panels.push_back(render::render_line_plot(spec));
  }
  render::write_png(render::hstack(panels, 16), path);
}

}  // namespace

void run_cues(CuesOptions o) {
  if (o.cues.empty()) o.cues = data::cue_file_of(o.data_dir);
  std::vector<data::CueSentence> sentences;
  for (data::CueSentence& s : data::load_cues(o.cues))
    if (s.split == o.split) sentences.push_back(std::move(s));
  if (sentences.empty())
    throw std::runtime_error(fmt::format("--split {}: {} has no sentence of that split", o.split, o.cues));
  std::vector<std::string> checkpoints = {o.checkpoint};
  checkpoints.insert(checkpoints.end(), o.compare.begin(), o.compare.end());
  std::vector<CueResult> results;
  for (const std::string& path : checkpoints) {
    models::LoadedTranslator loaded = models::load_translator(path, Device::parse(o.device));
    results.push_back({path, models::attention_mode_name(loaded.model->config().attention),
                       models::measure_cues(*loaded.model, sentences, loaded.english, loaded.hindi, o.seed)});
  }
  fmt::print("cue attention and knockout on {} ({} sentences of {})\n", o.split, sentences.size(), o.cues);
  fmt::print("{}", cue_tables(results));
  fmt::print(
      "cue peak: the cue's largest weight from any target query; others: the mean of the same for the other "
      "source words (not the cue, not the ambiguous word or idiom); cue above: sentences where the first "
      "exceeds the second. KO: that key hidden from every target query in every layer (random: one other "
      "word per sentence, seed {}); flip: the translation loses every Hindi word of the sentence's reading; "
      "change: any token differs; all queries: hidden from the source words' queries too, so the cue cannot reach "
      "the target through their vectors. Trials: sentences whose own translation holds the reading.\n",
      o.seed);
  if (o.out.empty()) return;
  fs::create_directories(o.out);
  const std::string stem = (fs::path(o.out) / ("cues_" + o.split)).string();
  write_file_atomic(stem + ".tsv", results_tsv(results, o.split));
  write_file_atomic(stem + ".json", results_json(results, o).dump(2) + "\n");
  write_histogram(results, o, stem + ".png");
  fmt::print("wrote {0}.tsv, {0}.json and {0}.png\n", stem);
}

}  // namespace qkv::app
