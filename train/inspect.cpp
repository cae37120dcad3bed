// train/inspect.cpp — the inspection commands: `attend` (attention maps as PNG, text, CSV or
// JSON) and `demo` (the seed's argument in one command: ablation, showcase translations,
// side-by-side attention maps, the bank table and an offline index.html from tools/demo/index.html).
#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "commands.h"
#include "framework/autograd.h"
#include "framework/file_util.h"
#include "framework/ops.h"
#include "framework/text_util.h"
#include "models/seed_example.h"
#include "models/memory_budget.h"
#include "models/translator_io.h"
#include "tools/render/render.h"
#include "trainer.h"

namespace qkv::app {

namespace fs = std::filesystem;

// "layer 2 of 3": the traced layer, 1-based as the --layer option counts.
static std::string layer_name(const models::AttentionTrace& trace) {
  return fmt::format("layer {} of {}", trace.layer + 1, trace.layers);
}

static render::HeatmapSpec heatmap_for(const models::AttentionTrace& trace, const std::string& mode,
                                       const std::string& checkpoint) {
  render::HeatmapSpec spec;
  spec.title = fmt::format("{}\n-> {}\n{} attention · {} · {}", join(trace.english, " "), join(trace.hindi, " "),
                           mode, layer_name(trace), checkpoint);
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
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
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
        out += fmt::format(" \033[48;2;{};{};{}m{}{:>4.2f}\033[0m", c[0], c[1], c[2], w > 0.55 ? "\033[30m" : "\033[97m", w);
      } else {
        out += fmt::format(" {:>5.3f}", w);
      }
    }
    out += "\n";
  }
  out += fmt::format("rows are queries, columns are keys (numbered as the rows); '-' marks a masked cell; rows sum to 1\n");
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
    for (size_t j = 0; j < n; ++j) out += t.masked[i * n + j] ? std::string(",") : fmt::format(",{:.6f}", t.weights[i * n + j]);
    out += "\n";
  }
  return out;
}

static nlohmann::ordered_json trace_json(const models::AttentionTrace& t, const std::string& mode,
                                         const std::string& checkpoint) {
  nlohmann::ordered_json j;
  j["sentence"] = join(t.english, " ");
  j["translation"] = join(t.hindi, " ");
  j["attention"] = mode;
  j["layer"] = t.layer + 1;  // 1-based, as --layer
  j["layers"] = t.layers;
  j["checkpoint"] = checkpoint;
  j["labels"] = t.labels;
  const size_t n = t.labels.size();
  for (size_t i = 0; i < n; ++i) {
    j["weights"].push_back(std::vector<double>(t.weights.begin() + i * n, t.weights.begin() + (i + 1) * n));
    j["masked"].push_back(std::vector<int>(t.masked.begin() + i * n, t.masked.begin() + (i + 1) * n));
  }
  return j;
}

struct AttendOptions {
  std::string checkpoint, compare, sentence, out, format, device = "cpu";
  int64_t layer = 0;         // 1-based, when layer_given
  bool layer_given = false;  // otherwise: the last layer of each model
  int threads = 0;           // --threads
  std::string knockout;      // QUERY:KEY, row and column numbers of the text map (0-based)
  std::string knockout_layer = "all";  // 1-based layer or all
};

// QUERY:KEY as two whole numbers; the message names the text given.
static std::pair<int64_t, int64_t> parse_knockout(const std::string& text) {
  const size_t colon = text.find(':');
  const auto number = [&](const std::string& part) {
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos)
      throw std::runtime_error(fmt::format("--knockout: expected QUERY:KEY, two whole numbers (rows and columns of "
                                           "attend's map, 0-based), got '{}'", text));
    return static_cast<int64_t>(std::stoll(part));
  };
  if (colon == std::string::npos) number("");
  return {number(text.substr(0, colon)), number(text.substr(colon + 1))};
}

// attend --knockout: the translation without and with the knockout. QUERY and KEY number the
// labels of the map (the English words, <sep>, the translation's words), as `--format text` shows.
static void run_knockout(const AttendOptions& o, const std::vector<std::string>& words) {
  const auto [query, key] = parse_knockout(o.knockout);
  models::LoadedTranslator loaded = models::load_translator(o.checkpoint, Device::parse(o.device));
  models::Translator& model = *loaded.model;
  check_sentence(words, model.config().layout.max_source, loaded.english);
  int64_t layer = -1;
  if (o.knockout_layer != "all") {
    const bool digits = !o.knockout_layer.empty() && o.knockout_layer.size() <= 3 &&
                        o.knockout_layer.find_first_not_of("0123456789") == std::string::npos;
    layer = digits ? std::stoll(o.knockout_layer) : 0;
    if (layer < 1 || layer > model.layers())
      throw std::runtime_error(fmt::format("--knockout-layer '{}': expected all or 1 to {} ({} has {} layer{})",
                                           o.knockout_layer, model.layers(), o.checkpoint, model.layers(),
                                           model.layers() == 1 ? "" : "s"));
    layer -= 1;
  }
  const std::vector<std::string> plain = model.translate({words}, loaded.english, loaded.hindi)[0];
  std::vector<std::string> labels = words;
  labels.push_back("<sep>");
  labels.insert(labels.end(), plain.begin(), plain.end());
  const int64_t n = static_cast<int64_t>(words.size()), rows = static_cast<int64_t>(labels.size());
  if (query >= rows || key >= rows)
    throw std::runtime_error(fmt::format("--knockout {}: the map of '{}' -> '{}' has rows and columns 0 to {}",
                                         o.knockout, join(words, " "), join(plain, " "), rows - 1));
  const int64_t S = model.config().layout.max_source;
  const auto position = [&](int64_t label) { return label < n ? label : S + (label - n); };
  models::ForwardOptions options;
  options.knockout = {.key = position(key), .query_from = position(query), .query_to = position(query) + 1,
                      .layer = layer};
  const std::vector<std::string> knocked = model.translate({words}, loaded.english, loaded.hindi, options)[0];
  fmt::print("{}\nwithout knockout: {}\nknockout of key {} '{}' from query {} '{}' ({}): {}\n{}\n", join(words, " "),
             join(plain, " "), key, labels[key], query, labels[query],
             layer < 0 ? "every layer" : fmt::format("layer {}", layer + 1), join(knocked, " "),
             knocked == plain ? "unchanged" : "changed");
}

// The 0-based layer to trace in `model`: --layer N (1-based) or, when not given, the last one.
static int64_t chosen_layer(const AttendOptions& o, const models::Translator& model, const std::string& checkpoint) {
  if (!o.layer_given) return model.layers() - 1;
  const int64_t layer = o.layer;
  if (layer < 1 || layer > model.layers())
    throw std::runtime_error(fmt::format("--layer {} is out of range: {} has {} layer{} (valid: {})", layer,
                                         checkpoint, model.layers(), model.layers() == 1 ? "" : "s",
                                         model.layers() == 1 ? "1" : fmt::format("1 to {}", model.layers())));
  return layer - 1;
}

static void run_attend(const AttendOptions& o) {
  // --out's extension chooses the format (.png, .txt, .csv, .json); a --format that disagrees
  // with a known extension is refused, and PNG is the default for any other name.
  static const std::map<std::string, std::string> by_extension = {
      {".png", "png"}, {".txt", "text"}, {".csv", "csv"}, {".json", "json"}};
  std::string extension = o.out.empty() ? "" : fs::path(o.out).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto known = by_extension.find(extension);
  if (!o.format.empty() && known != by_extension.end() && known->second != o.format)
    throw std::runtime_error(fmt::format("--out {} has the extension {} but --format is {}; give a {} name or --format {}",
                                         o.out, extension, o.format, o.format == "text" ? ".txt" : "." + o.format,
                                         known->second));
  const std::string format = !o.format.empty() ? o.format : o.out.empty() ? "text" : known != by_extension.end() ? known->second : "png";
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
    if (k == 0) check_sentence(words, loaded.model->config().layout.max_source, loaded.english);
    traces.push_back(models::trace_attention(*loaded.model, words, loaded.english, loaded.hindi, layer));
    modes.push_back(models::attention_mode_name(loaded.model->config().attention));
  }
  if (format == "png") {
    std::vector<render::Image> images;
    for (size_t k = 0; k < traces.size(); ++k) images.push_back(render::render_heatmap(heatmap_for(traces[k], modes[k], checkpoints[k])));
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
  } else if (format == "text") {
    for (size_t k = 0; k < traces.size(); ++k) {
      text += fmt::format("{} attention · {} · {}\n{}  ->  {}\n", modes[k], layer_name(traces[k]), checkpoints[k],
                          join(traces[k].english, " "), join(traces[k].hindi, " "));
      text += text_heatmap(traces[k], o.out.empty() && isatty(STDOUT_FILENO));
      if (k + 1 < traces.size()) text += "\n";
    }
  } else {
    throw std::runtime_error("unknown --format '" + format + "' (expected png, text, csv or json)");
  }
  if (o.out.empty()) fmt::print("{}", text);
  else write_file_atomic(o.out, text), fmt::print("wrote {}\n", o.out);
}

// ---- demo ----

struct DemoOptions {
  std::string out = "demo_out", data_dir = "data/idioms";
  int64_t epochs = TrainOptions{}.epochs;  // the same as `qkv train`
  int64_t layers = TrainOptions{}.layers;  // the same as `qkv train`
  uint64_t seed = 1;
  bool frozen = false;  // also train learned and static with frozen token embeddings (two more models)
  int threads = 0;      // --threads
};

// One or two sentences on what the layers of a model can do, for the console and the page.
// Modest on purpose: the mask is the same in every layer, and who does what is learned.
static std::string layers_explained(int64_t layers) {
  if (layers == 1)
    return "Each model has one attention layer: the English words attend to one another, and each Hindi position "
           "attends to the English words and the Hindi written so far.";
  const std::string rest =
      "Every layer has the same mask; which layer does what is learned, not built in. The pictures show the last "
      "layer (qkv attend --layer N shows another).";
  if (layers == 2)
    return "Each model has 2 attention layers. Layer 1 can mix the English words among themselves, so that each word's "
           "vector carries its context; layer 2 can then let the Hindi positions read that English context. " + rest;
  return fmt::format("Each model has {} attention layers. The earlier layers can mix the English words among "
                     "themselves, building each word's context; the later ones can let the Hindi positions read "
                     "that English context. {}", layers, rest);
}

// cos(bank in one sentence, bank in the other) inside one model.
static double bank_cosine(models::LoadedTranslator& m, const std::vector<std::string>& a,
                          const std::vector<std::string>& b, size_t position, models::TokenVector kind) {
  return models::cosine_similarity(models::source_token_vector(*m.model, a, m.english, position, kind),
                                   models::source_token_vector(*m.model, b, m.english, position, kind));
}

static std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

// tools/demo/index.html as a string literal, generated by the Makefile.
static const char kDemoPage[] =
#include "demo_page.inc"
    ;

// The template with each {{NAME}} replaced by values[NAME]. Values are not scanned again, and a
// placeholder without a value, or a value without its placeholder, is a build problem.
static std::string fill_page_template(const std::string& page, const std::map<std::string, std::string>& values) {
  std::string out;
  std::set<std::string> used;
  size_t from = 0;
  while (true) {
    const size_t open = page.find("{{", from);
    if (open == std::string::npos) break;
    const size_t close = page.find("}}", open + 2);
    if (close == std::string::npos)
      throw std::runtime_error("demo: the page template has an unclosed {{ (a build problem)");
    const std::string name = page.substr(open + 2, close - open - 2);
    const auto value = values.find(name);
    if (value == values.end())
      throw std::runtime_error("demo: the page template has no value for {{" + name + "}} (a build problem)");
    out.append(page, from, open - from);
    out += value->second;
    used.insert(name);
    from = close + 2;
  }
  out.append(page, from, std::string::npos);
  for (const auto& [name, value] : values)
    if (!used.count(name)) throw std::runtime_error("demo: the page template lacks {{" + name + "}} (a build problem)");
  return out;
}

// The demo's showcase sentences (also the explorer page's starting sentences), with file stems.
const std::vector<std::pair<std::string, std::string>>& demo_showcase() {
  static const std::vector<std::pair<std::string, std::string>> showcase = {
    {"cake_literal", "she ate a piece of cake"},
    {"cake_idiom", "the exam was a piece of cake"},
    {"bank_money", "money bank grows"},
    {"bank_river", "river bank flows"},
    {"bank_kept", "he kept money in the bank"},
    {"bank_sat", "he sat on the bank of the river"},
    // none of these is in any split; bank_thief, bat_garden, cake_idiom_puzzle, role_swap,
    // snake_subject and coordination are combinations train never shows
    {"bank_thief", "ravi saw a thief on the bank of the river"},         // a thief (also seen in banks) by a river
    {"bat_garden", "priya saw a bat in the garden"},                      // as sense_context: no animal bat in a garden in train
    {"cake_idiom_puzzle", "the puzzle was a piece of cake for the girl"},  // as idiom_context: no puzzle with the idiom
    {"role_swap", "priya called ravi"},                                   // as role_swap: train has ravi acting on priya only
    {"cat_subject", "the cat ate a piece of cake"},                       // an animal eating the literal cake
    {"snake_subject", "the snake ate an egg"},                            // as noun_roles: train has the snake only as an object
    {"coordination", "ravi bought a book for amit and priya"},            // as coordination: train never coordinates a beneficiary
  };
  return showcase;
}

// One trained model of the demo, with its greedy exact match on each report split.
struct DemoModel {
  std::string mode;
  TrainResult train;
  std::vector<EvalResult> splits;  // one per report split (test, then the generalisation splits present)
  int64_t attention_params = 0;
  models::LoadedTranslator loaded;
};

// Trains `mode` (frozen: with frozen token embeddings) into OUT/MODE[_frozen] and scores it.
static DemoModel train_demo_model(const DemoOptions& o, const data::Dataset& ds,
                                  const std::vector<std::string>& report_splits, const std::string& mode, bool freeze) {
  TrainOptions t;
  t.data_dir = o.data_dir;
  t.attention = models::parse_attention_mode(mode);
  t.epochs = o.epochs;
  t.layers = o.layers;
  t.seed = o.seed;
  t.threads = o.threads;
  t.freeze_embeddings = freeze;
  t.out_dir = (fs::path(o.out) / (freeze ? mode + "_frozen" : mode)).string();
  t.quiet = true;
  t.force = true;  // the demo owns its output folder: a rerun starts each model over
  fmt::print("training {:<8} attention{} ({} epochs) ...", mode, freeze ? ", frozen token embeddings" : "", t.epochs);
  std::fflush(stdout);
  DemoModel r;
  r.mode = mode;
  r.train = train_translator(t);
  r.loaded = models::load_translator(r.train.checkpoint);
  for (const auto& name : report_splits)
    r.splits.push_back(evaluate(*r.loaded.model, ds.split(name), r.loaded.english, r.loaded.hindi));
  r.attention_params = r.loaded.model->attention_parameter_count();
  fmt::print(" {:.1f}s, test exact match {:.1f}%\n", r.train.seconds, 100 * r.splits[0].exact_match);
  return r;
}

// The ablation table: one exact-match column per split, each as wide as its name.
static std::string ablation_table(const std::vector<std::string>& report_splits, const std::vector<DemoModel>& results,
                                  const std::vector<DemoModel>& frozen) {
  std::string table = fmt::format("{:<9} {:<17}", "attention", "token embeddings");
  for (const auto& name : report_splits) table += fmt::format(" {:>{}}", name, std::max<size_t>(name.size(), 6));
  table += fmt::format(" {:>12} {:>8}\n", "attn params", "train s");
  for (const auto* group : {&results, &frozen})
    for (const auto& r : *group) {
      table += fmt::format("{:<9} {:<17}", r.mode, group == &results ? "trained" : "frozen (static)");
      for (size_t k = 0; k < report_splits.size(); ++k)
        table += fmt::format(" {:>{}.1f}%", 100 * r.splits[k].exact_match, std::max<size_t>(report_splits[k].size(), 6) - 1);
      table += fmt::format(" {:>12} {:>8.1f}\n", r.attention_params, r.train.seconds);
    }
  return table;
}

struct DemoPicture {
  std::string file, caption;
};

// The showcase sentences translated by every model, and their last-layer attention side by side
// (static, learned) in OUT/attention_NAME.png; returns the translations' text.
static std::string showcase_translations(const DemoOptions& o, std::vector<DemoModel>& results,
                                         std::vector<DemoPicture>& pictures) {
  std::string translations;
  for (const auto& [name, sentence] : demo_showcase()) {
    const std::vector<std::string> words = data::tokenize(sentence);
    translations += fmt::format("\n  {}\n", sentence);
    if (static_cast<int64_t>(words.size()) > results[0].loaded.model->config().layout.max_source) {
      translations += "    (skipped: longer than this dataset's sentences)\n";  // a small --data directory
      continue;
    }
    std::vector<render::Image> images;
    for (auto& r : results) {
      const auto trace =
          models::trace_attention(*r.loaded.model, words, r.loaded.english, r.loaded.hindi, r.loaded.model->layers() - 1);
      translations += fmt::format("    {:<8} -> {}\n", r.mode, join(trace.hindi, " "));
      if (r.mode != "none") images.insert(images.begin(), render::render_heatmap(heatmap_for(trace, r.mode, r.train.checkpoint)));
    }
    const std::string file = fmt::format("attention_{}.png", name);
    render::write_png(render::hstack(images, 24), (fs::path(o.out) / file).string());
    pictures.push_back({file, fmt::format("\"{}\": static (left) vs learned (right) attention{}. Each row is a query; "
                                          "the row of a target token is the position that predicts the next token. "
                                          "Hatched cells are masked.", sentence,
                                          o.layers == 1 ? "" : fmt::format(" in the last layer ({})", o.layers))});
  }
  return translations;
}

// The bank table: cos(bank, bank) across the money and river sentences for a static embedding,
// parameter-free attention and learned attention, and whether the seed's claim holds.
struct BankSection {
  std::string title, table, verdict;
};

static BankSection bank_section(const DemoOptions& o, std::vector<DemoModel>& results) {
  const std::vector<std::string> money = {"money", "bank", "grows"}, river = {"river", "bank", "flows"};
  DemoModel& learned = results[0];
  DemoModel& fixed = results[1];
  const double cos_static = bank_cosine(learned.loaded, money, river, 1, models::TokenVector::Embedding);
  const double cos_free = bank_cosine(fixed.loaded, money, river, 1, models::TokenVector::Contextual);
  const double cos_learned = bank_cosine(learned.loaded, money, river, 1, models::TokenVector::Contextual);
  BankSection s;
  s.table = fmt::format(
      "{:<34} {:>8}\n{:<34} {:>8.4f}\n{:<34} {:>8.4f}\n{:<34} {:>8.4f}\n", "representation of 'bank'", "cosine",
      "static embedding (token + position)", cos_static, "parameter-free attention (static)", cos_free,
      "learned W_q, W_k, W_v", cos_learned);
  // The contextual vectors come from the first layer (x + its attention; see Translator::last_contextual).
  s.title = fmt::format("cos(bank in 'money bank grows', bank in 'river bank flows'){}",
                        o.layers == 1 ? "" : ", after the first layer's attention");
  const bool claim = std::fabs(cos_static - 1.0) < 1e-9 && cos_free < 1.0 && cos_learned < 1.0;
  s.verdict = fmt::format(
      "seed's claim: a static embedding gives 'bank' one vector in both sentences (cos 1.0) and attention makes it "
      "depend on context (cos < 1): {}. Learned attention {} the two senses further apart than parameter-free attention.",
      claim ? "reproduced" : "NOT reproduced", cos_learned < cos_free ? "pushes" : "does not push");
  return s;
}

static void run_demo(const DemoOptions& o) {
  const data::Dataset ds = data::load_dataset(o.data_dir);  // fail early, before any output
  std::vector<std::string> report_splits = {"test"};
  for (const auto& name : data::generalisation_split_names())
    if (ds.has(name)) report_splits.push_back(name);
  std::vector<DemoModel> results, frozen;  // trained token embeddings; frozen (the seed's static ones)
  fs::create_directories(o.out);
  for (const auto& mode : {"learned", "static", "none"}) results.push_back(train_demo_model(o, ds, report_splits, mode, false));
  if (o.frozen)
    for (const auto& mode : {"learned", "static"}) frozen.push_back(train_demo_model(o, ds, report_splits, mode, true));

  const std::string table = ablation_table(report_splits, results, frozen);
  const std::string table_title = fmt::format(
      "greedy exact match on whole sentences, per split; {} layer{} per model", o.layers, o.layers == 1 ? "" : "s");
  fmt::print("\nAblation ({}):\n{}", table_title, table);
  fmt::print("{}\n", layers_explained(o.layers));
  std::vector<DemoPicture> pictures;
  const std::string translations = showcase_translations(o, results, pictures);
  fmt::print("\nShowcase translations:{}", translations);
  const BankSection bank = bank_section(o, results);
  fmt::print("\nBank table: {}\n{}", bank.title, bank.table);
  fmt::print("{}\n", bank.verdict);

  // ---- loss curves and index.html ----
  for (const auto& r : results)
    pictures.push_back({fmt::format("{}/loss.png", r.mode), fmt::format("{} attention: train and valid loss per epoch", r.mode)});
  std::string figures;
  for (const auto& p : pictures)
    figures += fmt::format("<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>\n", p.file,
                           html_escape(p.caption), html_escape(p.caption));
  const std::string html = fill_page_template(
      kDemoPage, {{"FROZEN_EMBEDDINGS_NOTE",
                   o.frozen ? " The last two rows keep the token embeddings frozen at their random start, like the "
                              "seed's static embeddings, so parameter-free attention cannot reshape them."
                            : ""},
                  {"ABLATION_TITLE", html_escape(table_title)},
                  {"LAYERS_EXPLAINED", html_escape(layers_explained(o.layers))},
                  {"ABLATION_TABLE", html_escape(table)},
                  {"SHOWCASE_TRANSLATIONS", html_escape(translations)},
                  {"BANK_TITLE", html_escape(bank.title)},
                  {"BANK_TABLE", html_escape(bank.table)},
                  {"BANK_VERDICT", html_escape(bank.verdict)},
                  {"FIGURES", figures}});
  std::vector<std::string> checkpoints;
  for (const auto& r : results) checkpoints.push_back(r.train.checkpoint);
  write_explorer_page(checkpoints, {}, (fs::path(o.out) / "explore.html").string(), true);
  write_file_atomic((fs::path(o.out) / "index.html").string(), html);
  fmt::print("\nwrote {} and {} (the explorer)\n", (fs::path(o.out) / "index.html").string(),
             (fs::path(o.out) / "explore.html").string());
}

void register_inspection(CLI::App& app) {
  auto a = std::make_shared<AttendOptions>();
  auto* attend = app.add_subcommand("attend", "show the attention weights for a sentence and its greedy translation");
  attend->add_option("--checkpoint", a->checkpoint, "model.safetensors")->required();
  attend->add_option("--compare", a->compare, "a second checkpoint (e.g. static) drawn on the left");
  attend->add_option("--out", a->out, "write to this file (PNG by default) instead of stdout");
  attend->add_option("--format", a->format, "png | text | csv | json (default: png with --out, else text)")
      ->check(CLI::IsMember({"png", "text", "csv", "json"}));
  auto* layer = attend->add_option("--layer", a->layer, "which layer's attention to show, 1-based (default: the last)")
                    ->check(whole_number());
  attend->add_option("--device", a->device, "cpu | cuda | cuda:N")->capture_default_str();
  auto attend_words = std::make_shared<std::vector<std::string>>();
  attend->add_option("sentence", *attend_words, "the English sentence, quoted or not (lower-cased, punctuation dropped)")
      ->required();
  attend->add_option("--knockout", a->knockout,
                     "QUERY:KEY: hide key KEY from query QUERY (rows and columns of the text map, 0-based) and print "
                     "the translation with and without it");
  auto* knockout_layer = attend->add_option("--knockout-layer", a->knockout_layer, "the layer of --knockout, 1-based, or all")
                             ->capture_default_str();
  add_threads_option(attend, a->threads);
  attend->callback([a, layer, attend_words, knockout_layer] {
    apply_threads(a->threads);
    if (a->knockout.empty() && knockout_layer->count() > 0)
      throw std::runtime_error("--knockout-layer needs --knockout QUERY:KEY");
    if (!a->knockout.empty() && (layer->count() > 0 || !a->out.empty() || !a->format.empty() || !a->compare.empty()))
      throw std::runtime_error("--knockout prints two translations: it takes no --layer (use --knockout-layer), "
                               "--out, --format or --compare");
    a->sentence = join(*attend_words, " ");
    a->layer_given = layer->count() > 0;
    if (!a->out.empty()) check_output_file(a->out);  // a device, pipe or folder is refused before any work
    run_attend(*a);
  });

  auto d = std::make_shared<DemoOptions>();
  auto* demo = app.add_subcommand("demo", "train learned, static and none attention and show the difference");
  demo->add_option("--out", d->out, "output directory")->capture_default_str();
  demo->add_option("--data", d->data_dir, "dataset directory")->capture_default_str();
  demo->add_option("--epochs", d->epochs, "epochs per mode")->check(whole_number_in(1, 100000))->capture_default_str();
  demo->add_option("--layers", d->layers, "layers per model (as qkv train --layers)")
      ->check(whole_number_in(int64_t{1}, models::TranslatorConfig::kMaxLayers))->capture_default_str();
  demo->add_option("--seed", d->seed, "random seed")->check(seed_value())->capture_default_str();
  demo->add_flag("--frozen", d->frozen, "also train learned and static with frozen token embeddings (the seed's static embeddings)");
  add_threads_option(demo, d->threads);
  demo->callback([d] {
    apply_threads(d->threads);
    run_demo(*d);
  });
}

}  // namespace qkv::app
