// train/experiments/attend/attend.cpp — `qkv attend`: attention maps as PNG, text, CSV or JSON, and the
// knockout of one key from one query; the picture of one map, as attend draws it and the demo shows it.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "train/experiments/attend/attend.h"
#include "train/experiments/common/sentences.h"
#include "framework/file_util.h"
#include "framework/text_util.h"
#include "models/memory_budget.h"
#include "models/translator_io.h"
#include "tools/render/render.h"

namespace qkv::app {

namespace fs = std::filesystem;

std::string layer_name(const models::AttentionTrace& trace) {
  return fmt::format("layer {} of {}", trace.layer + 1, trace.layers);
}

render::HeatmapSpec attention_heatmap(const models::AttentionTrace& trace, const std::string& mode,
                                      const std::string& checkpoint) {
  render::HeatmapSpec spec;
  spec.title = fmt::format("{}\n-> {}\n{} attention · {} · {}", join(trace.english, " "), join(trace.hindi, " "), mode,
                           layer_name(trace), checkpoint);
  spec.row_labels = trace.labels;
  spec.col_labels = trace.labels;
  spec.values = trace.weights;
  spec.masked = trace.masked;
  spec.vmin = 0;
  spec.vmax = 1;
  spec.colorbar_label = "attention weight (rows: queries, columns: keys)";
  return spec;
}

// Prints the weights as a terminal heatmap: colour blocks on a terminal, numbers otherwise.
static std::string text_heatmap(const models::AttentionTrace& t, bool colour) {
  std::string out;
  const size_t n = t.labels.size();
  // Pad labels by their displayed width (code points), not bytes, so Devanagari lines up too.
  auto columns = [](const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](unsigned char c) { return (c & 0xC0) != 0x80; }));
  };
  size_t width = 5;
  for (const auto& l : t.labels) width = std::max(width, columns(l));
  out += fmt::format("{:>{}}", "", width + 3);
  for (size_t j = 0; j < n; ++j) out += fmt::format(" {:>5}", std::to_string(j));
  out += "\n";
  for (size_t i = 0; i < n; ++i) {
    out += fmt::format("{:>2} {}{}", i, t.labels[i], std::string(width - columns(t.labels[i]), ' '));
    for (size_t j = 0; j < n; ++j) {
      const double w = t.weights[i * n + j];
      if (t.masked[i * n + j]) {
        out += fmt::format(" {:>5}", colour ? "  ·  " : "-");
      } else if (colour) {
        const render::RGB c = render::viridis(w);
        out += fmt::format(" \033[48;2;{};{};{}m{}{:>4.2f}\033[0m", c[0], c[1], c[2],
                           w > 0.55 ? "\033[30m" : "\033[97m", w);
      } else {
        out += fmt::format(" {:>5.3f}", w);
      }
    }
    out += "\n";
  }
  out += "rows are queries, columns are keys (numbered as the rows); '-' marks a masked cell; rows sum to 1\n";
  return out;
}

static std::string trace_csv(const models::AttentionTrace& t) {
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  const size_t n = t.labels.size();
  std::string out = quote("query (" + layer_name(t) + ")");
  for (const auto& l : t.labels) out += "," + quote(l);
  out += "\n";
  for (size_t i = 0; i < n; ++i) {
    out += quote(t.labels[i]);
    // a masked cell is an empty field, so that it cannot be mistaken for a weight of zero
    for (size_t j = 0; j < n; ++j)
      out += t.masked[i * n + j] ? std::string(",") : fmt::format(",{:.6f}", t.weights[i * n + j]);
    out += "\n";
  }
  return out;
}

// The n x n values of a map as its rows, one array per query, each value as an Out.
template <class Out, class In>
static nlohmann::ordered_json map_rows(const std::vector<In>& values, size_t n) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (size_t i = 0; i < n; ++i) rows.push_back(std::vector<Out>(values.begin() + i * n, values.begin() + (i + 1) * n));
  return rows;
}

static nlohmann::ordered_json trace_json(const models::AttentionTrace& t, const std::string& mode,
                                         const std::string& checkpoint) {
  return {{"sentence", join(t.english, " ")},
          {"translation", join(t.hindi, " ")},
          {"attention", mode},
          {"layer", t.layer + 1},  // 1-based, as --layer
          {"layers", t.layers},
          {"checkpoint", checkpoint},
          {"labels", t.labels},
          {"weights", map_rows<double>(t.weights, t.labels.size())},
          {"masked", map_rows<int>(t.masked, t.labels.size())}};
}

// Which queries --knockout hides its key from: one row of the map, every target row, or all rows.
constexpr int64_t kAllQueries = -1, kTargetQueries = -2;

// QUERY:KEY: QUERY a whole number, `target` or `all`, KEY a whole number; the message names the text.
static std::pair<int64_t, int64_t> parse_knockout(const std::string& text) {
  const size_t colon = text.find(':');
  const auto number = [&](const std::string& part) {
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos)
      throw std::runtime_error(
          fmt::format("--knockout: expected QUERY:KEY, QUERY a whole number, target or all and "
                      "KEY a whole number (rows and columns of attend's map, 0-based), got '{}'",
                      text));
    return static_cast<int64_t>(std::stoll(part));
  };
  if (colon == std::string::npos) number("");
  const std::string query = text.substr(0, colon);
  const int64_t q = query == "all" ? kAllQueries : query == "target" ? kTargetQueries : number(query);
  return {q, number(text.substr(colon + 1))};
}

// Why `query` never attends to `key` (empty when it may): a knockout there removes nothing.
static std::string never_sees(const models::Translator& model, int64_t query, int64_t key, int64_t n) {
  if (query < 0) return "";
  if (model.config().attention == models::AttentionMode::None && key != query)
    return "a model without attention lets each position see only itself";
  if (query < n && key >= n) return "a source word sees only the source";
  if (query >= n && key > query) return "a target position sees the source and the target positions up to itself";
  return "";
}

// The 0-based layer of --knockout-layer, or -1 for all.
static int64_t knockout_layer(const AttendOptions& o, const models::Translator& model) {
  if (o.knockout_layer == "all") return -1;
  const bool digits = !o.knockout_layer.empty() && o.knockout_layer.size() <= 3 &&
                      o.knockout_layer.find_first_not_of("0123456789") == std::string::npos;
  const int64_t layer = digits ? std::stoll(o.knockout_layer) : 0;
  if (layer < 1 || layer > model.layers())
    throw std::runtime_error(fmt::format("--knockout-layer '{}': expected all or 1 to {} ({} has {} layer{})",
                                         o.knockout_layer, model.layers(), o.checkpoint, model.layers(),
                                         model.layers() == 1 ? "" : "s"));
  return layer - 1;
}

// attend --knockout: the translation without and with the knockout. QUERY and KEY number the
// labels of the map (the English words, <sep>, the translation's words), as `--format text` shows;
// QUERY `target` hides the key from every target row, `all` from every row. With --format json it
// writes both translations and every layer's weights of the knocked-out pass (the explorer's test).
static void run_knockout(const AttendOptions& o, const std::vector<std::string>& words) {
  const auto [query, key] = parse_knockout(o.knockout);
  models::LoadedTranslator loaded = models::load_translator(o.checkpoint, Device::parse(o.device));
  models::Translator& model = *loaded.model;
  check_sentence(words, model, loaded.english);
  const int64_t layer = knockout_layer(o, model);
  const std::vector<std::string> plain =
      model.translate({words}, loaded.english, loaded.hindi, {.max_length = o.max_length})[0];
  std::vector<std::string> labels = words;
  labels.push_back("<sep>");
  labels.insert(labels.end(), plain.begin(), plain.end());
  const int64_t n = static_cast<int64_t>(words.size()), rows = static_cast<int64_t>(labels.size());
  if (query >= rows || key >= rows)
    throw std::runtime_error(fmt::format("--knockout {}: the map of '{}' -> '{}' has rows and columns 0 to {}",
                                         o.knockout, join(words, " "), join(plain, " "), rows - 1));
  const int64_t S = model.source_slots(n);  // the source slots translate lays out
  const auto position = [&](int64_t label) { return label < n ? label : S + (label - n); };
  const int64_t T = S + model.decode_limit(n, o.max_length) + 1;  // the slots translate decodes in
  const auto [from, to] = query == kAllQueries      ? std::pair<int64_t, int64_t>{0, T}
                          : query == kTargetQueries ? std::pair<int64_t, int64_t>{S, T}
                                                    : std::pair<int64_t, int64_t>{position(query), position(query) + 1};
  const models::Knockout knock = {.key = position(key), .query_from = from, .query_to = to, .layer = layer};
  const std::string queries = query == kAllQueries      ? "every query"
                              : query == kTargetQueries ? "the target queries"
                                                        : fmt::format("query {} '{}'", query, labels[query]);
  const std::string where = layer < 0 ? "every layer" : fmt::format("layer {}", layer + 1);
  if (o.format == "json") {
    nlohmann::ordered_json j = {{"sentence", join(words, " ")},
                                {"translation", join(plain, " ")},
                                {"knockout",
                                 {{"key", key},
                                  {"queries", query == kAllQueries      ? "all"
                                              : query == kTargetQueries ? "target"
                                                                        : std::to_string(query)},
                                  {"layer", layer < 0 ? "all" : std::to_string(layer + 1)}}}};
    for (int64_t l = 0; l < model.layers(); ++l) {
      const models::AttentionTrace t =
          models::trace_attention(model, words, loaded.english, loaded.hindi, l, knock, o.max_length);
      j["knocked_translation"] = join(t.hindi, " ");
      j["labels"] = t.labels;
      j["weights"].push_back(map_rows<double>(t.weights, t.labels.size()));
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }
  const std::vector<std::string> knocked =
      model.translate({words}, loaded.english, loaded.hindi, {.knockout = knock, .max_length = o.max_length})[0];
  const std::string never = never_sees(model, query, key, n);
  fmt::print("{}\nwithout knockout: {}\nknockout of key {} '{}' from {} ({}): {}\n{}\n", join(words, " "),
             join(plain, " "), key, labels[key], queries, where, join(knocked, " "),
             !never.empty()
                 ? fmt::format("unchanged: query {} never sees key {} ({}), so this knockout removes nothing", query,
                               key, never)
             : knocked == plain ? "unchanged"
                                : "changed");
}

// The 0-based layer to trace in `model`: --layer N (1-based) or, when not given, the last one.
static int64_t chosen_layer(const AttendOptions& o, const models::Translator& model, const std::string& checkpoint) {
  if (!o.layer_given) return model.layers() - 1;
  const int64_t layer = o.layer;
  if (layer < 1 || layer > model.layers())
    throw std::runtime_error(fmt::format("--layer {} is out of range: {} has {} layer{} (valid: {})", layer, checkpoint,
                                         model.layers(), model.layers() == 1 ? "" : "s",
                                         model.layers() == 1 ? "1" : fmt::format("1 to {}", model.layers())));
  return layer - 1;
}

void run_attend(const AttendOptions& o) {
  // --out's extension chooses the format (.png, .txt, .csv, .json); a --format that disagrees
  // with a known extension is refused, and PNG is the default for any other name.
  static const std::map<std::string, std::string> by_extension = {
      {".png", "png"}, {".txt", "text"}, {".csv", "csv"}, {".json", "json"}};
  std::string extension = o.out.empty() ? "" : fs::path(o.out).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto known = by_extension.find(extension);
  if (!o.format.empty() && known != by_extension.end() && known->second != o.format)
    throw std::runtime_error(
        fmt::format("--out {} has the extension {} but --format is {}; give a {} name or --format {}", o.out, extension,
                    o.format, o.format == "text" ? ".txt" : "." + o.format, known->second));
  const std::string format = !o.format.empty()             ? o.format
                             : o.out.empty()               ? "text"
                             : known != by_extension.end() ? known->second
                                                           : "png";
  if (format == "png" && o.out.empty()) throw std::runtime_error("--format png needs --out FILE.png");
  const std::vector<std::string> words = sentence_words(o.sentence);
  if (!o.knockout.empty()) return run_knockout(o, words);
  std::vector<std::string> checkpoints = {o.checkpoint};
  if (!o.compare.empty()) checkpoints.insert(checkpoints.begin(), o.compare);  // compare on the left
  std::vector<models::AttentionTrace> traces;
  std::vector<std::string> modes;
  for (size_t k = 0; k < checkpoints.size(); ++k) {
    models::LoadedTranslator loaded = models::load_translator(checkpoints[k], Device::parse(o.device));
    models::check_attention_maps_fit(loaded.model->config(), checkpoints[k]);  // (T, T) per layer, from the file
    const int64_t layer = chosen_layer(o, *loaded.model, checkpoints[k]);
    if (k == 0) check_sentence(words, *loaded.model, loaded.english);
    traces.push_back(
        models::trace_attention(*loaded.model, words, loaded.english, loaded.hindi, layer, {}, o.max_length));
    modes.push_back(models::attention_mode_name(loaded.model->config().attention));
  }
  if (format == "png") {
    std::vector<render::Image> images;
    for (size_t k = 0; k < traces.size(); ++k)
      images.push_back(render::render_heatmap(attention_heatmap(traces[k], modes[k], checkpoints[k])));
    render::write_png(images.size() == 1 ? images[0] : render::hstack(images, 24), o.out);
    fmt::print("wrote {}\n", o.out);
    return;
  }
  std::string text;
  if (format == "csv") {
    for (size_t k = 0; k < traces.size(); ++k)
      text += (traces.size() > 1 ? fmt::format("# {} ({})\n", checkpoints[k], modes[k]) : "") + trace_csv(traces[k]);
  } else if (format == "json") {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (size_t k = 0; k < traces.size(); ++k) all.push_back(trace_json(traces[k], modes[k], checkpoints[k]));
    text = (traces.size() == 1 ? all[0] : all).dump(2) + "\n";
  } else {  // text
    for (size_t k = 0; k < traces.size(); ++k) {
      text += fmt::format("{} attention · {} · {}\n{}  ->  {}\n", modes[k], layer_name(traces[k]), checkpoints[k],
                          join(traces[k].english, " "), join(traces[k].hindi, " "));
      text += text_heatmap(traces[k], o.out.empty() && isatty(STDOUT_FILENO));
      if (k + 1 < traces.size()) text += "\n";
    }
  }
  if (o.out.empty())
    fmt::print("{}", text);
  else
    write_file_atomic(o.out, text), fmt::print("wrote {}\n", o.out);
}

}  // namespace qkv::app
