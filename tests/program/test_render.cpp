// Tests for tools/render (PNG heatmaps and line plots). Needs fonts-lohit-deva, libharfbuzz-dev, libstb-dev.
#include <doctest/doctest.h>
#include <stb/stb_image.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "tools/render/render.h"

namespace fs = std::filesystem;
using namespace qkv::render;

namespace {

// A fresh scratch directory, removed on destruction.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("qkv_test_render_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Sets an environment variable for the lifetime of the object, restoring the previous value.
struct EnvGuard {
  std::string name;
  std::optional<std::string> old;
  EnvGuard(const std::string& n, const std::string& value) : name(n) {
    if (const char* v = std::getenv(n.c_str())) old = v;
    ::setenv(n.c_str(), value.c_str(), 1);
  }
  ~EnvGuard() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

struct Decoded {
  int w = 0, h = 0, channels = 0;
  std::vector<unsigned char> px;
  RGB at(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * w + x) * 3;
    return {px[i], px[i + 1], px[i + 2]};
  }
};

Decoded decode_png(const fs::path& p) {
  Decoded d;
  unsigned char* data = stbi_load(p.c_str(), &d.w, &d.h, &d.channels, 3);
  REQUIRE_MESSAGE(data != nullptr, "stbi_load failed for " << p);
  d.px.assign(data, data + static_cast<size_t>(d.w) * d.h * 3);
  stbi_image_free(data);
  return d;
}

int colour_distance(RGB a, RGB b) { return std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]); }

// Smallest L1 distance from c to any colour of the viridis map.
int distance_to_viridis(RGB c) {
  int best = 1 << 30;
  for (int k = 0; k <= 1000; ++k) best = std::min(best, colour_distance(c, viridis(k / 1000.0)));
  return best;
}

std::string box_str(const LabelBox& b) {
  return "[" + std::to_string(b.x0) + "," + std::to_string(b.y0) + ")-(" + std::to_string(b.x1) + "," +
         std::to_string(b.y1) + ")";
}

// A causal-style attention spec: row r attends to columns <= r + offset.
HeatmapSpec causal_spec(std::vector<std::string> rows, std::vector<std::string> cols, int offset = 2) {
  HeatmapSpec s;
  s.title = "test heatmap\nसाथ में हिंदी";
  s.row_labels = std::move(rows);
  s.col_labels = std::move(cols);
  const size_t R = s.row_labels.size(), C = s.col_labels.size();
  s.values.resize(R * C);
  s.masked.resize(R * C);
  for (size_t r = 0; r < R; ++r)
    for (size_t c = 0; c < C; ++c) {
      s.masked[r * C + c] = static_cast<int>(c) > static_cast<int>(r) + offset;
      s.values[r * C + c] = static_cast<double>((r * 7 + c * 3) % 11) / 10.0;
    }
  return s;
}

const std::vector<std::string> kMixedRows = {"she", "ate", "<sep>", "उसने", "केक", "टुकड़ा"};
const std::vector<std::string> kMixedCols = {"she", "ate", "<sep>", "उसने", "केक", "टुकड़ा", "खाया", "<eos>"};

// Checks label boxes: inside the image, pairwise disjoint, off the grid and the colour bar, and each row
// (column) label lies within its own row (column) band.
void check_label_layout(const HeatmapSpec& spec) {
  const HeatmapLayout L = heatmap_layout(spec);
  const auto boxes = heatmap_label_boxes(spec);
  REQUIRE(boxes.size() == spec.row_labels.size() + spec.col_labels.size());
  const LabelBox image{0, 0, L.width, L.height};
  const LabelBox grid = L.grid();
  for (size_t i = 0; i < boxes.size(); ++i) {
    INFO("label " << i << " box " << box_str(boxes[i]));
    CHECK_FALSE(boxes[i].empty());
    CHECK(image.contains(boxes[i]));
    CHECK_FALSE(boxes[i].overlaps(grid));
    CHECK_FALSE(boxes[i].overlaps(L.colorbar));
    for (const auto& other : L.other_text) CHECK_FALSE(boxes[i].overlaps(other));
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      INFO("other label " << j << " box " << box_str(boxes[j]));
      CHECK_FALSE(boxes[i].overlaps(boxes[j]));
    }
  }
  for (int r = 0; r < L.rows; ++r) {
    const LabelBox& b = boxes[r];
    INFO("row " << r << " box " << box_str(b));
    CHECK(b.y0 >= grid.y0 + r * L.cell);
    CHECK(b.y1 <= grid.y0 + (r + 1) * L.cell);
    CHECK(b.x1 <= grid.x0);
  }
  for (int c = 0; c < L.cols; ++c) {
    const LabelBox& b = boxes[L.rows + c];
    INFO("col " << c << " box " << box_str(b));
    CHECK(b.x0 >= grid.x0 + c * L.cell);
    CHECK(b.x1 <= grid.x0 + (c + 1) * L.cell);
    CHECK(b.y1 <= grid.y0);
  }
}

}  // namespace

TEST_SUITE("render") {

TEST_CASE("viridis matches matplotlib's endpoints and is clamped") {
  CHECK(viridis(0.0) == RGB{0x44, 0x01, 0x54});
  CHECK(viridis(1.0) == RGB{0xfd, 0xe7, 0x25});
  CHECK(viridis(-3.0) == viridis(0.0));
  CHECK(viridis(7.0) == viridis(1.0));
  CHECK(viridis(std::nan("")) == viridis(0.0));
  // matplotlib: viridis(0.5) is #21918c; allow one step of rounding.
  CHECK(colour_distance(viridis(0.5), RGB{0x21, 0x91, 0x8c}) <= 2);
  // Perceptually ordered: luminance increases monotonically.
  double prev = -1;
  for (int k = 0; k <= 100; ++k) {
    const RGB c = viridis(k / 100.0);
    const double lum = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    CHECK(lum >= prev);
    prev = lum;
  }
}

TEST_CASE("heatmap PNG decodes with the expected size and exact cell colours") {
  TempDir tmp;
  HeatmapSpec spec = causal_spec(kMixedRows, kMixedCols);
  spec.show_values = false;
  spec.vmin = -0.5;  // exercise the normalisation
  spec.vmax = 1.5;
  const HeatmapLayout L = heatmap_layout(spec);
  const Image img = render_heatmap(spec);
  REQUIRE(img.width == L.width);
  REQUIRE(img.height == L.height);
  const fs::path out = tmp.path / "heatmap.png";
  write_png(img, out.string());
  CHECK_FALSE(fs::exists(out.string() + ".tmp"));

  int w = 0, h = 0, channels = 0;
  REQUIRE(stbi_info(out.c_str(), &w, &h, &channels));
  CHECK(w == L.width);
  CHECK(h == L.height);
  CHECK(channels == 3);
  const Decoded d = decode_png(out);

  const int R = L.rows, C = L.cols;
  int masked_seen = 0;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      const LabelBox cb = L.cell_box(r, c);
      const int cx = (cb.x0 + cb.x1) / 2, cy = (cb.y0 + cb.y1) / 2;
      const size_t i = static_cast<size_t>(r) * C + c;
      INFO("cell " << r << "," << c);
      if (spec.masked[i]) {
        ++masked_seen;
        CHECK(distance_to_viridis(d.at(cx, cy)) > 30);
      } else {
        const RGB expect = viridis((spec.values[i] - spec.vmin) / (spec.vmax - spec.vmin));
        CHECK(d.at(cx, cy) == expect);
      }
    }
  CHECK(masked_seen > 0);
  // A masked cell must not look like a zero-weight cell (dark purple).
  const LabelBox m = L.cell_box(0, C - 1);
  CHECK(colour_distance(d.at((m.x0 + m.x1) / 2, (m.y0 + m.y1) / 2), viridis(0.0)) > 150);
}

TEST_CASE("heatmap cells are at least 24 px and grow for tall labels") {
  HeatmapSpec spec = causal_spec({"a", "b"}, {"c", "d"});
  spec.cell_px = 5;
  CHECK(heatmap_layout(spec).cell >= 24);
  spec.cell_px = 40;
  CHECK(heatmap_layout(spec).cell == 40);
  // Big label fonts: the cells grow so that neighbouring labels still do not touch.
  spec = causal_spec({"टुकड़ा", "कृपा", "Ág"}, {"कृपा", "x"});
  spec.cell_px = 24;
  spec.label_px = 36;
  const HeatmapLayout L = heatmap_layout(spec);
  CHECK(L.cell > 30);
  const auto boxes = heatmap_label_boxes(spec);
  for (int r = 0; r < L.rows; ++r) CHECK(boxes[r].height() > 24);  // the labels really are tall
  check_label_layout(spec);
}

TEST_CASE("heatmap label boxes never overlap and stay inside the image") {
  SUBCASE("mixed English/Hindi tokens, rotated column labels") {
    const HeatmapSpec spec = causal_spec(kMixedRows, kMixedCols);
    CHECK(heatmap_layout(spec).rotated_col_labels);
    check_label_layout(spec);
  }
  SUBCASE("short labels in big cells are horizontal") {
    HeatmapSpec spec = causal_spec({"a", "b", "c"}, {"x", "y", "z"});
    spec.cell_px = 48;
    CHECK_FALSE(heatmap_layout(spec).rotated_col_labels);
    check_label_layout(spec);
  }
  SUBCASE("long labels, Devanagari with marks above and below, many columns") {
    std::vector<std::string> rows = {
        "an_extremely_long_subword_token_label", "कृष्णमूर्ति", "प्रिय", "ठीक", "W", "क्षत्रिय", "ॐ", "x"};
    std::vector<std::string> cols;
    for (int i = 0; i < 20; ++i) cols.push_back(i % 3 == 0 ? "डिब्बे" : i % 3 == 1 ? "internationalisation" : "ई");
    HeatmapSpec spec = causal_spec(rows, cols, 5);
    spec.title = "A very long title line that is much wider than anything else in this figure, on purpose\nदूसरी पंक्ति";
    check_label_layout(spec);
  }
  SUBCASE("single cell, no title, no colour-bar label") {
    HeatmapSpec spec = causal_spec({"कि"}, {"कि"});
    spec.title.clear();
    spec.colorbar_label.clear();
    check_label_layout(spec);
  }
}

TEST_CASE("labels are actually drawn inside their boxes") {
  HeatmapSpec spec = causal_spec(kMixedRows, kMixedCols);
  const auto boxes = heatmap_label_boxes(spec);
  const Image img = render_heatmap(spec);
  for (size_t i = 0; i < boxes.size(); ++i) {
    int dark = 0;
    for (int y = boxes[i].y0; y < boxes[i].y1; ++y)
      for (int x = boxes[i].x0; x < boxes[i].x1; ++x) {
        const RGB c = img.get(x, y);
        dark += c[0] + c[1] + c[2] < 300;
      }
    INFO("label " << i);
    CHECK(dark >= 5);
  }
}

TEST_CASE("cell values are printed when cells are big, leaving cell corners exact") {
  HeatmapSpec spec = causal_spec({"a", "b"}, {"c", "d", "e"});
  spec.masked.clear();
  spec.cell_px = 56;
  const HeatmapLayout L = heatmap_layout(spec);
  REQUIRE(L.values_shown);
  const Image img = render_heatmap(spec);
  for (int r = 0; r < L.rows; ++r)
    for (int c = 0; c < L.cols; ++c) {
      const LabelBox b = L.cell_box(r, c);
      const RGB base = viridis(spec.values[static_cast<size_t>(r) * L.cols + c]);
      CHECK(img.get(b.x0 + 1, b.y0 + 1) == base);
      int other = 0;
      for (int y = b.y0; y < b.y1; ++y)
        for (int x = b.x0; x < b.x1; ++x) other += img.get(x, y) != base;
      CHECK(other > 20);  // text pixels
    }
  spec.show_values = false;
  CHECK_FALSE(heatmap_layout(spec).values_shown);
}

TEST_CASE("bad heatmap specs are rejected") {
  HeatmapSpec spec = causal_spec({"a", "b"}, {"c", "d"});
  spec.values.pop_back();
  CHECK_THROWS_AS(render_heatmap(spec), std::invalid_argument);
  spec = causal_spec({"a", "b"}, {"c", "d"});
  spec.masked.resize(3);
  CHECK_THROWS_AS(render_heatmap(spec), std::invalid_argument);
  spec = causal_spec({"a", "b"}, {"c", "d"});
  spec.vmax = spec.vmin;
  CHECK_THROWS_AS(render_heatmap(spec), std::invalid_argument);
}

TEST_CASE("a missing font gives a clear error naming the Debian package") {
  const std::string bogus = "/nonexistent/qkv/NoSuchFont.ttf";
  {
    EnvGuard env("QKV_FONT", bogus);
    try {
      Font f(14.0f);
      FAIL("Font construction should have thrown");
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      CHECK(msg.find("font not found") != std::string::npos);
      CHECK(msg.find(bogus) != std::string::npos);
      CHECK(msg.find("fonts-lohit-deva") != std::string::npos);
    }
    CHECK_THROWS_AS(render_heatmap(causal_spec({"a"}, {"b"})), std::runtime_error);
  }
  CHECK_THROWS_WITH_AS(Font(14.0f, bogus), doctest::Contains("fonts-lohit-deva"), std::runtime_error);
  // Once the override is gone the default font is found again.
  CHECK_NOTHROW(Font(14.0f));

  TempDir tmp;
  const fs::path junk = tmp.path / "junk.ttf";
  std::ofstream(junk) << "this is not a font";
  CHECK_THROWS_WITH_AS(Font(14.0f, junk.string()), doctest::Contains("not a usable"), std::runtime_error);
}

TEST_CASE("HarfBuzz reorders the Devanagari vowel sign i before its consonant") {
  const Font font(32.0f);
  const uint32_t ka = font.glyph_index(U'\u0915');      // क
  const uint32_t sign_i = font.glyph_index(U'\u093F');  // ि
  REQUIRE(ka != 0);
  REQUIRE(sign_i != 0);

  const auto g = font.shape("कि");  // U+0915 U+093F: naive codepoint order is क, ि
  REQUIRE(g.size() == 2);
  const std::vector<uint32_t> naive = {ka, sign_i};
  const std::vector<uint32_t> shaped = {g[0].glyph, g[1].glyph};
  CHECK(shaped != naive);
  CHECK(g[0].glyph != ka);   // the matra glyph comes first...
  CHECK(g[1].glyph == ka);   // ...followed by the consonant
  CHECK(g[0].x < g[1].x);    // and is placed to its left
  CHECK(g[0].cluster == 0);  // both belong to the one syllable cluster
  CHECK(g[1].cluster == 0);

  // The same holds inside a longer word and after Latin text in the same string (script itemisation).
  const auto w = font.shape("किनारा");
  REQUIRE(w.size() >= 2);
  CHECK(w[1].glyph == ka);
  CHECK(w[0].glyph != ka);
  const auto mixed = font.shape("cake कि");
  REQUIRE(mixed.size() == 7);  // c a k e space ि क
  CHECK(mixed[5].glyph != ka);
  CHECK(mixed[6].glyph == ka);

  // Latin is left in codepoint order.
  const auto ab = font.shape("ab");
  REQUIRE(ab.size() == 2);
  CHECK(ab[0].glyph == font.glyph_index(U'a'));
  CHECK(ab[1].glyph == font.glyph_index(U'b'));
}

TEST_CASE("the ि matra is drawn left of the consonant's stem") {
  // Rasterised check: "कि" has ink further left relative to क's own ink, and is wider.
  const Font font(40.0f);
  const LabelBox ka = font.text_box("क", 100, 100);
  const LabelBox ki = font.text_box("कि", 100, 100);
  CHECK(ki.width() > ka.width());
  Image img(400, 200);
  font.draw(img, 100, 100, "कि", {0, 0, 0});
  // The vowel sign's loop rises above the headline: find ink above क's top within the left part.
  int above = 0;
  for (int y = ki.y0; y < ka.y0; ++y)
    for (int x = ki.x0; x < ki.x0 + ki.width() / 3; ++x) above += img.get(x, y)[0] < 128;
  CHECK(above > 0);
}

TEST_CASE("text metrics are consistent with drawing") {
  const Font font(20.0f);
  Image img(300, 80);
  const LabelBox b = font.text_box("Hello हिंदी", 10, 50);
  font.draw(img, 10, 50, "Hello हिंदी", {0, 0, 0});
  int inside = 0, outside = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      if (img.get(x, y) == RGB{255, 255, 255}) continue;
      (x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1 ? inside : outside)++;
    }
  CHECK(inside > 50);
  CHECK(outside == 0);
  CHECK(font.text_width("Hello हिंदी") == b.width());
  CHECK(font.text_width("ab") < font.text_width("abcd"));

  // Rotated drawing stays inside its (transposed) box too.
  Image rot(100, 300);
  const LabelBox rb = font.text_box("rotated", 50, 250, true);
  font.draw_rotated(rot, 50, 250, "rotated", {0, 0, 0});
  CHECK(rb.width() == font.text_box("rotated", 0, 0).height());
  CHECK(rb.height() == font.text_box("rotated", 0, 0).width());
  outside = 0;
  for (int y = 0; y < rot.height; ++y)
    for (int x = 0; x < rot.width; ++x)
      if (rot.get(x, y) != RGB{255, 255, 255} && !(x >= rb.x0 && x < rb.x1 && y >= rb.y0 && y < rb.y1)) ++outside;
  CHECK(outside == 0);
}

TEST_CASE("write_png is atomic and reports failures") {
  TempDir tmp;
  Image img(4, 3, {10, 20, 30});
  const fs::path out = tmp.path / "a.png";
  write_png(img, out.string());
  REQUIRE(fs::exists(out));
  CHECK_FALSE(fs::exists(out.string() + ".tmp"));
  Decoded d = decode_png(out);
  CHECK(d.w == 4);
  CHECK(d.h == 3);
  CHECK(d.at(3, 2) == RGB{10, 20, 30});

  // Overwriting replaces the file.
  write_png(Image(5, 5, {200, 0, 0}), out.string());
  d = decode_png(out);
  CHECK(d.w == 5);
  CHECK(d.at(0, 0) == RGB{200, 0, 0});

  // Unwritable destination: throws, and leaves nothing behind.
  const fs::path bad = tmp.path / "no_such_dir" / "b.png";
  CHECK_THROWS_AS(write_png(img, bad.string()), std::runtime_error);
  CHECK_FALSE(fs::exists(bad));
  CHECK_FALSE(fs::exists(bad.string() + ".tmp"));

  // Rename onto a directory fails after the temp file was written: the temp file must be cleaned up.
  const fs::path dir_target = tmp.path / "is_a_dir";
  fs::create_directories(dir_target / "child");
  CHECK_THROWS_AS(write_png(img, dir_target.string()), std::runtime_error);
  CHECK_FALSE(fs::exists(dir_target.string() + ".tmp"));

  CHECK_THROWS_AS(write_png(Image(), (tmp.path / "empty.png").string()), std::runtime_error);
  CHECK_FALSE(fs::exists(tmp.path / "empty.png"));
}

TEST_CASE("hstack places images side by side") {
  const Image a(10, 20, {255, 0, 0}), b(5, 30, {0, 0, 255});
  const Image s = hstack({a, b}, 7);
  CHECK(s.width == 10 + 7 + 5);
  CHECK(s.height == 30);
  CHECK(s.get(0, 0) == RGB{255, 0, 0});
  CHECK(s.get(9, 19) == RGB{255, 0, 0});
  CHECK(s.get(12, 5) == RGB{255, 255, 255});  // gap
  CHECK(s.get(9, 25) == RGB{255, 255, 255});  // below the shorter image
  CHECK(s.get(17, 29) == RGB{0, 0, 255});
}

TEST_CASE("line plots: log axes, legend, dashed series") {
  LinePlotSpec spec;
  spec.title = "variance of q·k vs d";
  spec.x_label = "d";
  spec.y_label = "variance";
  spec.log_x = true;
  spec.log_y = true;
  Series raw{"q·k", {}, {}, {214, 39, 40}};
  Series scaled{"q·k / √d", {}, {}, {44, 160, 44}, true};
  for (int d = 1; d <= 1024; d *= 2) {
    raw.x.push_back(d);
    raw.y.push_back(d);
    scaled.x.push_back(d);
    scaled.y.push_back(d);  // same data, only dashed
  }
  raw.x.push_back(0);  // non-positive values are skipped on log axes
  raw.y.push_back(-1);
  SUBCASE("solid vs dashed") {
    const auto count = [](const Image& img, RGB c) {
      int n = 0;
      for (int y = 0; y < img.height; ++y)
        for (int x = 0; x < img.width; ++x) n += img.get(x, y) == c;
      return n;
    };
    spec.series = {raw};
    const Image solid = render_line_plot(spec);
    CHECK(solid.width == spec.width);
    CHECK(solid.height == spec.height);
    spec.series = {scaled};
    const Image dashed = render_line_plot(spec);
    const int n_solid = count(solid, raw.color), n_dashed = count(dashed, scaled.color);
    CHECK(n_solid > 300);
    CHECK(n_dashed > 100);
    CHECK(n_dashed < n_solid * 0.85);
  }
  SUBCASE("y = x on log-log axes is a straight line") {
    spec.series = {raw};
    spec.y_label.clear();
    const Image img = render_line_plot(spec);
    // Collect the mean row of the series colour per column; it must be linear in x.
    std::vector<std::pair<double, double>> pts;
    for (int x = 0; x < img.width; ++x) {
      double sum = 0;
      int n = 0;
      for (int y = 0; y < img.height; ++y)
        if (colour_distance(img.get(x, y), raw.color) < 40) sum += y, ++n;
      if (n) pts.push_back({x, sum / n});
    }
    REQUIRE(pts.size() > 100);
    const auto [xa, ya] = pts[pts.size() / 5];
    const auto [xb, yb] = pts[pts.size() * 4 / 5];
    const auto [xm, ym] = pts[pts.size() / 2];
    const double expect = ya + (yb - ya) * (xm - xa) / (xb - xa);
    CHECK(std::fabs(ym - expect) < 3.0);
    CHECK(yb < ya);  // increasing upwards
  }
}

TEST_CASE("line plots: a long legend, dots on the axis's ends, an empty plot") {
  SUBCASE("the image grows until a long legend fits, and a dot on the axis's end is drawn whole (issue 36)") {
    LinePlotSpec many;
    many.height = 300;
    for (int i = 0; i < 20; ++i) many.series.push_back({"series " + std::to_string(i), {0, 1}, {0, 1}, tab10(i)});
    const Image tall = render_line_plot(many);
    CHECK(tall.height > 300);
    int last_row = -1;  // the legend's last sample line (series 19's colour) lies inside the image
    for (int y = 0; y < tall.height; ++y)
      for (int x = tall.width - 200; x < tall.width; ++x)
        if (tall.get(x, y) == tab10(19)) last_row = y;
    CHECK(last_row > 300 - 40);
    LinePlotSpec dots;  // three single dots at x = 0, 1, 2: the end ones as whole as the middle one
    const RGB colours[] = {{200, 0, 0}, {0, 150, 0}, {0, 0, 200}};
    for (int i = 0; i < 3; ++i) {
      Series one{"", {static_cast<double>(i)}, {1.0}, colours[i]};
      one.markers = true;
      dots.series.push_back(one);
    }
    const Image img = render_line_plot(dots);
    const auto pixels = [&](RGB c) {
      int n = 0;
      for (int y = 0; y < img.height; ++y)
        for (int x = 0; x < img.width; ++x) n += colour_distance(img.get(x, y), c) < 60;
      return n;
    };
    CHECK(pixels(colours[1]) > 10);
    CHECK(std::abs(pixels(colours[2]) - pixels(colours[1])) <= 3);
    CHECK(std::abs(pixels(colours[0]) - pixels(colours[1])) <= 3);
  }
  SUBCASE("empty plot still renders") {
    LinePlotSpec empty;
    const Image img = render_line_plot(empty);
    CHECK(img.width == empty.width);
  }
}

}  // TEST_SUITE
