// qkv::render implementation: image primitives, text (HarfBuzz shaping + stb_truetype raster),
// viridis, heatmaps, line plots and atomic PNG output. See render.h.
#include "render.h"

#include <fcntl.h>
#include <unistd.h>
#include <hb.h>
#include <stb/stb_image_write.h>
#include <stb/stb_truetype.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <sys/stat.h>

namespace qkv::render {

// ---------------------------------------------------------------------------------------------
// Image
// ---------------------------------------------------------------------------------------------

Image::Image(int w, int h, RGB background) : width(w), height(h) {
  if (w < 0 || h < 0) throw std::invalid_argument("Image: negative size");
  if (static_cast<long long>(w) * h > (1LL << 28)) throw std::invalid_argument("Image: too large");
  rgb.resize(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = background[0];
    rgb[i + 1] = background[1];
    rgb[i + 2] = background[2];
  }
}

RGB Image::get(int x, int y) const {
  if (!contains(x, y)) throw std::out_of_range("Image::get: pixel outside the image");
  const uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
  return {p[0], p[1], p[2]};
}

void Image::set(int x, int y, RGB c) {
  if (!contains(x, y)) return;
  uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
  p[0] = c[0];
  p[1] = c[1];
  p[2] = c[2];
}

void Image::blend(int x, int y, RGB c, double alpha) {
  if (!contains(x, y) || !(alpha > 0)) return;
  if (alpha >= 1) return set(x, y, c);
  uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
  for (int k = 0; k < 3; ++k)
    p[k] = static_cast<uint8_t>(std::lround(p[k] + (c[k] - p[k]) * alpha));
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
}  // namespace

void Image::draw_line(double ax, double ay, double bx, double by, RGB c, double line_width,
                      const LabelBox* clip) {
  if (!std::isfinite(ax) || !std::isfinite(ay) || !std::isfinite(bx) || !std::isfinite(by)) return;
  const double hw = std::max(line_width, 0.0) / 2;
  const double dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy;
  int x0 = static_cast<int>(std::floor(std::min(ax, bx) - hw - 1));
  int x1 = static_cast<int>(std::ceil(std::max(ax, bx) + hw + 1));
  int y0 = static_cast<int>(std::floor(std::min(ay, by) - hw - 1));
  int y1 = static_cast<int>(std::ceil(std::max(ay, by) + hw + 1));
  x0 = std::max(x0, 0), y0 = std::max(y0, 0), x1 = std::min(x1, width - 1), y1 = std::min(y1, height - 1);
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) {
      if (!in_clip(clip, x, y)) continue;
      const double px = x + 0.5, py = y + 0.5;
      double t = len2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0;
      t = std::clamp(t, 0.0, 1.0);
      const double ex = px - (ax + t * dx), ey = py - (ay + t * dy);
      const double cov = std::clamp(hw + 0.5 - std::sqrt(ex * ex + ey * ey), 0.0, 1.0);
      blend(x, y, c, cov);
    }
  }
}

void Image::fill_circle(double cx, double cy, double r, RGB c, const LabelBox* clip) {
  if (!std::isfinite(cx) || !std::isfinite(cy)) return;
  const int x0 = std::max(0, static_cast<int>(std::floor(cx - r - 1)));
  const int x1 = std::min(width - 1, static_cast<int>(std::ceil(cx + r + 1)));
  const int y0 = std::max(0, static_cast<int>(std::floor(cy - r - 1)));
  const int y1 = std::min(height - 1, static_cast<int>(std::ceil(cy + r + 1)));
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      if (!in_clip(clip, x, y)) continue;
      const double d = std::hypot(x + 0.5 - cx, y + 0.5 - cy);
      blend(x, y, c, std::clamp(r + 0.5 - d, 0.0, 1.0));
    }
}

void Image::paste(const Image& src, int x, int y) {
  for (int sy = 0; sy < src.height; ++sy)
    for (int sx = 0; sx < src.width; ++sx)
      if (contains(x + sx, y + sy)) set(x + sx, y + sy, src.get(sx, sy));
}

// ---------------------------------------------------------------------------------------------
// Fonts
// ---------------------------------------------------------------------------------------------

namespace detail {

struct FontData {
  std::string path;
  std::vector<unsigned char> bytes;
  stbtt_fontinfo info{};
  hb_blob_t* blob = nullptr;
  hb_face_t* face = nullptr;
  hb_font_t* font = nullptr;
  unsigned upem = 1000;
  int ascent = 0, descent = 0;  // font units; descent negative as in the font

  FontData() = default;
  FontData(const FontData&) = delete;
  FontData& operator=(const FontData&) = delete;
  ~FontData() {
    if (font) hb_font_destroy(font);
    if (face) hb_face_destroy(face);
    if (blob) hb_blob_destroy(blob);
  }
  bool has_glyph(char32_t cp) const {
    hb_codepoint_t g = 0;
    return hb_font_get_nominal_glyph(font, cp, &g) && g != 0;
  }
};

// Alpha coverage of a rendered string; the pen origin (start of the baseline) is at (ox, oy).
struct TextMask {
  int w = 0, h = 0, ox = 0, oy = 0;
  std::vector<uint8_t> a;
};

}  // namespace detail

namespace {

using detail::FontData;

const char* const kFontPackage = "fonts-lohit-deva";
const std::vector<std::string> kFontCandidates = {
    "/usr/share/fonts/truetype/lohit-devanagari/Lohit-Devanagari.ttf",  // Debian/Ubuntu
    "/usr/share/fonts/lohit-devanagari/Lohit-Devanagari.ttf",           // Fedora-style layout
    "/usr/local/share/fonts/Lohit-Devanagari.ttf",
};
const std::vector<std::string> kFallbackCandidates = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
};

bool file_exists(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::shared_ptr<const FontData> load_font_data(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const FontData>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(path); it != cache.end()) return it->second;

  auto fd = std::make_shared<FontData>();
  fd->path = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open font file " + path);
  fd->bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  const int offset = stbtt_GetFontOffsetForIndex(fd->bytes.data(), 0);
  if (fd->bytes.size() < 12 || offset < 0 || !stbtt_InitFont(&fd->info, fd->bytes.data(), offset))
    throw std::runtime_error("not a usable TrueType/OpenType font: " + path);
  fd->blob = hb_blob_create(reinterpret_cast<const char*>(fd->bytes.data()),
                            static_cast<unsigned>(fd->bytes.size()), HB_MEMORY_MODE_READONLY, nullptr,
                            nullptr);
  fd->face = hb_face_create(fd->blob, 0);
  fd->font = hb_font_create(fd->face);  // scale defaults to upem: positions come in font units
  hb_font_make_immutable(fd->font);
  fd->upem = std::max(1u, hb_face_get_upem(fd->face));
  int line_gap = 0;
  stbtt_GetFontVMetrics(&fd->info, &fd->ascent, &fd->descent, &line_gap);
  std::shared_ptr<const FontData> result = fd;
  cache.emplace(path, result);
  return result;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string resolve_font_path(const std::string& explicit_path) {
  std::vector<std::string> tried;
  std::string hint = std::string("install the Debian package ") + kFontPackage;
  if (!explicit_path.empty()) {
    tried = {explicit_path};
  } else if (const char* env = std::getenv("QKV_FONT"); env && *env) {
    tried = {env};
    hint += ", or fix/unset QKV_FONT";
  } else {
    tried = kFontCandidates;
  }
  for (const auto& p : tried)
    if (file_exists(p)) return p;
  throw std::runtime_error("font not found: tried " + join(tried, ", ") + " (" + hint + ")");
}

std::shared_ptr<const FontData> load_fallback() {
  for (const auto& p : kFallbackCandidates) {
    if (!file_exists(p)) continue;
    try {
      return load_font_data(p);
    } catch (const std::exception&) {
      return nullptr;  // the fallback is optional
    }
  }
  return nullptr;
}

// Decodes one UTF-8 sequence at s[i]; invalid bytes decode as U+FFFD of length 1.
char32_t decode_utf8(const std::string& s, size_t i, size_t& len) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  len = 1;
  if (c < 0x80) return c;
  int n = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0xFFFD;
  char32_t cp = c & (0x7F >> n);
  for (int k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0xFFFD;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  len = static_cast<size_t>(n);
  return cp;
}

bool is_mark(hb_unicode_funcs_t* uf, char32_t cp) {
  const auto gc = hb_unicode_general_category(uf, cp);
  return gc == HB_UNICODE_GENERAL_CATEGORY_NON_SPACING_MARK ||
         gc == HB_UNICODE_GENERAL_CATEGORY_SPACING_MARK ||
         gc == HB_UNICODE_GENERAL_CATEGORY_ENCLOSING_MARK || cp == 0x200C || cp == 0x200D;
}

}  // namespace

Font::Font(float pixel_height, const std::string& path) : px_(pixel_height) {
  if (!(pixel_height > 0) || pixel_height > 1000) throw std::invalid_argument("Font: bad pixel height");
  primary_ = load_font_data(resolve_font_path(path));
  fallback_ = load_fallback();
  if (fallback_ && fallback_->path == primary_->path) fallback_ = nullptr;
}

const std::string& Font::path() const { return primary_->path; }

int Font::ascent() const {
  return static_cast<int>(std::ceil(primary_->ascent * static_cast<double>(px_) / primary_->upem));
}
int Font::descent() const {
  return static_cast<int>(std::ceil(-primary_->descent * static_cast<double>(px_) / primary_->upem));
}

uint32_t Font::glyph_index(char32_t codepoint) const {
  return static_cast<uint32_t>(stbtt_FindGlyphIndex(&primary_->info, static_cast<int>(codepoint)));
}

std::vector<ShapedGlyph> Font::shape(const std::string& utf8) const {
  struct Run {
    size_t start, len;
    hb_script_t script;
    int face;
  };
  hb_unicode_funcs_t* uf = hb_unicode_funcs_get_default();
  std::vector<Run> runs;
  // Itemise into runs of one script and one face, so that e.g. Latin + Devanagari in one title is
  // shaped with the right script rules, and characters missing from the primary font use the fallback.
  for (size_t i = 0; i < utf8.size();) {
    size_t n = 1;
    const char32_t cp = decode_utf8(utf8, i, n);
    const hb_script_t sc = hb_unicode_script(uf, cp);
    const bool weak = sc == HB_SCRIPT_COMMON || sc == HB_SCRIPT_INHERITED || sc == HB_SCRIPT_UNKNOWN;
    int face = 0;
    if (!runs.empty() && (sc == HB_SCRIPT_INHERITED || is_mark(uf, cp)))
      face = runs.back().face;
    else if (!primary_->has_glyph(cp) && fallback_ && fallback_->has_glyph(cp))
      face = 1;
    if (runs.empty() || face != runs.back().face ||
        (!weak && runs.back().script != HB_SCRIPT_COMMON && sc != runs.back().script)) {
      runs.push_back({i, n, weak ? HB_SCRIPT_COMMON : sc, face});
    } else {
      runs.back().len += n;
      if (!weak && runs.back().script == HB_SCRIPT_COMMON) runs.back().script = sc;
    }
    i += n;
  }

  std::vector<ShapedGlyph> out;
  double pen = 0;
  for (const Run& run : runs) {
    const FontData& fd = run.face == 1 ? *fallback_ : *primary_;
    const double scale = static_cast<double>(px_) / fd.upem;
    hb_buffer_t* buf = hb_buffer_create();
    hb_buffer_add_utf8(buf, utf8.data(), static_cast<int>(utf8.size()), static_cast<unsigned>(run.start),
                       static_cast<int>(run.len));
    hb_buffer_set_direction(buf, HB_DIRECTION_LTR);
    if (run.script != HB_SCRIPT_COMMON) hb_buffer_set_script(buf, run.script);
    hb_buffer_guess_segment_properties(buf);
    hb_shape(fd.font, buf, nullptr, 0);
    unsigned count = 0;
    const hb_glyph_info_t* info = hb_buffer_get_glyph_infos(buf, &count);
    const hb_glyph_position_t* pos = hb_buffer_get_glyph_positions(buf, &count);
    for (unsigned k = 0; k < count; ++k) {
      ShapedGlyph g;
      g.glyph = info[k].codepoint;
      g.cluster = info[k].cluster;
      g.face = run.face;
      g.x = pen + pos[k].x_offset * scale;
      g.y = -pos[k].y_offset * scale;
      g.advance = pos[k].x_advance * scale;
      pen += g.advance;
      out.push_back(g);
    }
    hb_buffer_destroy(buf);
  }
  return out;
}

double Font::advance(const std::string& utf8) const {
  double a = 0;
  for (const auto& g : shape(utf8)) a += g.advance;
  return a;
}

detail::TextMask Font::rasterize(const std::string& utf8) const {
  struct Placed {
    const FontData* fd;
    int glyph, ix, iy, x0, y0, x1, y1;
    float fx, fy, scale;
  };
  const auto glyphs = shape(utf8);
  std::vector<Placed> placed;
  double pen_end = 0;
  int bx0 = 0, by0 = 0, bx1 = 0, by1 = 0;  // union box relative to the origin
  bool any_ink = false;
  for (const auto& g : glyphs) {
    const FontData* fd = g.face == 1 ? fallback_.get() : primary_.get();
    const float scale = px_ / static_cast<float>(fd->upem);
    Placed p{fd, static_cast<int>(g.glyph), 0, 0, 0, 0, 0, 0, 0, 0, scale};
    p.ix = static_cast<int>(std::floor(g.x));
    p.iy = static_cast<int>(std::floor(g.y));
    p.fx = static_cast<float>(g.x - p.ix);
    p.fy = static_cast<float>(g.y - p.iy);
    stbtt_GetGlyphBitmapBoxSubpixel(&fd->info, p.glyph, scale, scale, p.fx, p.fy, &p.x0, &p.y0, &p.x1, &p.y1);
    pen_end = std::max(pen_end, g.x + g.advance);
    if (p.x1 > p.x0 && p.y1 > p.y0) {
      const int gx0 = p.ix + p.x0, gy0 = p.iy + p.y0, gx1 = p.ix + p.x1, gy1 = p.iy + p.y1;
      if (!any_ink) {
        by0 = gy0, by1 = gy1;
        any_ink = true;
      }
      bx0 = std::min(bx0, gx0), by0 = std::min(by0, gy0);
      bx1 = std::max(bx1, gx1), by1 = std::max(by1, gy1);
      placed.push_back(p);
    }
  }
  bx1 = std::max(bx1, static_cast<int>(std::ceil(pen_end)));
  detail::TextMask m;
  if (!any_ink) {  // nothing visible: zero-height box spanning the advance
    m.w = bx1 - bx0;
    m.h = 0;
    m.ox = -bx0;
    return m;
  }
  m.w = bx1 - bx0;
  m.h = by1 - by0;
  m.ox = -bx0;
  m.oy = -by0;
  m.a.assign(static_cast<size_t>(m.w) * m.h, 0);
  std::vector<unsigned char> tmp;
  for (const auto& p : placed) {
    const int gw = p.x1 - p.x0, gh = p.y1 - p.y0;
    tmp.assign(static_cast<size_t>(gw) * gh, 0);
    stbtt_MakeGlyphBitmapSubpixel(&p.fd->info, tmp.data(), gw, gh, gw, p.scale, p.scale, p.fx, p.fy, p.glyph);
    for (int y = 0; y < gh; ++y)
      for (int x = 0; x < gw; ++x) {
        const int mx = m.ox + p.ix + p.x0 + x, my = m.oy + p.iy + p.y0 + y;
        uint8_t& dst = m.a[static_cast<size_t>(my) * m.w + mx];
        dst = std::max<uint8_t>(dst, tmp[static_cast<size_t>(y) * gw + x]);
      }
  }
  return m;
}

int Font::text_width(const std::string& utf8) const { return rasterize(utf8).w; }

namespace {
LabelBox mask_box(const detail::TextMask& m, int x, int y, bool rotated) {
  if (!rotated) return {x - m.ox, y - m.oy, x - m.ox + m.w, y - m.oy + m.h};
  // mask pixel (mx, my) -> image (x + (my - oy), y - (mx - ox))
  return {x - m.oy, y + m.ox - m.w + 1, x - m.oy + m.h, y + m.ox + 1};
}

void blit_mask(Image& img, const detail::TextMask& m, int x, int y, bool rotated, RGB color) {
  for (int my = 0; my < m.h; ++my)
    for (int mx = 0; mx < m.w; ++mx) {
      const uint8_t a = m.a[static_cast<size_t>(my) * m.w + mx];
      if (!a) continue;
      if (rotated)
        img.blend(x + (my - m.oy), y - (mx - m.ox), color, a / 255.0);
      else
        img.blend(x + (mx - m.ox), y + (my - m.oy), color, a / 255.0);
    }
}
}  // namespace

LabelBox Font::text_box(const std::string& utf8, int x, int baseline_y, bool rotated) const {
  return mask_box(rasterize(utf8), x, baseline_y, rotated);
}

void Font::draw(Image& img, int x, int baseline_y, const std::string& utf8, RGB color) const {
  blit_mask(img, rasterize(utf8), x, baseline_y, false, color);
}

void Font::draw_rotated(Image& img, int x, int baseline_y, const std::string& utf8, RGB color) const {
  blit_mask(img, rasterize(utf8), x, baseline_y, true, color);
}

// ---------------------------------------------------------------------------------------------
// Colours
// ---------------------------------------------------------------------------------------------

RGB viridis(double t) {
  // Every 8th entry (plus the last) of matplotlib's 256-entry viridis table, as (index, r, g, b).
  static const double kKeys[][4] = {
      {0, 0.267004, 0.004874, 0.329415},   {8, 0.277018, 0.050344, 0.375715},
      {16, 0.282327, 0.094955, 0.417331},  {24, 0.282884, 0.135920, 0.453427},
      {32, 0.278826, 0.175490, 0.483397},  {40, 0.270595, 0.214069, 0.507052},
      {48, 0.258965, 0.251537, 0.524736},  {56, 0.244972, 0.287675, 0.537260},
      {64, 0.229739, 0.322361, 0.545706},  {72, 0.214298, 0.355619, 0.551184},
      {80, 0.199430, 0.387607, 0.554642},  {88, 0.185556, 0.418570, 0.556753},
      {96, 0.172719, 0.448791, 0.557885},  {104, 0.160665, 0.478540, 0.558115},
      {112, 0.149039, 0.508051, 0.557250}, {120, 0.137770, 0.537492, 0.554906},
      {128, 0.127568, 0.566949, 0.550556}, {136, 0.120565, 0.596422, 0.543611},
      {144, 0.120638, 0.625828, 0.533488}, {152, 0.132268, 0.655014, 0.519661},
      {160, 0.157851, 0.683765, 0.501686}, {168, 0.196571, 0.711827, 0.479221},
      {176, 0.246070, 0.738910, 0.452024}, {184, 0.304148, 0.764704, 0.419943},
      {192, 0.369214, 0.788888, 0.382914}, {200, 0.440137, 0.811138, 0.340967},
      {208, 0.515992, 0.831158, 0.294279}, {216, 0.595839, 0.848717, 0.243329},
      {224, 0.678489, 0.863742, 0.189503}, {232, 0.762373, 0.876424, 0.137064},
      {240, 0.845561, 0.887322, 0.099702}, {248, 0.926106, 0.897330, 0.104071},
      {255, 0.993248, 0.906157, 0.143936},
  };
  constexpr size_t n = std::size(kKeys);
  if (!(t > 0)) t = 0;  // also catches NaN
  if (t > 1) t = 1;
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
  static const RGB kColors[10] = {{31, 119, 180}, {255, 127, 14},  {44, 160, 44},  {214, 39, 40},
                                  {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                                  {188, 189, 34},  {23, 190, 207}};
  return kColors[((i % 10) + 10) % 10];
}

// ---------------------------------------------------------------------------------------------
// Shared layout helpers
// ---------------------------------------------------------------------------------------------

namespace {

const RGB kBlack{0, 0, 0};
const RGB kText{30, 30, 30};
const RGB kAxis{60, 60, 60};
const RGB kGridLine{225, 225, 225};
const RGB kMaskFill{222, 222, 222};
const RGB kMaskHatch{160, 160, 160};

// A piece of text placed on the image.
struct TextItem {
  const Font* font;
  std::string text;
  int x, y;  // pen origin
  bool rotated;
  RGB color;
  LabelBox box;
};

TextItem place(const Font& f, const std::string& text, int x, int y, bool rotated, RGB color) {
  return {&f, text, x, y, rotated, color, f.text_box(text, x, y, rotated)};
}

void shift(TextItem& t, int dx, int dy) {
  t.x += dx, t.y += dy;
  t.box.x0 += dx, t.box.x1 += dx, t.box.y0 += dy, t.box.y1 += dy;
}
void shift(LabelBox& b, int dx, int dy) { b.x0 += dx, b.x1 += dx, b.y0 += dy, b.y1 += dy; }

void draw_item(Image& img, const TextItem& t) {
  if (t.rotated)
    t.font->draw_rotated(img, t.x, t.y, t.text, t.color);
  else
    t.font->draw(img, t.x, t.y, t.text, t.color);
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  if (s.empty()) return lines;
  size_t start = 0;
  while (true) {
    const size_t nl = s.find('\n', start);
    lines.push_back(s.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

// Baseline offset that visually centres a line of text on a given y (x-height/headline centre).
int centre_baseline(const Font& f, int cy) { return cy + static_cast<int>(std::lround(0.27 * f.pixel_height())); }

// Title block: each line centred on cx, stacked from `top` downwards without overlap.
// Returns the bottom y of the block.
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

// "Nice" tick values in [lo, hi]: multiples of 1, 2, (2.5,) or 5 times a power of ten, at most max_ticks.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks, double* step_out = nullptr,
                               bool allow_2_5 = false) {
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

// Number of decimals needed to print multiples of `step` exactly.
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
  if (a.empty() && a.x0 == 0 && a.x1 == 0 && a.y0 == 0 && a.y1 == 0) return b;
  return {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1), std::max(a.y1, b.y1)};
}

// ---------------------------------------------------------------------------------------------
// Heatmap layout
// ---------------------------------------------------------------------------------------------

struct HeatmapPlan {
  HeatmapLayout layout;
  std::vector<TextItem> row_items, col_items, other_items;
  std::vector<std::pair<double, int>> ticks;  // value, y pixel on the colour bar
  int value_decimals = 2;
  std::shared_ptr<Font> title_font, label_font, tick_font, value_font;
};

HeatmapPlan plan_heatmap(const HeatmapSpec& spec) {
  const int rows = static_cast<int>(spec.row_labels.size());
  const int cols = static_cast<int>(spec.col_labels.size());
  if (rows == 0 || cols == 0) throw std::invalid_argument("heatmap: needs at least one row and one column label");
  if (spec.values.size() != static_cast<size_t>(rows) * cols)
    throw std::invalid_argument("heatmap: values.size() (" + std::to_string(spec.values.size()) +
                                ") != rows*cols (" + std::to_string(rows) + "*" + std::to_string(cols) + ")");
  if (!spec.masked.empty() && spec.masked.size() != spec.values.size())
    throw std::invalid_argument("heatmap: masked must be empty or have rows*cols entries");
  if (!(spec.vmax > spec.vmin) || !std::isfinite(spec.vmin) || !std::isfinite(spec.vmax))
    throw std::invalid_argument("heatmap: need finite vmin < vmax");

  HeatmapPlan P;
  if (!(spec.label_px >= 6 && spec.label_px <= 200)) throw std::invalid_argument("heatmap: label_px must be in [6, 200]");
  P.title_font = std::make_shared<Font>(spec.label_px * 1.2f);
  P.label_font = std::make_shared<Font>(spec.label_px);
  P.tick_font = std::make_shared<Font>(std::max(9.0f, spec.label_px * 0.85f));
  const Font& lf = *P.label_font;
  const Font& tf = *P.tick_font;
  HeatmapLayout& L = P.layout;
  L.rows = rows, L.cols = cols;

  // Measure labels at the origin.
  int max_row_w = 0, max_row_h = 0, max_col_w = 0, max_col_h = 0;
  std::vector<LabelBox> row0, col0;
  for (const auto& s : spec.row_labels) {
    row0.push_back(lf.text_box(s, 0, 0));
    max_row_w = std::max(max_row_w, row0.back().width());
    max_row_h = std::max(max_row_h, row0.back().height());
  }
  for (const auto& s : spec.col_labels) {
    col0.push_back(lf.text_box(s, 0, 0));
    max_col_w = std::max(max_col_w, col0.back().width());
    max_col_h = std::max(max_col_h, col0.back().height());
  }
  const int label_gap = 4;  // minimum free pixels between neighbouring labels
  int cell = std::max({spec.cell_px, 24, max_row_h + label_gap, max_col_h + label_gap});
  L.rotated_col_labels = max_col_w + label_gap + 2 > cell;
  L.cell = cell;

  // Title.
  const int pad = 12;
  int y = pad;
  if (!spec.title.empty()) y = layout_title(*P.title_font, spec.title, 0, y, P.other_items) + 8;

  // Column labels (keys) above the grid.
  const int band_h = L.rotated_col_labels ? max_col_w : max_col_h;
  L.grid_y = y + band_h + 6;
  L.grid_x = pad + max_row_w + 8;
  const int gx = L.grid_x, gy = L.grid_y;
  for (int c = 0; c < cols; ++c) {
    const int left = gx + c * cell, cx = left + cell / 2;
    const LabelBox& b0 = col0[c];
    TextItem t;
    if (!L.rotated_col_labels) {
      // Horizontal, centred on the column, sharing one baseline just above the grid.
      int max_below = 0;
      for (const auto& b : col0) max_below = std::max(max_below, b.y1);
      int x = cx - (b0.x0 + b0.x1) / 2;
      x = std::clamp(x, left + 1 - b0.x0, left + cell - 1 - b0.x1);
      t = place(lf, spec.col_labels[c], x, gy - 6 - max_below, false, kText);
    } else {
      // Rotated 90°, reading upwards from just above the grid; the ink is centred on the column.
      // In the rotated frame the glyph's vertical extent [b0.y0, b0.y1) maps to x + [y0, y1).
      int x = cx - (b0.y0 + b0.y1) / 2;
      x = std::clamp(x, left + 1 - b0.y0, left + cell - 1 - b0.y1);
      const int pen_y = gy - 6 - 1 + b0.x0;  // box bottom (exclusive) lands at gy - 6
      t = place(lf, spec.col_labels[c], x, pen_y, true, kText);
    }
    P.col_items.push_back(t);
  }

  // Row labels (queries) left of the grid, right-aligned, centred on the row.
  for (int r = 0; r < rows; ++r) {
    const int top = gy + r * cell, cy = top + cell / 2;
    const LabelBox& b0 = row0[r];
    const int x = gx - 8 - b0.x1;
    int base = centre_baseline(lf, cy);
    if (b0.height() > 0) base = std::clamp(base, top + 1 - b0.y0, top + cell - 1 - b0.y1);
    P.row_items.push_back(place(lf, spec.row_labels[r], x, base, false, kText));
  }

  // Cell values.
  const double span = spec.vmax - spec.vmin;
  P.value_decimals = span <= 2 ? 2 : span <= 20 ? 1 : 0;
  if (spec.show_values && cell >= 40) {
    const float vpx = static_cast<float>(std::clamp(cell * 0.3, 10.0, 14.0));
    P.value_font = std::make_shared<Font>(vpx);
    int widest = 0;
    for (size_t i = 0; i < spec.values.size(); ++i)
      if (std::isfinite(spec.values[i]))
        widest = std::max(widest, P.value_font->text_width(format_fixed(spec.values[i], P.value_decimals)));
    L.values_shown = widest + 4 <= cell;
  }

  // Colour bar with ticks and label, right of the grid.
  const int grid_h = rows * cell, grid_w = cols * cell;
  const int cb_x = gx + grid_w + 18, cb_w = 16, cb_h = std::max(grid_h, 120);
  L.colorbar = {cb_x, gy, cb_x + cb_w, gy + cb_h};
  const int max_ticks = std::clamp(cb_h / 26, 2, 6);
  double step = 1;
  const auto tick_values = nice_ticks(spec.vmin, spec.vmax, max_ticks, &step, true);
  const int tdec = decimals_for(step);
  int tick_w = 0;
  for (double v : tick_values) {
    const int ty = gy + static_cast<int>(std::lround((spec.vmax - v) / span * (cb_h - 1)));
    P.ticks.push_back({v, ty});
    TextItem t = place(tf, format_fixed(v, tdec), 0, 0, false, kText);
    const int x = cb_x + cb_w + 7 - t.box.x0;
    t = place(tf, t.text, x, centre_baseline(tf, ty), false, kText);
    tick_w = std::max(tick_w, t.box.x1 - (cb_x + cb_w + 7));
    P.other_items.push_back(t);
  }
  if (!spec.colorbar_label.empty()) {
    const LabelBox b0 = lf.text_box(spec.colorbar_label, 0, 0);
    // Rotated: horizontal extent is the glyph height; vertical extent is the text width.
    const int left = cb_x + cb_w + 7 + tick_w + 10;
    const int x = left - b0.y0;
    const int pen_y = gy + cb_h / 2 + b0.width() / 2 + b0.x0;
    P.other_items.push_back(place(lf, spec.colorbar_label, x, pen_y, true, kText));
  }

  // Bounding box of everything; centre the title over the content; shift to leave `pad` all around.
  LabelBox content = {gx, gy, gx + grid_w, gy + grid_h};
  content = union_box(content, L.colorbar);
  for (const auto& t : P.row_items) if (!t.box.empty()) content = union_box(content, t.box);
  for (const auto& t : P.col_items) if (!t.box.empty()) content = union_box(content, t.box);
  const size_t n_title = split_lines(spec.title).size();
  for (size_t i = n_title; i < P.other_items.size(); ++i)
    if (!P.other_items[i].box.empty()) content = union_box(content, P.other_items[i].box);
  const int content_cx = (content.x0 + content.x1) / 2;
  for (size_t i = 0; i < n_title; ++i) shift(P.other_items[i], content_cx, 0);
  LabelBox all = content;
  for (size_t i = 0; i < n_title; ++i) if (!P.other_items[i].box.empty()) all = union_box(all, P.other_items[i].box);
  const int dx = pad - all.x0, dy = std::max(0, pad - all.y0);
  for (auto& t : P.row_items) shift(t, dx, dy);
  for (auto& t : P.col_items) shift(t, dx, dy);
  for (auto& t : P.other_items) shift(t, dx, dy);
  for (auto& t : P.ticks) t.second += dy;
  shift(L.colorbar, dx, dy);
  L.grid_x += dx, L.grid_y += dy;
  L.width = all.x1 + dx + pad;
  L.height = all.y1 + dy + pad;
  for (const auto& t : P.row_items) L.row_labels.push_back(t.box);
  for (const auto& t : P.col_items) L.col_labels.push_back(t.box);
  for (const auto& t : P.other_items) L.other_text.push_back(t.box);
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
      const bool masked = (!spec.masked.empty() && spec.masked[i]) || !std::isfinite(v);
      if (masked) {
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
  const int cb_h = cb.height();
  for (int y = cb.y0; y < cb.y1; ++y) {
    const RGB col = viridis(1.0 - static_cast<double>(y - cb.y0) / std::max(1, cb_h - 1));
    img.fill_rect(cb.x0, y, cb.x1, y + 1, col);
  }
  img.stroke_rect(cb.x0 - 1, cb.y0 - 1, cb.x1 + 1, cb.y1 + 1, kAxis);
  for (const auto& [v, ty] : P.ticks) {
    (void)v;
    img.fill_rect(cb.x1, ty, cb.x1 + 5, ty + 1, kAxis);
  }

  for (const auto& t : P.row_items) draw_item(img, t);
  for (const auto& t : P.col_items) draw_item(img, t);
  for (const auto& t : P.other_items) draw_item(img, t);
  return img;
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

// ---------------------------------------------------------------------------------------------
// Line plot
// ---------------------------------------------------------------------------------------------

namespace {

struct Axis {
  bool log = false;
  double lo = 0, hi = 1;  // in transformed units (log10 for log axes)
  std::vector<double> major;  // transformed units
  std::vector<std::string> labels;
  std::vector<double> minor;  // transformed units

  double tf(double v) const { return log ? (v > 0 ? std::log10(v) : std::numeric_limits<double>::quiet_NaN()) : v; }
};

std::string format_log_tick(double v) {
  const double k = std::log10(v);
  char buf[32];
  if (std::fabs(k - std::round(k)) < 1e-9) {
    const int e = static_cast<int>(std::lround(k));
    if (e >= -4 && e <= 6)
      std::snprintf(buf, sizeof buf, "%.*f", std::max(0, -e), v);
    else
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
    for (double v : nice_ticks(lo, hi, max_ticks, &step)) a.major.push_back(v);
    const int d = decimals_for(step);
    for (double v : a.major) a.labels.push_back(format_fixed(v, d));
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

}  // namespace

Image render_line_plot(const LinePlotSpec& spec) {
  const int W = std::max(spec.width, 200), H = std::max(spec.height, 150);
  Image img(W, H);
  const Font title_f(17.0f), label_f(14.0f), tick_f(12.0f);
  const int pad = 12;

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
  const int py1 = H - pad - xlabel_h - tick_h - 8;

  // Legend (right of the plot area).
  int legend_w = 0;
  std::vector<const Series*> named;
  for (const auto& s : spec.series)
    if (!s.name.empty()) named.push_back(&s);
  for (const auto* s : named) legend_w = std::max(legend_w, label_f.text_width(s->name));
  if (!named.empty()) legend_w += 28 + 8 + 16;

  const int ymax_ticks = std::clamp((py1 - py0) / 45, 2, 10);
  const Axis ay = make_axis(spec.log_y, ys, true, ymax_ticks);
  int ytick_w = 0;
  for (const auto& s : ay.labels) ytick_w = std::max(ytick_w, tick_f.text_width(s));
  const int ylabel_w = spec.y_label.empty() ? 0 : static_cast<int>(std::lround(label_f.pixel_height() * 1.5));
  const int px0 = pad + ylabel_w + ytick_w + 10;
  const int px1 = W - pad - (legend_w ? legend_w + 12 : 8);
  if (px1 - px0 < 40 || py1 - py0 < 40) throw std::invalid_argument("line plot: image too small for its labels");
  const int xmax_ticks = std::clamp((px1 - px0) / 70, 2, 12);
  const Axis ax = make_axis(spec.log_x, xs, false, xmax_ticks);

  const auto map_x = [&](double t) { return px0 + (t - ax.lo) / (ax.hi - ax.lo) * (px1 - px0); };
  const auto map_y = [&](double t) { return py1 - (t - ay.lo) / (ay.hi - ay.lo) * (py1 - py0); };

  // Grid lines and ticks.
  for (double t : ax.major) {
    const int x = static_cast<int>(std::lround(map_x(t)));
    img.fill_rect(x, py0, x + 1, py1, kGridLine);
  }
  for (double t : ay.major) {
    const int y = static_cast<int>(std::lround(map_y(t)));
    img.fill_rect(px0, y, px1, y + 1, kGridLine);
  }
  img.stroke_rect(px0, py0, px1 + 1, py1 + 1, kAxis);
  for (double t : ax.minor) {
    const int x = static_cast<int>(std::lround(map_x(t)));
    img.fill_rect(x, py1 + 1, x + 1, py1 + 4, kAxis);
  }
  for (double t : ay.minor) {
    const int y = static_cast<int>(std::lround(map_y(t)));
    img.fill_rect(px0 - 3, y, px0, y + 1, kAxis);
  }
  int last_x1 = std::numeric_limits<int>::min();
  for (size_t i = 0; i < ax.major.size(); ++i) {
    const int x = static_cast<int>(std::lround(map_x(ax.major[i])));
    img.fill_rect(x, py1 + 1, x + 1, py1 + 6, kAxis);
    const LabelBox b0 = tick_f.text_box(ax.labels[i], 0, 0);
    int lx = x - (b0.x0 + b0.x1) / 2;
    lx = std::clamp(lx, -b0.x0 + 1, W - 1 - b0.x1);
    TextItem t = place(tick_f, ax.labels[i], lx, py1 + 8 + static_cast<int>(tick_f.pixel_height() * 0.8), false, kText);
    if (t.box.x0 > last_x1 + 3) {  // skip labels that would collide
      items.push_back(t);
      last_x1 = t.box.x1;
    }
  }
  for (size_t i = 0; i < ay.major.size(); ++i) {
    const int y = static_cast<int>(std::lround(map_y(ay.major[i])));
    img.fill_rect(px0 - 6, y, px0, y + 1, kAxis);
    const LabelBox b0 = tick_f.text_box(ay.labels[i], 0, 0);
    items.push_back(place(tick_f, ay.labels[i], px0 - 8 - b0.x1, centre_baseline(tick_f, y), false, kText));
  }

  // Axis labels.
  if (!spec.x_label.empty()) {
    const LabelBox b0 = label_f.text_box(spec.x_label, 0, 0);
    items.push_back(place(label_f, spec.x_label, (px0 + px1) / 2 - (b0.x0 + b0.x1) / 2,
                          H - pad - std::max(0, b0.y1), false, kText));
  }
  if (!spec.y_label.empty()) {
    const LabelBox b0 = label_f.text_box(spec.y_label, 0, 0);
    const int x = pad - b0.y0;
    const int pen_y = (py0 + py1) / 2 + b0.width() / 2 + b0.x0;
    items.push_back(place(label_f, spec.y_label, x, pen_y, true, kText));
  }

  // Series.
  const LabelBox clip{px0 + 1, py0 + 1, px1, py1};
  for (const auto& s : spec.series) {
    const size_t n = std::min(s.x.size(), s.y.size());
    bool have_prev = false;
    double prev_x = 0, prev_y = 0, phase = 0;
    const double on = 7, off = 5;
    for (size_t i = 0; i < n; ++i) {
      const double tx = ax.tf(s.x[i]), ty = ay.tf(s.y[i]);
      if (!std::isfinite(tx) || !std::isfinite(ty)) {
        have_prev = false;
        continue;
      }
      const double X = map_x(tx), Y = map_y(ty);
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

  // Legend box.
  if (!named.empty()) {
    const int lx0 = px1 + 12, ly0 = py0;
    const int row_h = static_cast<int>(std::lround(label_f.pixel_height() * 1.6));
    const int lx1 = lx0 + legend_w, ly1 = ly0 + 8 + row_h * static_cast<int>(named.size());
    img.stroke_rect(lx0, ly0, lx1, ly1, {190, 190, 190});
    for (size_t i = 0; i < named.size(); ++i) {
      const int cy = ly0 + 4 + row_h * static_cast<int>(i) + row_h / 2;
      const Series& s = *named[i];
      if (s.dashed) {
        img.draw_line(lx0 + 8, cy, lx0 + 16, cy, s.color, 2.0);
        img.draw_line(lx0 + 22, cy, lx0 + 30, cy, s.color, 2.0);
      } else {
        img.draw_line(lx0 + 8, cy, lx0 + 30, cy, s.color, 2.0);
      }
      if (s.markers) img.fill_circle(lx0 + 19, cy, 3.0, s.color);
      items.push_back(place(label_f, s.name, lx0 + 36, centre_baseline(label_f, cy), false, kText));
    }
  }

  for (const auto& t : items) draw_item(img, t);
  return img;
}

// ---------------------------------------------------------------------------------------------
// PNG output
// ---------------------------------------------------------------------------------------------

void write_png(const Image& img, const std::string& path) {
  if (img.width <= 0 || img.height <= 0) throw std::runtime_error("write_png: empty image for " + path);
  if (img.rgb.size() != static_cast<size_t>(img.width) * img.height * 3)
    throw std::runtime_error("write_png: pixel buffer size does not match width*height*3 for " + path);
  const std::string tmp = path + ".tmp";
  if (!stbi_write_png(tmp.c_str(), img.width, img.height, 3, img.rgb.data(), img.width * 3)) {
    std::remove(tmp.c_str());
    throw std::runtime_error("write_png: cannot write " + tmp);
  }
  // on disk before the rename makes it visible, and the rename itself made durable
  if (const int fd = ::open(tmp.c_str(), O_RDONLY); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error("write_png: cannot rename " + tmp + " to " + path + ": " + err);
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace qkv::render
