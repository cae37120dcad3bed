// tools/render/render_image.cpp — the RGB raster: pixels, rectangles, anti-aliased lines and
// circles, pasting, hstack (images side by side), the colour maps (matplotlib's viridis and tab10)
// and write_png (stb_image_write's encoding, written atomically). See render.h.
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "framework/file_util.h"
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

RGB viridis(double t) {
  // Every 8th entry (plus the last) of matplotlib's 256-entry viridis table, as (index, r, g, b).
  static const double kKeys[][4] = {
      {0, 0.267004, 0.004874, 0.329415},   {8, 0.277018, 0.050344, 0.375715},   {16, 0.282327, 0.094955, 0.417331},
      {24, 0.282884, 0.135920, 0.453427},  {32, 0.278826, 0.175490, 0.483397},  {40, 0.270595, 0.214069, 0.507052},
      {48, 0.258965, 0.251537, 0.524736},  {56, 0.244972, 0.287675, 0.537260},  {64, 0.229739, 0.322361, 0.545706},
      {72, 0.214298, 0.355619, 0.551184},  {80, 0.199430, 0.387607, 0.554642},  {88, 0.185556, 0.418570, 0.556753},
      {96, 0.172719, 0.448791, 0.557885},  {104, 0.160665, 0.478540, 0.558115}, {112, 0.149039, 0.508051, 0.557250},
      {120, 0.137770, 0.537492, 0.554906}, {128, 0.127568, 0.566949, 0.550556}, {136, 0.120565, 0.596422, 0.543611},
      {144, 0.120638, 0.625828, 0.533488}, {152, 0.132268, 0.655014, 0.519661}, {160, 0.157851, 0.683765, 0.501686},
      {168, 0.196571, 0.711827, 0.479221}, {176, 0.246070, 0.738910, 0.452024}, {184, 0.304148, 0.764704, 0.419943},
      {192, 0.369214, 0.788888, 0.382914}, {200, 0.440137, 0.811138, 0.340967}, {208, 0.515992, 0.831158, 0.294279},
      {216, 0.595839, 0.848717, 0.243329}, {224, 0.678489, 0.863742, 0.189503}, {232, 0.762373, 0.876424, 0.137064},
      {240, 0.845561, 0.887322, 0.099702}, {248, 0.926106, 0.897330, 0.104071}, {255, 0.993248, 0.906157, 0.143936},
  };
  constexpr size_t n = std::size(kKeys);
  t = t > 0 ? std::min(t, 1.0) : 0;  // NaN too maps to 0
  const double idx = t * 255.0;
  size_t k = 0;
  while (k + 2 < n && kKeys[k + 1][0] <= idx) ++k;
  const double* a = kKeys[k];
  const double* b = kKeys[k + 1];
  const double f = std::clamp((idx - a[0]) / (b[0] - a[0]), 0.0, 1.0);
  RGB c{};
  for (int i = 0; i < 3; ++i)
    c[i] = static_cast<uint8_t>(std::lround(std::clamp(a[i + 1] + (b[i + 1] - a[i + 1]) * f, 0.0, 1.0) * 255.0));
  return c;
}

RGB tab10(int i) {
  static const RGB kColors[10] = {{31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
                                  {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  return kColors[((i % 10) + 10) % 10];
}

void write_png(const Image& img, const std::string& path) {
  if (img.width <= 0 || img.height <= 0) throw std::runtime_error("write_png: empty image for " + path);
  if (img.rgb.size() != static_cast<size_t>(img.width) * img.height * 3)
    throw std::runtime_error("write_png: pixel buffer size does not match width*height*3 for " + path);
  std::string png;
  const auto append = [](void* context, void* data, int size) {  // stb hands the encoded bytes over in pieces
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, img.width, img.height, 3, img.rgb.data(), img.width * 3))
    throw std::runtime_error("write_png: cannot encode " + path);
  write_file_atomic(path, png);
}

}  // namespace qkv::render
