// train/experiments/ablation/ablation.cpp — `qkv ablate`, the tutorial's experiment as a grid: blocks x
// attention mode x token embeddings (trained or frozen), plus an equal-parameter control, each trained
// with the same budget; one cached cell per folder, a TSV and JSON table, and a line plot of
// generalisation against blocks. Also the pieces the demo shares (ablation.h).
#include "train/experiments/ablation/ablation.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "framework/file_util.h"
#include "framework/text_util.h"
#include "models/translator_io.h"
#include "tools/render/render.h"
#include "train/run/run_state.h"
#include "train/run/trainer.h"

namespace qkv::app {

namespace fs = std::filesystem;

std::string Cell::name() const {
  return fmt::format("{}-{}-L{}", control ? "static_wide" : mode_name(), frozen ? "frozen" : "trained", blocks);
}

std::string Cell::series() const {
  return fmt::format("{}{}", control ? "static, F widened to learned's parameters" : models::attention_mode_name(mode),
                     frozen ? ", frozen embeddings" : "");
}

render::LinePlotSpec ablation_plot(const std::vector<AblationPoint>& points, const std::string& title) {
  render::LinePlotSpec plot;
  plot.title = title;
  plot.x_label = "attention + feed-forward blocks";
  plot.width = 1000;
  plot.y_label = "exact match (%)";
  // learned, static, none, the equal-parameter control: one colour each
  const std::vector<render::RGB> colours = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {148, 103, 189}};
  std::vector<std::string> order;
  for (const AblationPoint& p : points)
    if (std::find(order.begin(), order.end(), p.series()) == order.end()) order.push_back(p.series());
  for (const auto& name : order) {
    render::Series s{.name = name, .x = {}, .y = {}, .markers = true};
    for (const AblationPoint& p : points) {
      if (p.series() != name) continue;
      s.x.push_back(static_cast<double>(p.blocks));
      s.y.push_back(p.generalisation_mean);
      s.dashed = p.frozen;
      s.color = colours[p.control                                  ? 3
                        : p.mode == models::AttentionMode::Learned ? 0
                        : p.mode == models::AttentionMode::Static  ? 1
                                                                   : 2];
    }
    plot.series.push_back(std::move(s));
  }
  return plot;
}

std::vector<AblationPoint> parse_ablation_tsv(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::vector<AblationPoint> points;
  std::vector<std::string> header;
  data::for_each_text_line(in, path, [&](const std::string& line, const std::string& where, int) {
    if (line.empty() || line[0] == '#') return;  // comments say where the numbers come from
    const std::vector<std::string> fields = split(line, '\t');
    if (header.empty()) {
      header = fields;
      for (const char* need : {"attention", "token_embeddings", "blocks", "generalisation_mean"})
        if (std::find(header.begin(), header.end(), need) == header.end())
          throw std::runtime_error(
              fmt::format("{}: the header has no column '{}' (an ablation.tsv of qkv ablate has)", where, need));
      return;
    }
    if (fields.size() != header.size())
      throw std::runtime_error(fmt::format("{}: {} fields, the header has {}", where, fields.size(), header.size()));
    auto field = [&](const char* name) {
      return fields[std::find(header.begin(), header.end(), name) - header.begin()];
    };
    AblationPoint p;
    const std::string attention = field("attention");
    p.control = attention == "static (equal parameters)";
    try {
      p.mode = models::parse_attention_mode(p.control ? "static" : attention);
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format(
          "{}: attention '{}' (expected learned, static, none or static (equal parameters))", where, attention));
    }
    p.frozen = field("token_embeddings") == "frozen";
    try {
      p.blocks = std::stoll(field("blocks"));
      p.generalisation_mean = std::stod(field("generalisation_mean"));
      if (p.blocks < 1 || !std::isfinite(p.generalisation_mean)) throw std::invalid_argument("range");
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("{}: blocks '{}' or generalisation_mean '{}' is not a number", where,
                                           field("blocks"), field("generalisation_mean")));
    }
    points.push_back(p);
  });
  if (points.empty()) throw std::runtime_error(fmt::format("{}: no cells (a header line and one line per cell)", path));
  return points;
}

double ScoredCell::generalisation_mean() const {
  if (exact_match.size() < 2) return 0.0;
  return std::accumulate(exact_match.begin() + 1, exact_match.end(), 0.0) / static_cast<double>(exact_match.size() - 1);
}

std::vector<std::string> report_split_names(const data::Dataset& ds) {
  std::vector<std::string> names = {"test"};
  for (const auto& name : data::generalisation_split_names())
    if (ds.has(name)) names.push_back(name);
  return names;
}

TrainOptions cell_options(const Cell& c, const TrainOptions& base, const std::string& out_dir) {
  TrainOptions t = base;
  t.attention = c.mode;
  t.layers = c.blocks;
  t.d_ff = c.d_ff;
  t.freeze_embeddings = c.frozen;
  t.out_dir = out_dir;
  t.quiet = true;
  return t;
}

ScoredCell train_and_score(const TrainOptions& t, const data::Dataset& ds,
                           const std::vector<std::string>& report_splits) {
  const TrainResult trained = train_translator(t);
  models::LoadedTranslator loaded = models::load_translator(trained.checkpoint);
  ScoredCell s{.checkpoint = trained.checkpoint,
               .train_seconds = trained.seconds,
               .parameters = loaded.model->config().parameter_count(),
               .attention_parameters = loaded.model->attention_parameter_count(),
               .exact_match = {}};
  for (const auto& split : report_splits)
    s.exact_match.push_back(100 * evaluate(*loaded.model, ds.split(split), loaded.english, loaded.hindi).exact_match);
  return s;
}

namespace {

// The training options of one cell of the grid, in OUT/cells/NAME.
TrainOptions grid_cell_options(const Cell& c, const AblateOptions& o) {
  return cell_options(c, o.base, (fs::path(o.out) / "cells" / c.name()).string());
}

// What a cell's cached result must agree on to be reused: every setting its training run saves (the
// whole recipe, defaults included, so a changed default trains the cell again), data as a full path.
nlohmann::json cell_settings(const Cell& c, const AblateOptions& o) {
  nlohmann::json settings = nlohmann::json::parse(options_json(grid_cell_options(c, o)));
  settings["data_dir"] = fs::weakly_canonical(o.base.data_dir).string();
  return settings;
}

// The feed-forward width that gives static attention learned attention's parameter count:
// each block's 4 D H attention weights spread over fc1 and fc2, which cost 2 D + 1 per unit of F.
int64_t equal_parameter_d_ff(const AblateOptions& o) {
  const double extra =
      4.0 * static_cast<double>(o.base.d_model) * static_cast<double>(o.base.d_k) / (2.0 * o.base.d_model + 1.0);
  return o.base.d_ff + std::llround(extra);
}

std::vector<Cell> grid_of(const AblateOptions& o) {
  std::vector<Cell> cells;
  for (const int64_t blocks : o.blocks) {
    for (const bool frozen : {false, true}) {
      if (frozen && o.no_frozen) continue;
      for (const auto& mode : o.modes) cells.push_back({mode, frozen, false, blocks, o.base.d_ff});
    }
    if (!o.no_control) cells.push_back({models::AttentionMode::Static, false, true, blocks, equal_parameter_d_ff(o)});
  }
  return cells;
}

// The command that reproduces this grid, printed beside every figure.
std::string command_line(const AblateOptions& o) {
  std::vector<std::string> blocks, modes;
  for (const int64_t b : o.blocks) blocks.push_back(std::to_string(b));
  for (const models::AttentionMode mode : o.modes) modes.push_back(models::attention_mode_name(mode));
  return fmt::format(
      "qkv ablate --data {} --blocks {} --modes {} --epochs {} --d-model {} --d-k {} --d-ff {} --seed {}{}{} --out {}",
      o.base.data_dir, join(blocks, ","), join(modes, ","), o.base.epochs, o.base.d_model, o.base.d_k, o.base.d_ff,
      o.base.seed, o.no_frozen ? " --no-frozen" : "", o.no_control ? " --no-control" : "", o.out);
}

// Trains (or resumes) one cell and evaluates it on every report split; the result, with the
// settings it was made with, is written to CELL/result.json last, so a cell with that file is done.
nlohmann::json run_cell(const Cell& c, const AblateOptions& o, const data::Dataset& ds,
                        const std::vector<std::string>& report_splits) {
  TrainOptions t = grid_cell_options(c, o);
  // An interrupted cell continues where it stopped; anything else in the folder is started over.
  t.resume = RunFolder(t.out_dir).has(RunFolder::kState);
  t.force = !t.resume;
  const ScoredCell scored = train_and_score(t, ds, report_splits);
  nlohmann::json splits = nlohmann::json::object();
  for (size_t k = 0; k < report_splits.size(); ++k) splits[report_splits[k]] = scored.exact_match[k];
  nlohmann::json result = {{"cell", c.name()},
                           {"settings", cell_settings(c, o)},
                           {"parameters", scored.parameters},
                           {"attention_parameters", scored.attention_parameters},
                           {"train_seconds", scored.train_seconds},
                           {"exact_match", splits},
                           {"generalisation_mean", scored.generalisation_mean()}};
  write_file_atomic((fs::path(t.out_dir) / "result.json").string(), result.dump(2) + "\n");
  return result;
}

// The cached result of a cell made with these settings, or null.
nlohmann::json cached_result(const Cell& c, const AblateOptions& o) {
  const fs::path path = fs::path(o.out) / "cells" / c.name() / "result.json";
  if (!fs::is_regular_file(path)) return nullptr;
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("settings") || j["settings"] != cell_settings(c, o) ||
      !j.contains("exact_match") || !j["exact_match"].is_object() || !j.contains("generalisation_mean"))
    return nullptr;  // another grid's, or damaged: trained again
  return j;
}

void write_outputs(const std::vector<Cell>& cells, const std::vector<nlohmann::json>& results,
                   const std::vector<std::string>& report_splits, const AblateOptions& o) {
  const std::string made_by = command_line(o);
  // ---- TSV, and the same table on the console ----
  std::string tsv = "cell\tattention\ttoken_embeddings\tblocks\td_ff\tparameters\tattention_parameters\ttrain_seconds";
  for (const auto& s : report_splits) tsv += "\t" + s;
  tsv += "\tgeneralisation_mean\n";
  std::string table = fmt::format("{:<26} {:>9} {:>10}", "cell", "params", "train s");
  for (const auto& s : report_splits) table += fmt::format(" {:>{}}", s, std::max<size_t>(s.size(), 6));
  table += fmt::format(" {:>8}\n", "gen mean");
  for (size_t i = 0; i < cells.size(); ++i) {
    const Cell& c = cells[i];
    const nlohmann::json& r = results[i];
    tsv += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.1f}", c.name(),
                       c.control ? "static (equal parameters)" : c.mode_name(), c.frozen ? "frozen" : "trained",
                       c.blocks, c.d_ff, r["parameters"].get<int64_t>(), r["attention_parameters"].get<int64_t>(),
                       r["train_seconds"].get<double>());
    table += fmt::format("{:<26} {:>9} {:>10.1f}", c.name(), r["parameters"].get<int64_t>(),
                         r["train_seconds"].get<double>());
    for (const auto& s : report_splits) {
      const double v = r["exact_match"].value(s, std::nan(""));
      tsv += fmt::format("\t{:.2f}", v);
      table += fmt::format(" {:>{}.1f}", v, std::max<size_t>(s.size(), 6));
    }
    tsv += fmt::format("\t{:.2f}\n", r["generalisation_mean"].get<double>());
    table += fmt::format(" {:>8.1f}\n", r["generalisation_mean"].get<double>());
  }
  write_file_atomic((fs::path(o.out) / "ablation.tsv").string(), tsv);
  nlohmann::json doc = {{"command", made_by}, {"splits", report_splits}, {"cells", results}};
  write_file_atomic((fs::path(o.out) / "ablation.json").string(), doc.dump(2) + "\n");

  // ---- the plot: one line per (mode, embeddings), frozen dashed ----
  std::vector<AblationPoint> points;
  for (size_t i = 0; i < cells.size(); ++i)
    points.push_back({cells[i], results[i]["generalisation_mean"].get<double>()});
  const render::LinePlotSpec plot = ablation_plot(
      points, fmt::format("greedy exact match, mean of the generalisation splits\n{} epoch{} per model, seed {} "
                          "(the command is in ablation.json)",
                          o.base.epochs, o.base.epochs == 1 ? "" : "s", o.base.seed));
  render::write_png(render::render_line_plot(plot), (fs::path(o.out) / "ablation.png").string());

  fmt::print("\nAblation grid (greedy exact match %; gen mean = mean over the generalisation splits):\n{}", table);
  fmt::print("made by: {}\nwrote {}, {} and {}\n", made_by, (fs::path(o.out) / "ablation.tsv").string(),
             (fs::path(o.out) / "ablation.json").string(), (fs::path(o.out) / "ablation.png").string());
}

}  // namespace

void run_ablate(const AblateOptions& o) {
  const data::Dataset ds = data::load_dataset(o.base.data_dir);  // fail early, before any output
  const std::vector<std::string> report_splits = report_split_names(ds);
  const std::vector<Cell> cells = grid_of(o);
  for (const auto& r : o.rerun)
    if (std::none_of(cells.begin(), cells.end(), [&](const Cell& c) { return c.name() == r; }))
      throw std::runtime_error(
          fmt::format("--rerun: no cell '{}' in this grid (cells are named like {})", r, cells.front().name()));
  fs::create_directories(fs::path(o.out) / "cells");
  std::vector<nlohmann::json> results;
  for (size_t i = 0; i < cells.size(); ++i) {
    const Cell& c = cells[i];
    const bool rerun = std::find(o.rerun.begin(), o.rerun.end(), c.name()) != o.rerun.end();
    nlohmann::json r = rerun ? nlohmann::json(nullptr) : cached_result(c, o);
    fmt::print("[{}/{}] {:<26} ", i + 1, cells.size(), c.name());
    if (!r.is_null()) {
      fmt::print("cached: generalisation mean {:.1f}%\n", r["generalisation_mean"].get<double>());
    } else {
      fmt::print("training ({} block{}, F = {}, {} epoch{}) ...", c.blocks, c.blocks == 1 ? "" : "s", c.d_ff,
                 o.base.epochs, o.base.epochs == 1 ? "" : "s");
      std::fflush(stdout);
      r = run_cell(c, o, ds, report_splits);
      fmt::print(" {:.1f}s, test {:.1f}%, generalisation mean {:.1f}%\n", r["train_seconds"].get<double>(),
                 r["exact_match"]["test"].get<double>(), r["generalisation_mean"].get<double>());
    }
    results.push_back(std::move(r));
  }
  write_outputs(cells, results, report_splits, o);
}

}  // namespace qkv::app
