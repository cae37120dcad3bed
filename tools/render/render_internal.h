// tools/render/render_internal.h — what the heatmap and the line plot share, not part of the
// public API: their colours, placed text, titles, tick values and number formatting.
#pragma once

#include <string>
#include <vector>

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

TextItem place(const Font& f, const std::string& text, int x, int y, bool rotated, RGB color);
void shift(TextItem& t, int dx, int dy);
void shift(LabelBox& b, int dx, int dy);
void draw_item(Image& img, const TextItem& t);

std::vector<std::string> split_lines(const std::string& s);

// Baseline offset that visually centres a line of text on a given y (x-height/headline centre).
int centre_baseline(const Font& f, int cy);

// Text turned upright (reading upwards), its ink starting at column `left` and centred on row `cy`.
TextItem place_upright(const Font& f, const std::string& text, int left, int cy);

// Title block: each line centred on cx, stacked from `top` downwards without overlap.
// Returns the bottom y of the block.
int layout_title(const Font& f, const std::string& title, int cx, int top, std::vector<TextItem>& out);

// "Nice" tick values in [lo, hi]: multiples of 1, 2, (2.5,) or 5 times a power of ten, at most max_ticks.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks, double* step_out = nullptr, bool allow_2_5 = false);

// Number of decimals needed to print multiples of `step` exactly.
int decimals_for(double step);

std::string format_fixed(double v, int decimals);

// The smallest box holding both; an empty `b` adds nothing.
LabelBox union_box(const LabelBox& a, const LabelBox& b);

}  // namespace qkv::render::detail
