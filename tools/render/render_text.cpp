// tools/render/render_text.cpp — fonts: finding and loading them, HarfBuzz shaping (with a
// fallback face for missing glyphs) and stb_truetype rasterisation of the shaped run.
#include <hb.h>
#include <stb/stb_truetype.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>

#include "framework/text_util.h"
#include "render.h"

namespace qkv::render {

namespace detail {

struct FontData {
  std::string path;
  std::vector<unsigned char> bytes;
  stbtt_fontinfo info{};
  hb_blob_t* blob = nullptr;
  hb_face_t* face = nullptr;
  hb_font_t* font = nullptr;
  unsigned upem = 1000;

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

const std::vector<std::string> kFontCandidates = {
    "/usr/share/fonts/truetype/lohit-devanagari/Lohit-Devanagari.ttf",  // Debian/Ubuntu
    "/usr/share/fonts/lohit-devanagari/Lohit-Devanagari.ttf",           // Fedora-style layout
    "/usr/local/share/fonts/Lohit-Devanagari.ttf",
};
const std::vector<std::string> kFallbackCandidates = {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"};

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
  fd->blob = hb_blob_create(reinterpret_cast<const char*>(fd->bytes.data()), static_cast<unsigned>(fd->bytes.size()),
                            HB_MEMORY_MODE_READONLY, nullptr, nullptr);
  fd->face = hb_face_create(fd->blob, 0);
  fd->font = hb_font_create(fd->face);  // scale defaults to upem: positions come in font units
  hb_font_make_immutable(fd->font);
  fd->upem = std::max(1u, hb_face_get_upem(fd->face));
  cache.emplace(path, fd);
  return fd;
}

std::string resolve_font_path(const std::string& explicit_path) {
  std::vector<std::string> tried;
  std::string hint = "install the Debian package fonts-lohit-deva";
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
  return gc == HB_UNICODE_GENERAL_CATEGORY_NON_SPACING_MARK || gc == HB_UNICODE_GENERAL_CATEGORY_SPACING_MARK ||
         gc == HB_UNICODE_GENERAL_CATEGORY_ENCLOSING_MARK || cp == 0x200C || cp == 0x200D;
}

}  // namespace

Font::Font(float pixel_height, const std::string& path) : px_(pixel_height) {
  if (!(pixel_height > 0) || pixel_height > 1000) throw std::invalid_argument("Font: bad pixel height");
  primary_ = load_font_data(resolve_font_path(path));
  fallback_ = load_fallback();
  if (fallback_ && fallback_->path == primary_->path) fallback_ = nullptr;
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
      const double advance = pos[k].x_advance * scale;
      out.push_back({info[k].codepoint, info[k].cluster, run.face, pen + pos[k].x_offset * scale,
                     -pos[k].y_offset * scale, advance});
      pen += advance;
    }
    hb_buffer_destroy(buf);
  }
  return out;
}

detail::TextMask Font::rasterize(const std::string& utf8) const {
  struct Placed {
    const FontData* fd;
    int glyph, ix, iy, x0, y0, x1, y1;
    float fx, fy, scale;
  };
  std::vector<Placed> placed;
  double pen_end = 0;
  int bx0 = 0, by0 = 0, bx1 = 0, by1 = 0;  // union box relative to the origin
  for (const auto& g : shape(utf8)) {
    const FontData* fd = g.face == 1 ? fallback_.get() : primary_.get();
    const float scale = px_ / static_cast<float>(fd->upem);
    const int ix = static_cast<int>(std::floor(g.x)), iy = static_cast<int>(std::floor(g.y));
    Placed p{
        fd,   static_cast<int>(g.glyph), ix, iy, 0, 0, 0, 0, static_cast<float>(g.x - ix), static_cast<float>(g.y - iy),
        scale};
    stbtt_GetGlyphBitmapBoxSubpixel(&fd->info, p.glyph, scale, scale, p.fx, p.fy, &p.x0, &p.y0, &p.x1, &p.y1);
    pen_end = std::max(pen_end, g.x + g.advance);
    if (p.x1 > p.x0 && p.y1 > p.y0) {
      const int gx0 = p.ix + p.x0, gy0 = p.iy + p.y0, gx1 = p.ix + p.x1, gy1 = p.iy + p.y1;
      if (placed.empty()) by0 = gy0, by1 = gy1;  // the first inked glyph
      bx0 = std::min(bx0, gx0), by0 = std::min(by0, gy0);
      bx1 = std::max(bx1, gx1), by1 = std::max(by1, gy1);
      placed.push_back(p);
    }
  }
  bx1 = std::max(bx1, static_cast<int>(std::ceil(pen_end)));
  detail::TextMask m;
  m.w = bx1 - bx0;
  m.ox = -bx0;
  if (placed.empty()) return m;  // nothing visible: zero-height box spanning the advance
  m.h = by1 - by0;
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

LabelBox Font::text_box(const std::string& utf8, int x, int y, bool rotated) const {
  const detail::TextMask m = rasterize(utf8);
  if (!rotated) return {x - m.ox, y - m.oy, x - m.ox + m.w, y - m.oy + m.h};
  // mask pixel (mx, my) -> image (x + (my - oy), y - (mx - ox))
  return {x - m.oy, y + m.ox - m.w + 1, x - m.oy + m.h, y + m.ox + 1};
}

namespace {
void blit_mask(Image& img, const detail::TextMask& m, int x, int y, bool rotated, RGB color) {
  for (int my = 0; my < m.h; ++my)
    for (int mx = 0; mx < m.w; ++mx) {
      const uint8_t a = m.a[static_cast<size_t>(my) * m.w + mx];
      if (!a) continue;
      const int dx = rotated ? my - m.oy : mx - m.ox, dy = rotated ? m.ox - mx : my - m.oy;
      img.blend(x + dx, y + dy, color, a / 255.0);
    }
}
}  // namespace

void Font::draw(Image& img, int x, int baseline_y, const std::string& utf8, RGB color) const {
  blit_mask(img, rasterize(utf8), x, baseline_y, false, color);
}

void Font::draw_rotated(Image& img, int x, int baseline_y, const std::string& utf8, RGB color) const {
  blit_mask(img, rasterize(utf8), x, baseline_y, true, color);
}

}  // namespace qkv::render
