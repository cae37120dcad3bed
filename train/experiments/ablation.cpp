// train/experiments/ablation.cpp — the ablation grid's shared pieces: a cell as a point of the plot,
// the plot of generalisation against blocks, and the reader of an ablation.tsv (the demo draws the
// recorded grid beside its own cells).
#include "train/experiments/ablation.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace qkv::app {

std::string AblationPoint::series() const {
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
    render::Series s;
    s.name = name;
    s.markers = true;
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
    std::vector<std::string> fields;
    for (size_t start = 0, tab;; start = tab + 1) {
      tab = line.find('\t', start);
      fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
    }
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

}  // namespace qkv::app
