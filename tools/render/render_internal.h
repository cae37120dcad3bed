// tools/render/render_internal.h — what the heatmap and the line plot share, not part of the
// public API: their colours, placed text, titles, tick values and number formatting.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "framework/text_util.h"
#include "render.h"

namespace qkv::render::detail {

inline const RGB kBlack{0, 0, 0};
inline const RGB kText{30, 30, 30};
inline const RGB kAxis{60, 60, 60};
inline const RGB kGridLine{225, 225, 225};
inline const RGB kMaskFill{222, 222, 222};
inline const RGB kMaskHatch{160, 160, 160};

// A piece of text placed on the image.
struct TextItem {
  const Font* font;
  std::string text;
  int x, y;  // pen origin
  bool rotated;
  RGB color;
  LabelBox box;
};

inline TextItem place(const Font& f, const std::string& text, int x, int y, bool rotated, RGB color) {
  return {&f, text, x, y, rotated, color, f.text_box(text, x, y, rotated)};
}

inline void shift(LabelBox& b, int dx, int dy) { b.x0 += dx, b.x1 += dx, b.y0 += dy, b.y1 += dy; }
inline void shift(TextItem& t, int dx, int dy) {
  t.x += dx, t.y += dy;
  shift(t.box, dx, dy);
}

inline void draw_item(Image& img, const TextItem& t) {
  if (t.rotated)
    t.font->draw_rotated(img, t.x, t.y, t.text, t.color);
  else
    t.font->draw(img, t.x, t.y, t.text, t.color);
}

// The lines of a title: framework's split, except that an empty title has none.
inline std::vector<std::string> split_lines(const std::string& s) {
  return s.empty() ? std::vector<std::string>{} : split(s, '\n');
}

// Baseline offset that visually centres a line of text on a given y (x-height/headline centre).
inline int centre_baseline(const Font& f, int cy) {
  return cy + static_cast<int>(std::lround(0.27 * f.pixel_height()));
}

// Text turned upright (reading upwards), its ink starting at column `left` and centred on row `cy`.
inline TextItem place_upright(const Font& f, const std::string& text, int left, int cy) {
  const LabelBox b0 = f.text_box(text, 0, 0);
  // Rotated: horizontal extent is the glyph height; vertical extent is the text width.
  return place(f, text, left - b0.y0, cy + b0.width() / 2 + b0.x0, true, kText);
}

// Title block: each line centred on cx, stacked from `top` downwards without overlap.
// Returns the bottom y of the block.
inline int layout_title(const Font& f, const std::string& title, int cx, int top, std::vector<TextItem>& out) {
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

// "Nice" tick values in [lo, hi]: multiples of 1, 2, (2.5,) or 5 times a power of ten, at most max_ticks.
inline std::vector<double> nice_ticks(double lo, double hi, int max_ticks, double* step_out = nullptr,
                                      bool allow_2_5 = false) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {
    if (step_out) *step_out = 1;
    return {lo};
  }
  max_ticks = std::max(max_ticks, 2);
  const double span = hi - lo;
  const double base = std::pow(10.0, std::floor(std::log10(span / max_ticks)) - 1);
  double step = 0;  // the smallest multiple that fits (span when none does)
  for (double e = base; step == 0 && e <= span * 10; e *= 10)
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      const double s = m * e, first = std::ceil(lo / s - 1e-9), last = std::floor(hi / s + 1e-9);
      if ((m != 2.5 || allow_2_5) && last - first + 1 <= max_ticks) {
        step = s;
        break;
      }
    }
  if (step == 0) step = span;
  std::vector<double> ticks;
  for (double k = std::ceil(lo / step - 1e-9); k <= std::floor(hi / step + 1e-9); k += 1) {
    double v = k * step;
    if (std::fabs(v) < step * 1e-9) v = 0;
    ticks.push_back(v);
  }
  if (step_out) *step_out = step;
  return ticks;
}

// Number of decimals needed to print multiples of `step` exactly.
inline int decimals_for(double step) {
  for (int d = 0; d <= 6; ++d) {
    const double s = step * std::pow(10.0, d);
    if (std::fabs(s - std::round(s)) < 1e-6 * std::max(1.0, std::fabs(s))) return d;
  }
  return 6;
}

inline std::string format_fixed(double v, int decimals) {
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

// The smallest box holding both; an empty `b` adds nothing.
inline LabelBox union_box(const LabelBox& a, const LabelBox& b) {
  if (b.empty()) return a;
  return {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1), std::max(a.y1, b.y1)};
}

}  // namespace qkv::render::detail
