// tools/render/render_layout.cpp — layout helpers shared by the heatmap and the line plot: placed
// text, titles, "nice" tick values and number formatting. Declared in render_internal.h.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "framework/text_util.h"
#include "render_internal.h"

namespace qkv::render::detail {

TextItem place(const Font& f, const std::string& text, int x, int y, bool rotated, RGB color) {
  return {&f, text, x, y, rotated, color, f.text_box(text, x, y, rotated)};
}

void shift(LabelBox& b, int dx, int dy) { b.x0 += dx, b.x1 += dx, b.y0 += dy, b.y1 += dy; }
void shift(TextItem& t, int dx, int dy) {
  t.x += dx, t.y += dy;
  shift(t.box, dx, dy);
}

void draw_item(Image& img, const TextItem& t) {
  if (t.rotated)
    t.font->draw_rotated(img, t.x, t.y, t.text, t.color);
  else
    t.font->draw(img, t.x, t.y, t.text, t.color);
}

// The lines of a title: framework's split, except that an empty title has none.
std::vector<std::string> split_lines(const std::string& s) {
  return s.empty() ? std::vector<std::string>{} : split(s, '\n');
}

int centre_baseline(const Font& f, int cy) { return cy + static_cast<int>(std::lround(0.27 * f.pixel_height())); }

TextItem place_upright(const Font& f, const std::string& text, int left, int cy) {
  const LabelBox b0 = f.text_box(text, 0, 0);
  // Rotated: horizontal extent is the glyph height; vertical extent is the text width.
  return place(f, text, left - b0.y0, cy + b0.width() / 2 + b0.x0, true, kText);
}

int layout_title(const Font& f, const std::string& title, int cx, int top, std::vector<TextItem>& out) {
  int y = top;
  for (const auto& line : split_lines(title)) {
    const LabelBox b0 = f.text_box(line, 0, 0);
    const int above = std::max(-b0.y0, static_cast<int>(std::lround(0.8 * f.pixel_height())));
    const int below = std::max(b0.y1, static_cast<int>(std::lround(0.25 * f.pixel_height())));
    const int baseline = y + above;
    out.push_back(place(f, line, cx - (b0.x0 + b0.x1) / 2, baseline, false, kText));
    y = baseline + below + 4;
  }
  return y;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks, double* step_out, bool allow_2_5) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {
    if (step_out) *step_out = 1;
    return {lo};
  }
  max_ticks = std::max(max_ticks, 2);
  const double span = hi - lo;
  const double base = std::pow(10.0, std::floor(std::log10(span / max_ticks)) - 1);
  double step = span;
  for (double e = base; e <= span * 10; e *= 10) {
    bool found = false;
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      if (m == 2.5 && !allow_2_5) continue;
      const double s = m * e;
      const double first = std::ceil(lo / s - 1e-9), last = std::floor(hi / s + 1e-9);
      if (last - first + 1 <= max_ticks) {
        step = s;
        found = true;
        break;
      }
    }
    if (found) break;
  }
  std::vector<double> ticks;
  for (double k = std::ceil(lo / step - 1e-9); k <= std::floor(hi / step + 1e-9); k += 1) {
    double v = k * step;
    if (std::fabs(v) < step * 1e-9) v = 0;
    ticks.push_back(v);
  }
  if (step_out) *step_out = step;
  return ticks;
}

int decimals_for(double step) {
  for (int d = 0; d <= 6; ++d) {
    const double s = step * std::pow(10.0, d);
    if (std::fabs(s - std::round(s)) < 1e-6 * std::max(1.0, std::fabs(s))) return d;
  }
  return 6;
}

std::string format_fixed(double v, int decimals) {
  char buf[64];
  if (std::fabs(v) >= 1e7 || (v != 0 && std::fabs(v) < 1e-6)) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    if (std::strcmp(buf, "-0") == 0 || (buf[0] == '-' && std::strspn(buf + 1, "0.") == std::strlen(buf + 1)))
      std::memmove(buf, buf + 1, std::strlen(buf));  // no "-0.00"
  }
  return buf;
}

LabelBox union_box(const LabelBox& a, const LabelBox& b) {
  if (b.empty()) return a;
  return {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1), std::max(a.y1, b.y1)};
}

}  // namespace qkv::render::detail
