// Writes sample figures made with qkv::render into a directory (default /tmp/render_samples):
//   heatmap.png          6x8 causal-masked attention heatmap with English/Hindi tokens
//   heatmap_values.png   the same with 48 px cells and the values printed in the cells
//   compare.png          two heatmaps side by side (hstack)
//   stress.png           long and Devanagari-heavy labels, many columns, a larger label font
//   variance_logx.png    variance of q.k vs dimension d = 1..1024, log-log
//   loss.png             train vs valid loss per epoch
// Usage: render_demo [output_dir]
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "render.h"

using namespace qkv::render;

namespace {

HeatmapSpec sample_heatmap() {
  HeatmapSpec h;
  h.title = "she ate a piece of cake → उसने केक का टुकड़ा खाया\ncausal self-attention · layer 1 · head 0 · epoch 12";
  h.row_labels = {"she", "ate", "<sep>", "उसने", "केक", "टुकड़ा"};
  h.col_labels = {"she", "ate", "<sep>", "उसने", "केक", "टुकड़ा", "खाया", "<eos>"};
  const int R = 6, C = 8;
  h.values.assign(R * C, 0.0);
  h.masked.assign(R * C, 0);
  for (int r = 0; r < R; ++r) {
    double sum = 0;
    for (int c = 0; c < C; ++c) {
      const bool m = c > r + 2;  // causal over the target side, source always visible
      h.masked[r * C + c] = m;
      const double v = m ? 0.0 : std::exp(-0.7 * std::abs(c - r - 1) + 0.3 * ((r * 7 + c * 3) % 5));
      h.values[r * C + c] = v;
      sum += v;
    }
    for (int c = 0; c < C; ++c) h.values[r * C + c] /= sum;
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::filesystem::path dir = argc > 1 ? argv[1] : "/tmp/render_samples";
  std::filesystem::create_directories(dir);
  const auto out = [&](const char* name) { return (dir / name).string(); };

  HeatmapSpec h = sample_heatmap();
  const Image heat = render_heatmap(h);
  write_png(heat, out("heatmap.png"));

  HeatmapSpec big = h;
  big.cell_px = 48;
  write_png(render_heatmap(big), out("heatmap_values.png"));

  HeatmapSpec uniform = h;
  uniform.title = "किनारा — uniform attention\n(no mask)";
  uniform.masked.clear();
  for (auto& v : uniform.values) v = 1.0 / 8;
  write_png(hstack({render_heatmap(uniform), heat}, 24), out("compare.png"));

  HeatmapSpec stress;
  stress.title = "stress test: long labels, conjuncts and marks";
  stress.row_labels = {"an_extremely_long_subword_token", "कृष्णमूर्ति", "प्रिय", "ठीक", "क्षत्रिय", "ॐ"};
  for (int i = 0; i < 12; ++i)
    stress.col_labels.push_back(i % 3 == 0 ? "डिब्बे" : i % 3 == 1 ? "internationalisation" : "ई");
  stress.label_px = 16;
  for (size_t i = 0; i < stress.row_labels.size() * stress.col_labels.size(); ++i)
    stress.values.push_back(std::fmod(i * 0.137, 1.0));
  stress.colorbar_label = "weight";
  write_png(render_heatmap(stress), out("stress.png"));

  LinePlotSpec var;
  var.title = "Variance of q·k for random unit-variance q, k";
  var.x_label = "dimension d (log scale)";
  var.y_label = "Var[q·k]";
  var.log_x = var.log_y = true;
  Series raw{"q·k", {}, {}, tab10(0)};
  Series scaled{"q·k / √d", {}, {}, tab10(1), true};
  for (int d = 1; d <= 1024; d *= 2) {
    raw.x.push_back(d), raw.y.push_back(d * (1 + 0.05 * std::sin(d)));
    scaled.x.push_back(d), scaled.y.push_back(1 + 0.05 * std::sin(d));
  }
  raw.markers = scaled.markers = true;
  var.series = {raw, scaled};
  write_png(render_line_plot(var), out("variance_logx.png"));

  LinePlotSpec loss;
  loss.title = "Training curves";
  loss.x_label = "epoch";
  loss.y_label = "cross-entropy loss";
  Series tr{"train", {}, {}, tab10(0)}, va{"valid", {}, {}, tab10(1), true};
  for (int e = 1; e <= 20; ++e) {
    tr.x.push_back(e), tr.y.push_back(4.5 * std::exp(-e / 5.0) + 0.8);
    va.x.push_back(e), va.y.push_back(4.4 * std::exp(-e / 6.0) + 1.1 + 0.01 * e);
  }
  loss.series = {tr, va};
  write_png(render_line_plot(loss), out("loss.png"));

  std::printf("wrote samples to %s\n", dir.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "render_demo: %s\n", e.what());
  return 1;
}
