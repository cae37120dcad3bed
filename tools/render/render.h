// qkv::render — a small, self-contained PNG rendering library for attention heatmaps and line plots.
//
// Text is shaped with HarfBuzz (so Devanagari vowel signs such as ि are reordered and positioned
// correctly) and its glyphs rasterised with stb_truetype; PNG output uses stb_image_write (this
// header needs neither: callers link with `pkg-config --libs harfbuzz stb`).
//
// Font: Lohit Devanagari (Debian package fonts-lohit-deva), which also has Latin glyphs. The path
// can be forced with the environment variable QKV_FONT. Characters it lacks (e.g. '→', '▁', Greek)
// fall back to DejaVu Sans when that font is installed (fonts-dejavu-core, optional).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace qkv::render {

using RGB = std::array<uint8_t, 3>;

// An axis-aligned pixel rectangle, half-open: columns [x0, x1), rows [y0, y1).
struct LabelBox {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int width() const { return x1 - x0; }
  int height() const { return y1 - y0; }
  bool empty() const { return x1 <= x0 || y1 <= y0; }
  bool overlaps(const LabelBox& o) const {
    return !empty() && !o.empty() && x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1;
  }
  bool contains(const LabelBox& o) const { return o.x0 >= x0 && o.y0 >= y0 && o.x1 <= x1 && o.y1 <= y1; }
};

// An 8-bit RGB raster, row-major, 3 bytes per pixel, origin at the top left.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;

  Image() = default;
  Image(int w, int h, RGB background = {255, 255, 255});  // throws std::invalid_argument if w/h < 0

  bool contains(int x, int y) const { return x >= 0 && y >= 0 && x < width && y < height; }
  RGB get(int x, int y) const;                              // throws std::out_of_range outside the image
  void set(int x, int y, RGB c);                            // silently clipped
  void blend(int x, int y, RGB c, double alpha);            // alpha in [0,1], clipped
  void fill_rect(int x0, int y0, int x1, int y1, RGB c);    // half-open, clipped
  void stroke_rect(int x0, int y0, int x1, int y1, RGB c);  // 1 px outline on the rect's edge pixels
  // Anti-aliased line of the given width with round caps. If clip is given, only pixels inside it change.
  void draw_line(double x0, double y0, double x1, double y1, RGB c, double line_width = 1.0,
                 const LabelBox* clip = nullptr);
  void fill_circle(double cx, double cy, double r, RGB c, const LabelBox* clip = nullptr);
  void paste(const Image& src, int x, int y);  // copies src with its top-left at (x, y), clipped
};

namespace detail {
struct FontData;
struct TextMask;
}  // namespace detail

// One shaped glyph: which font face (0 = primary, 1 = fallback), glyph id in that face, HarfBuzz
// cluster (byte offset into the UTF-8 input), and its pen position/advance in pixels (y grows down).
struct ShapedGlyph {
  uint32_t glyph = 0, cluster = 0;
  int face = 0;
  double x = 0, y = 0, advance = 0;
};

class Font {
 public:
  // pixel_height is the em size in pixels (like a CSS font-size). The font file is read once per
  // process and shared by all Font objects. Path resolution: `path` if non-empty, else $QKV_FONT if
  // set, else a short list of standard locations. Throws std::runtime_error
  // ("font not found: tried ... (install the Debian package fonts-lohit-deva)") if none exists.
  explicit Font(float pixel_height, const std::string& path = "");

  float pixel_height() const { return px_; }

  uint32_t glyph_index(char32_t codepoint) const;                 // naive cmap lookup in the primary face
  std::vector<ShapedGlyph> shape(const std::string& utf8) const;  // HarfBuzz-shaped glyph run

  // Horizontal extent (ink and advance) of the text in pixels.
  int text_width(const std::string& utf8) const;
  // The exact box of pixels `draw`/`draw_rotated` would touch for this origin.
  LabelBox text_box(const std::string& utf8, int x, int baseline_y, bool rotated = false) const;

  void draw(Image& img, int x, int baseline_y, const std::string& utf8, RGB color) const;
  // Rotated 90° counter-clockwise (reads bottom to top); (x, baseline_y) is the pen origin and the
  // text runs upwards from it, with the glyph tops pointing to the left.
  void draw_rotated(Image& img, int x, int baseline_y, const std::string& utf8, RGB color) const;

 private:
  detail::TextMask rasterize(const std::string& utf8) const;
  std::shared_ptr<const detail::FontData> primary_, fallback_;
  float px_;
};

// matplotlib's viridis colormap; t is clamped to [0, 1] (NaN maps to 0).
RGB viridis(double t);
// matplotlib's "tab10" qualitative colours, cycled.
RGB tab10(int i);

struct HeatmapSpec {
  std::string title;                                // may contain several lines separated by '\n'
  std::vector<std::string> row_labels, col_labels;  // rows = queries (left), cols = keys (top)
  std::vector<double> values;                       // rows*cols, row-major
  std::vector<uint8_t> masked;                      // rows*cols, 1 = masked (light grey, hatched); empty = none
  double vmin = 0, vmax = 1;
  int cell_px = 32;  // at least 24 is enforced; grows if labels need more room
  std::string colorbar_label = "attention weight";
  float label_px = 14;      // token label font size (em, px); title and tick fonts scale with it
  bool show_values = true;  // print values inside cells when they are big enough (>= 40 px)
};

// Where everything of a heatmap goes (all boxes in image pixels).
struct HeatmapLayout {
  int width = 0, height = 0;
  int rows = 0, cols = 0, cell = 0;
  int grid_x = 0, grid_y = 0;  // top-left of cell (0, 0)
  bool rotated_col_labels = false, values_shown = false;
  std::vector<LabelBox> row_labels, col_labels;
  std::vector<LabelBox> other_text;  // title lines, colour-bar tick numbers, colour-bar label
  LabelBox colorbar;
  LabelBox grid() const { return {grid_x, grid_y, grid_x + cols * cell, grid_y + rows * cell}; }
  LabelBox cell_box(int r, int c) const {
    return {grid_x + c * cell, grid_y + r * cell, grid_x + (c + 1) * cell, grid_y + (r + 1) * cell};
  }
};

HeatmapLayout heatmap_layout(const HeatmapSpec&);               // throws std::invalid_argument on bad specs
std::vector<LabelBox> heatmap_label_boxes(const HeatmapSpec&);  // row label boxes, then column label boxes
Image render_heatmap(const HeatmapSpec&);

// Side by side, top-aligned, on a white background.
Image hstack(const std::vector<Image>& images, int gap_px);

struct Series {
  std::string name;
  std::vector<double> x, y;
  RGB color = {31, 119, 180};
  bool dashed = false, markers = false;  // markers: a dot at each point
};

struct LinePlotSpec {
  std::string title, x_label, y_label;  // title may contain '\n'
  std::vector<Series> series;
  bool log_x = false, log_y = false;  // non-positive values are skipped on a log axis
  bool integer_x = false;             // x counts something (layers, blocks): ticks only at whole numbers
  int width = 800, height = 500;      // the height grows when the legend needs more room
};

Image render_line_plot(const LinePlotSpec&);

// Atomic: writes path + ".tmp" then renames it over path. Throws std::runtime_error on failure and
// leaves neither a partial file nor the temporary behind.
void write_png(const Image& img, const std::string& path);

}  // namespace qkv::render
