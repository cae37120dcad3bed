// tools/render/render_image.cpp — the RGB raster: pixels, rectangles, anti-aliased lines and
// circles, pasting, and hstack (images side by side). See render.h.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "render.h"

namespace qkv::render {

Image::Image(int w, int h, RGB background) : width(w), height(h) {
  if (w < 0 || h < 0) throw std::invalid_argument("Image: negative size");
  if (static_cast<long long>(w) * h > (1LL << 28)) throw std::invalid_argument("Image: too large");
  rgb.resize(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) std::copy(background.begin(), background.end(), rgb.begin() + i);
}

RGB Image::get(int x, int y) const {
  if (!contains(x, y)) throw std::out_of_range("Image::get: pixel outside the image");
  const uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
  return {p[0], p[1], p[2]};
}

void Image::set(int x, int y, RGB c) {
  if (!contains(x, y)) return;
  std::copy(c.begin(), c.end(), rgb.begin() + (static_cast<size_t>(y) * width + x) * 3);
}

void Image::blend(int x, int y, RGB c, double alpha) {
  if (!contains(x, y) || !(alpha > 0)) return;
  if (alpha >= 1) return set(x, y, c);
  uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
  for (int k = 0; k < 3; ++k) p[k] = static_cast<uint8_t>(std::lround(p[k] + (c[k] - p[k]) * alpha));
}

void Image::fill_rect(int x0, int y0, int x1, int y1, RGB c) {
  x0 = std::max(x0, 0), y0 = std::max(y0, 0);
  x1 = std::min(x1, width), y1 = std::min(y1, height);
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) set(x, y, c);
}

void Image::stroke_rect(int x0, int y0, int x1, int y1, RGB c) {
  if (x1 <= x0 || y1 <= y0) return;
  fill_rect(x0, y0, x1, y0 + 1, c);
  fill_rect(x0, y1 - 1, x1, y1, c);
  fill_rect(x0, y0, x0 + 1, y1, c);
  fill_rect(x1 - 1, y0, x1, y1, c);
}

namespace {
bool in_clip(const LabelBox* clip, int x, int y) {
  return !clip || (x >= clip->x0 && x < clip->x1 && y >= clip->y0 && y < clip->y1);
}

// Blends c into the pixels within one pixel of [x_lo, x_hi] x [y_lo, y_hi] (and inside clip), each
// by the coverage `cover` gives for its centre.
template <typename Coverage>
void blend_covered(Image& img, double x_lo, double x_hi, double y_lo, double y_hi, RGB c, const LabelBox* clip,
                   Coverage cover) {
  const int x0 = std::max(0, static_cast<int>(std::floor(x_lo - 1)));
  const int x1 = std::min(img.width - 1, static_cast<int>(std::ceil(x_hi + 1)));
  const int y0 = std::max(0, static_cast<int>(std::floor(y_lo - 1)));
  const int y1 = std::min(img.height - 1, static_cast<int>(std::ceil(y_hi + 1)));
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x)
      if (in_clip(clip, x, y)) img.blend(x, y, c, cover(x + 0.5, y + 0.5));
}
}  // namespace

void Image::draw_line(double ax, double ay, double bx, double by, RGB c, double line_width, const LabelBox* clip) {
  if (!std::isfinite(ax) || !std::isfinite(ay) || !std::isfinite(bx) || !std::isfinite(by)) return;
  const double hw = std::max(line_width, 0.0) / 2;
  const double dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy;
  const auto cover = [&](double px, double py) {
    double t = len2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0;
    t = std::clamp(t, 0.0, 1.0);
    const double ex = px - (ax + t * dx), ey = py - (ay + t * dy);
    return std::clamp(hw + 0.5 - std::sqrt(ex * ex + ey * ey), 0.0, 1.0);
  };
  blend_covered(*this, std::min(ax, bx) - hw, std::max(ax, bx) + hw, std::min(ay, by) - hw, std::max(ay, by) + hw, c,
                clip, cover);
}

void Image::fill_circle(double cx, double cy, double r, RGB c, const LabelBox* clip) {
  if (!std::isfinite(cx) || !std::isfinite(cy)) return;
  const auto cover = [&](double px, double py) { return std::clamp(r + 0.5 - std::hypot(px - cx, py - cy), 0.0, 1.0); };
  blend_covered(*this, cx - r, cx + r, cy - r, cy + r, c, clip, cover);
}

void Image::paste(const Image& src, int x, int y) {
  for (int sy = 0; sy < src.height; ++sy)
    for (int sx = 0; sx < src.width; ++sx) set(x + sx, y + sy, src.get(sx, sy));  // set clips
}

Image hstack(const std::vector<Image>& images, int gap_px) {
  gap_px = std::max(gap_px, 0);
  int w = 0, h = 0;
  for (size_t i = 0; i < images.size(); ++i) {
    w += images[i].width + (i ? gap_px : 0);
    h = std::max(h, images[i].height);
  }
  Image out(w, h);
  int x = 0;
  for (const auto& im : images) {
    out.paste(im, x, 0);
    x += im.width + gap_px;
  }
  return out;
}

}  // namespace qkv::render
