// tools/render/render_plot.cpp — line plots (loss curves and the like): linear or log axes with
// "nice" ticks, dashed or marked series, and a legend.
#include <algorithm>
#include <cmath>
#include <limits>

#include "render_internal.h"

namespace qkv::render {

using namespace detail;

namespace {

struct Axis {
  bool log = false;
  double lo = 0, hi = 1;             // in transformed units (log10 for log axes)
  std::vector<double> major, minor;  // transformed units
  std::vector<std::string> labels;   // the major ticks'

  double tf(double v) const { return log ? (v > 0 ? std::log10(v) : std::numeric_limits<double>::quiet_NaN()) : v; }
};

std::string format_log_tick(double v) {
  const double k = std::log10(v);
  char buf[32];
  if (std::fabs(k - std::round(k)) < 1e-9) {
    const int e = static_cast<int>(std::lround(k));
    if (e >= -4 && e <= 6) return format_fixed(v, std::max(0, -e));
    std::snprintf(buf, sizeof buf, "1e%d", e);
  } else {
    std::snprintf(buf, sizeof buf, "%g", v);
  }
  return buf;
}

Axis make_axis(bool log, const std::vector<double>& values, bool pad_linear, int max_ticks) {
  Axis a;
  a.log = log;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values) {
    const double t = a.tf(v);
    if (!std::isfinite(t)) continue;
    lo = std::min(lo, t), hi = std::max(hi, t);
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(lo))) {
    const double d = log ? 0.5 : std::max(std::fabs(lo) * 0.1, 0.5);
    lo -= d, hi += d;
  } else if (log) {
    const double m = (hi - lo) * 0.03;
    lo -= m, hi += m;
  } else if (pad_linear) {
    const double m = (hi - lo) * 0.05;
    lo -= m, hi += m;
  }
  a.lo = lo, a.hi = hi;

  if (!log) {
    double step = 1;
    a.major = nice_ticks(lo, hi, max_ticks, &step);
    for (double v : a.major) a.labels.push_back(format_fixed(v, decimals_for(step)));
    return a;
  }
  // Log axis: decades; if fewer than two fit, add 2x and 5x; if still too few, linear nice ticks.
  std::vector<double> vals;
  for (double k = std::ceil(lo - 1e-9); k <= std::floor(hi + 1e-9); k += 1) vals.push_back(std::pow(10.0, k));
  const bool decades = vals.size() >= 2;
  if (!decades) {
    vals.clear();
    for (double k = std::floor(lo) - 1; k <= std::ceil(hi); k += 1)
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, k), t = std::log10(v);
        if (t >= lo - 1e-9 && t <= hi + 1e-9) vals.push_back(v);
      }
    if (vals.size() < 2) {
      vals.clear();
      for (double v : nice_ticks(std::pow(10.0, lo), std::pow(10.0, hi), max_ticks))
        if (v > 0) vals.push_back(v);
    }
  }
  // Thin out decades if there are too many.
  size_t every = 1;
  while (vals.size() / every > static_cast<size_t>(max_ticks)) ++every;
  for (size_t i = 0; i < vals.size(); i += every) {
    a.major.push_back(std::log10(vals[i]));
    a.labels.push_back(format_log_tick(vals[i]));
  }
  if (decades && every == 1)
    for (double k = std::floor(lo); k <= std::ceil(hi); k += 1)
      for (int m = 2; m <= 9; ++m) {
        const double t = k + std::log10(static_cast<double>(m));
        if (t > lo && t < hi) a.minor.push_back(t);
      }
  return a;
}

// The plot area in pixels, its two axes, and the maps from axis units to pixels.
struct PlotArea {
  int px0, px1, py0, py1;
  Axis ax, ay;
  double map_x(double t) const { return px0 + (t - ax.lo) / (ax.hi - ax.lo) * (px1 - px0); }
  double map_y(double t) const { return py1 - (t - ay.lo) / (ay.hi - ay.lo) * (py1 - py0); }
};

// Grid lines, minor and major ticks, and the tick labels (x labels that would collide are skipped).
void draw_ticks(Image& img, const PlotArea& a, const Font& tick_f, int W, std::vector<TextItem>& items) {
  // 1 px lines, each returning its pixel: the column at x value t over rows [y0, y1), the row at
  // y value t over columns [x0, x1).
  const auto column = [&](double t, int y0, int y1, RGB c) {
    const int x = static_cast<int>(std::lround(a.map_x(t)));
    img.fill_rect(x, y0, x + 1, y1, c);
    return x;
  };
  const auto row = [&](double t, int x0, int x1, RGB c) {
    const int y = static_cast<int>(std::lround(a.map_y(t)));
    img.fill_rect(x0, y, x1, y + 1, c);
    return y;
  };
  for (double t : a.ax.major) column(t, a.py0, a.py1, kGridLine);
  for (double t : a.ay.major) row(t, a.px0, a.px1, kGridLine);
  img.stroke_rect(a.px0, a.py0, a.px1 + 1, a.py1 + 1, kAxis);
  for (double t : a.ax.minor) column(t, a.py1 + 1, a.py1 + 4, kAxis);
  for (double t : a.ay.minor) row(t, a.px0 - 3, a.px0, kAxis);
  int last_x1 = std::numeric_limits<int>::min();
  for (size_t i = 0; i < a.ax.major.size(); ++i) {
    const int x = column(a.ax.major[i], a.py1 + 1, a.py1 + 6, kAxis);
    const LabelBox b0 = tick_f.text_box(a.ax.labels[i], 0, 0);
    const int lx = std::clamp(x - (b0.x0 + b0.x1) / 2, -b0.x0 + 1, W - 1 - b0.x1);
    TextItem t =
        place(tick_f, a.ax.labels[i], lx, a.py1 + 8 + static_cast<int>(tick_f.pixel_height() * 0.8), false, kText);
    if (t.box.x0 > last_x1 + 3) {  // skip labels that would collide
      items.push_back(t);
      last_x1 = t.box.x1;
    }
  }
  for (size_t i = 0; i < a.ay.major.size(); ++i) {
    const int y = row(a.ay.major[i], a.px0 - 6, a.px0, kAxis);
    const LabelBox b0 = tick_f.text_box(a.ay.labels[i], 0, 0);
    items.push_back(place(tick_f, a.ay.labels[i], a.px0 - 8 - b0.x1, centre_baseline(tick_f, y), false, kText));
  }
}

// The axis labels: x centred under the ticks, y turned upright at the left edge.
void draw_axis_labels(const LinePlotSpec& spec, const PlotArea& a, const Font& label_f, int H, int pad,
                      std::vector<TextItem>& items) {
  if (!spec.x_label.empty()) {
    const LabelBox b0 = label_f.text_box(spec.x_label, 0, 0);
    items.push_back(place(label_f, spec.x_label, (a.px0 + a.px1) / 2 - (b0.x0 + b0.x1) / 2,
                          H - pad - std::max(0, b0.y1), false, kText));
  }
  if (!spec.y_label.empty()) items.push_back(place_upright(label_f, spec.y_label, pad, (a.py0 + a.py1) / 2));
}

// Each series as a line (solid or dashed) through its finite points, clipped to the area, with
// markers where asked.
void draw_series(Image& img, const PlotArea& a, const std::vector<Series>& all) {
  const LabelBox clip{a.px0 + 1, a.py0 + 1, a.px1, a.py1};
  for (const auto& s : all) {
    const size_t n = std::min(s.x.size(), s.y.size());
    bool have_prev = false;
    double prev_x = 0, prev_y = 0, phase = 0;
    const double on = 7, off = 5;
    for (size_t i = 0; i < n; ++i) {
      const double tx = a.ax.tf(s.x[i]), ty = a.ay.tf(s.y[i]);
      if (!std::isfinite(tx) || !std::isfinite(ty)) {
        have_prev = false;
        continue;
      }
      const double X = a.map_x(tx), Y = a.map_y(ty);
      if (have_prev) {
        if (!s.dashed) {
          img.draw_line(prev_x, prev_y, X, Y, s.color, 2.0, &clip);
        } else {
          const double len = std::hypot(X - prev_x, Y - prev_y);
          double d = 0;
          while (d < len) {
            const double cyc = std::fmod(phase, on + off);
            const bool draw = cyc < on;
            const double seg = std::min(len - d, draw ? on - cyc : on + off - cyc);
            if (draw && len > 0) {
              const double a = d / len, b = (d + seg) / len;
              img.draw_line(prev_x + (X - prev_x) * a, prev_y + (Y - prev_y) * a, prev_x + (X - prev_x) * b,
                            prev_y + (Y - prev_y) * b, s.color, 2.0, &clip);
            }
            d += seg;
            phase += seg;
          }
        }
      }
      if (s.markers) img.fill_circle(X, Y, 3.0, s.color, &clip);
      prev_x = X, prev_y = Y, have_prev = true;
    }
  }
}

// The legend box right of the plot area: one row per named series, its line style and name.
void draw_legend(Image& img, const PlotArea& a, const std::vector<const Series*>& named, int legend_w, int row_h,
                 const Font& label_f, std::vector<TextItem>& items) {
  if (named.empty()) return;
  const int lx0 = a.px1 + 12, ly0 = a.py0;
  const int lx1 = lx0 + legend_w, ly1 = ly0 + 8 + row_h * static_cast<int>(named.size());
  img.stroke_rect(lx0, ly0, lx1, ly1, {190, 190, 190});
  for (size_t i = 0; i < named.size(); ++i) {
    const int cy = ly0 + 4 + row_h * static_cast<int>(i) + row_h / 2;
    const Series& s = *named[i];
    if (s.dashed) {  // two dashes, shorter with the marker between them (gaps on both sides)
      const int dash = s.markers ? 4 : 8;
      img.draw_line(lx0 + 8, cy, lx0 + 8 + dash, cy, s.color, 2.0);
      img.draw_line(lx0 + 30 - dash, cy, lx0 + 30, cy, s.color, 2.0);
    } else {
      img.draw_line(lx0 + 8, cy, lx0 + 30, cy, s.color, 2.0);
    }
    if (s.markers) img.fill_circle(lx0 + 19, cy, 3.0, s.color);
    items.push_back(place(label_f, s.name, lx0 + 36, centre_baseline(label_f, cy), false, kText));
  }
}

}  // namespace

Image render_line_plot(const LinePlotSpec& spec) {
  const int W = std::max(spec.width, 200);
  int H = std::max(spec.height, 150);
  const Font title_f(17.0f), label_f(14.0f), tick_f(12.0f);
  const int pad = 12;
  const int legend_row_h = static_cast<int>(std::lround(label_f.pixel_height() * 1.6));

  std::vector<double> xs, ys;
  for (const auto& s : spec.series) {
    const size_t n = std::min(s.x.size(), s.y.size());
    xs.insert(xs.end(), s.x.begin(), s.x.begin() + static_cast<long>(n));
    ys.insert(ys.end(), s.y.begin(), s.y.begin() + static_cast<long>(n));
  }

  // Vertical layout.
  std::vector<TextItem> items;
  int top = pad;
  if (!spec.title.empty()) top = layout_title(title_f, spec.title, W / 2, top, items) + 6;
  const int tick_h = static_cast<int>(std::lround(tick_f.pixel_height() * 1.4));
  const int xlabel_h = spec.x_label.empty() ? 0 : static_cast<int>(std::lround(label_f.pixel_height() * 1.5));
  const int py0 = top + 6;

  // Legend (right of the plot area); the image grows downwards until every entry fits.
  int legend_w = 0;
  std::vector<const Series*> named;
  for (const auto& s : spec.series)
    if (!s.name.empty()) named.push_back(&s);
  if (!named.empty()) H = std::max(H, py0 + 8 + legend_row_h * static_cast<int>(named.size()) + pad);
  Image img(W, H);
  const int py1 = H - pad - xlabel_h - tick_h - 8;
  for (const auto* s : named) legend_w = std::max(legend_w, label_f.text_width(s->name));
  if (!named.empty()) legend_w += 28 + 8 + 16;

  const Axis ay = make_axis(spec.log_y, ys, true, std::clamp((py1 - py0) / 45, 2, 10));
  int ytick_w = 0;
  for (const auto& s : ay.labels) ytick_w = std::max(ytick_w, tick_f.text_width(s));
  const int ylabel_w = spec.y_label.empty() ? 0 : static_cast<int>(std::lround(label_f.pixel_height() * 1.5));
  const int px0 = pad + ylabel_w + ytick_w + 10;
  const int px1 = W - pad - (legend_w ? legend_w + 12 : 8);
  if (px1 - px0 < 40 || py1 - py0 < 40) throw std::invalid_argument("line plot: image too small for its labels");
  // Dots are drawn whole: a series with markers pads the x axis (a last point is not cut in half).
  const bool dots = std::any_of(spec.series.begin(), spec.series.end(), [](const Series& s) { return s.markers; });
  Axis ax = make_axis(spec.log_x, xs, dots, std::clamp((px1 - px0) / 70, 2, 12));
  if (spec.integer_x && !spec.log_x) {  // layers 0 and 1 get the ticks 0 and 1, never 0.2 ... 0.8
    for (size_t i = ax.major.size(); i-- > 0;)
      if (std::fabs(ax.major[i] - std::round(ax.major[i])) > 1e-9) {
        ax.major.erase(ax.major.begin() + static_cast<long>(i));
        ax.labels.erase(ax.labels.begin() + static_cast<long>(i));
      }
    for (auto& label : ax.labels) label = format_fixed(std::stod(label), 0);
  }

  const PlotArea area{px0, px1, py0, py1, ax, ay};
  draw_ticks(img, area, tick_f, W, items);
  draw_axis_labels(spec, area, label_f, H, pad, items);
  draw_series(img, area, spec.series);
  draw_legend(img, area, named, legend_w, legend_row_h, label_f, items);

  for (const auto& t : items) draw_item(img, t);
  return img;
}

}  // namespace qkv::render
