// tools/render/render_heatmap.cpp — the attention heatmap: its layout (cells, labels that never
// overlap, colour bar, title) and drawing it.
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "render_internal.h"

namespace qkv::render {

using namespace detail;

namespace {

struct HeatmapPlan {
  HeatmapLayout layout;
  std::vector<TextItem> row_items, col_items, other_items;
  std::vector<int> tick_ys;  // the ticks' y pixels on the colour bar
  int value_decimals = 2;
  std::shared_ptr<Font> title_font, label_font, tick_font, value_font;
};

// The labels (boxes measured at the origin): the keys' above the grid, horizontal on one baseline or
// turned upright when too wide; the queries' left of the grid, right-aligned, centred on their row.
void place_labels(HeatmapPlan& P, const HeatmapSpec& spec, const std::vector<LabelBox>& row0,
                  const std::vector<LabelBox>& col0) {
  const HeatmapLayout& L = P.layout;
  const Font& lf = *P.label_font;
  const int gx = L.grid_x, gy = L.grid_y, cell = L.cell;
  const bool rotated = L.rotated_col_labels;
  int max_below = 0;
  for (const auto& b : col0) max_below = std::max(max_below, b.y1);
  for (int c = 0; c < L.cols; ++c) {
    const int left = gx + c * cell;
    const LabelBox& b0 = col0[c];
    // The ink is centred on the column. Rotated 90° (reading upwards from just above the grid), the
    // glyph's vertical extent [b0.y0, b0.y1) maps to x + [y0, y1).
    const int lo = rotated ? b0.y0 : b0.x0, hi = rotated ? b0.y1 : b0.x1;
    const int x = std::clamp(left + cell / 2 - (lo + hi) / 2, left + 1 - lo, left + cell - 1 - hi);
    const int pen_y = rotated ? gy - 6 - 1 + b0.x0   // box bottom (exclusive) lands at gy - 6
                              : gy - 6 - max_below;  // horizontal, sharing one baseline just above the grid
    P.col_items.push_back(place(lf, spec.col_labels[c], x, pen_y, rotated, kText));
  }
  for (int r = 0; r < L.rows; ++r) {
    const int top = gy + r * cell, cy = top + cell / 2;
    const LabelBox& b0 = row0[r];
    const int x = gx - 8 - b0.x1;
    int base = centre_baseline(lf, cy);
    if (b0.height() > 0) base = std::clamp(base, top + 1 - b0.y0, top + cell - 1 - b0.y1);
    P.row_items.push_back(place(lf, spec.row_labels[r], x, base, false, kText));
  }
}

// The colour bar right of the grid, with its ticks and its label turned upright.
void place_colour_bar(HeatmapPlan& P, const HeatmapSpec& spec) {
  HeatmapLayout& L = P.layout;
  const Font& lf = *P.label_font;
  const Font& tf = *P.tick_font;
  const LabelBox grid = L.grid();
  const int gy = grid.y0;
  const double span = spec.vmax - spec.vmin;
  const int cb_x = grid.x1 + 18, cb_w = 16, cb_h = std::max(grid.height(), 120);
  L.colorbar = {cb_x, gy, cb_x + cb_w, gy + cb_h};
  const int max_ticks = std::clamp(cb_h / 26, 2, 6);
  double step = 1;
  const auto tick_values = nice_ticks(spec.vmin, spec.vmax, max_ticks, &step, true);
  const int tdec = decimals_for(step);
  int tick_w = 0;
  for (double v : tick_values) {
    const int ty = gy + static_cast<int>(std::lround((spec.vmax - v) / span * (cb_h - 1)));
    P.tick_ys.push_back(ty);
    TextItem t = place(tf, format_fixed(v, tdec), 0, 0, false, kText);
    const int x = cb_x + cb_w + 7 - t.box.x0;
    t = place(tf, t.text, x, centre_baseline(tf, ty), false, kText);
    tick_w = std::max(tick_w, t.box.x1 - (cb_x + cb_w + 7));
    P.other_items.push_back(t);
  }
  if (!spec.colorbar_label.empty())
    P.other_items.push_back(place_upright(lf, spec.colorbar_label, cb_x + cb_w + 7 + tick_w + 10, gy + cb_h / 2));
}

// The bounding box of everything: the title centred over the content, everything shifted to leave
// `pad` all around, and the layout's size and label boxes.
void fit_to_content(HeatmapPlan& P, const HeatmapSpec& spec, int pad) {
  HeatmapLayout& L = P.layout;
  LabelBox content = union_box(L.grid(), L.colorbar);
  for (const auto* items : {&P.row_items, &P.col_items})
    for (const auto& t : *items) content = union_box(content, t.box);
  const size_t n_title = split_lines(spec.title).size();
  for (size_t i = n_title; i < P.other_items.size(); ++i) content = union_box(content, P.other_items[i].box);
  LabelBox all = content;
  for (size_t i = 0; i < n_title; ++i) {  // the title lines, centred over the content
    shift(P.other_items[i], (content.x0 + content.x1) / 2, 0);
    all = union_box(all, P.other_items[i].box);
  }
  const int dx = pad - all.x0, dy = std::max(0, pad - all.y0);
  for (auto* items : {&P.row_items, &P.col_items, &P.other_items})
    for (auto& t : *items) shift(t, dx, dy);
  for (int& ty : P.tick_ys) ty += dy;
  shift(L.colorbar, dx, dy);
  L.grid_x += dx, L.grid_y += dy;
  L.width = all.x1 + dx + pad;
  L.height = all.y1 + dy + pad;
  for (const auto& t : P.row_items) L.row_labels.push_back(t.box);
  for (const auto& t : P.col_items) L.col_labels.push_back(t.box);
  for (const auto& t : P.other_items) L.other_text.push_back(t.box);
}

HeatmapPlan plan_heatmap(const HeatmapSpec& spec) {
  const int rows = static_cast<int>(spec.row_labels.size());
  const int cols = static_cast<int>(spec.col_labels.size());
  if (rows == 0 || cols == 0) throw std::invalid_argument("heatmap: needs at least one row and one column label");
  if (spec.values.size() != static_cast<size_t>(rows) * cols)
    throw std::invalid_argument("heatmap: values.size() (" + std::to_string(spec.values.size()) + ") != rows*cols (" +
                                std::to_string(rows) + "*" + std::to_string(cols) + ")");
  if (!spec.masked.empty() && spec.masked.size() != spec.values.size())
    throw std::invalid_argument("heatmap: masked must be empty or have rows*cols entries");
  if (!(spec.vmax > spec.vmin) || !std::isfinite(spec.vmin) || !std::isfinite(spec.vmax))
    throw std::invalid_argument("heatmap: need finite vmin < vmax");

  HeatmapPlan P;
  if (!(spec.label_px >= 6 && spec.label_px <= 200))
    throw std::invalid_argument("heatmap: label_px must be in [6, 200]");
  P.title_font = std::make_shared<Font>(spec.label_px * 1.2f);
  P.label_font = std::make_shared<Font>(spec.label_px);
  P.tick_font = std::make_shared<Font>(std::max(9.0f, spec.label_px * 0.85f));
  const Font& lf = *P.label_font;
  HeatmapLayout& L = P.layout;
  L.rows = rows, L.cols = cols;

  // The labels measured at the origin, and the widest and tallest of each kind.
  int max_row_w = 0, max_row_h = 0, max_col_w = 0, max_col_h = 0;
  const auto measure = [&](const std::vector<std::string>& labels, int& max_w, int& max_h) {
    std::vector<LabelBox> boxes;
    for (const auto& s : labels) {
      boxes.push_back(lf.text_box(s, 0, 0));
      max_w = std::max(max_w, boxes.back().width()), max_h = std::max(max_h, boxes.back().height());
    }
    return boxes;
  };
  const std::vector<LabelBox> row0 = measure(spec.row_labels, max_row_w, max_row_h);
  const std::vector<LabelBox> col0 = measure(spec.col_labels, max_col_w, max_col_h);
  const int label_gap = 4;  // minimum free pixels between neighbouring labels
  int cell = std::max({spec.cell_px, 24, max_row_h + label_gap, max_col_h + label_gap});
  L.rotated_col_labels = max_col_w + label_gap + 2 > cell;
  L.cell = cell;

  const int pad = 12;
  int y = pad;
  if (!spec.title.empty()) y = layout_title(*P.title_font, spec.title, 0, y, P.other_items) + 8;

  L.grid_y = y + (L.rotated_col_labels ? max_col_w : max_col_h) + 6;  // under the column labels' band
  L.grid_x = pad + max_row_w + 8;
  place_labels(P, spec, row0, col0);

  // Cell values.
  const double span = spec.vmax - spec.vmin;
  P.value_decimals = span <= 2 ? 2 : span <= 20 ? 1 : 0;
  if (spec.show_values && cell >= 40) {
    P.value_font = std::make_shared<Font>(static_cast<float>(std::clamp(cell * 0.3, 10.0, 14.0)));
    int widest = 0;
    for (size_t i = 0; i < spec.values.size(); ++i)
      if (std::isfinite(spec.values[i]))
        widest = std::max(widest, P.value_font->text_width(format_fixed(spec.values[i], P.value_decimals)));
    L.values_shown = widest + 4 <= cell;
  }

  place_colour_bar(P, spec);
  fit_to_content(P, spec, pad);
  return P;
}

}  // namespace

HeatmapLayout heatmap_layout(const HeatmapSpec& spec) { return plan_heatmap(spec).layout; }

std::vector<LabelBox> heatmap_label_boxes(const HeatmapSpec& spec) {
  const HeatmapLayout L = heatmap_layout(spec);
  std::vector<LabelBox> boxes = L.row_labels;
  boxes.insert(boxes.end(), L.col_labels.begin(), L.col_labels.end());
  return boxes;
}

Image render_heatmap(const HeatmapSpec& spec) {
  const HeatmapPlan P = plan_heatmap(spec);
  const HeatmapLayout& L = P.layout;
  Image img(L.width, L.height);
  const double span = spec.vmax - spec.vmin;

  for (int r = 0; r < L.rows; ++r)
    for (int c = 0; c < L.cols; ++c) {
      const size_t i = static_cast<size_t>(r) * L.cols + c;
      const LabelBox b = L.cell_box(r, c);
      const double v = spec.values[i];
      if ((!spec.masked.empty() && spec.masked[i]) || !std::isfinite(v)) {  // masked
        img.fill_rect(b.x0, b.y0, b.x1, b.y1, kMaskFill);
        for (int y = b.y0; y < b.y1; ++y)
          for (int x = b.x0; x < b.x1; ++x)
            if ((x + y) % 8 < 2) img.set(x, y, kMaskHatch);  // "/" hatching, continuous across cells
        continue;
      }
      const RGB col = viridis((v - spec.vmin) / span);
      img.fill_rect(b.x0, b.y0, b.x1, b.y1, col);
      if (L.values_shown) {
        const double lum = 0.299 * col[0] + 0.587 * col[1] + 0.114 * col[2];
        const RGB tc = lum < 140 ? RGB{255, 255, 255} : kBlack;
        const std::string s = format_fixed(v, P.value_decimals);
        const LabelBox t0 = P.value_font->text_box(s, 0, 0);
        P.value_font->draw(img, (b.x0 + b.x1) / 2 - (t0.x0 + t0.x1) / 2,
                           centre_baseline(*P.value_font, (b.y0 + b.y1) / 2), s, tc);
      }
    }
  const LabelBox g = L.grid();
  img.stroke_rect(g.x0 - 1, g.y0 - 1, g.x1 + 1, g.y1 + 1, kAxis);

  // Colour bar: top = vmax.
  const LabelBox& cb = L.colorbar;
  for (int y = cb.y0; y < cb.y1; ++y)
    img.fill_rect(cb.x0, y, cb.x1, y + 1, viridis(1.0 - static_cast<double>(y - cb.y0) / std::max(1, cb.height() - 1)));
  img.stroke_rect(cb.x0 - 1, cb.y0 - 1, cb.x1 + 1, cb.y1 + 1, kAxis);
  for (const int ty : P.tick_ys) img.fill_rect(cb.x1, ty, cb.x1 + 5, ty + 1, kAxis);

  for (const auto* items : {&P.row_items, &P.col_items, &P.other_items})
    for (const auto& t : *items) draw_item(img, t);
  return img;
}

}  // namespace qkv::render
