// tests/program/test_dataset.cpp — the dataset loader on small directories written here: the required
// train/valid/test splits, the optional generalisation splits (present, absent, malformed), and
// words or sentences those splits bring that the training vocabulary or layout does not cover.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "data/dataset.h"
#include "tests/test_util.h"

using namespace qkv;
using qkv::testing::error_of;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temp dir, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() / fmt::format("qkv_dataset_{}_{}", ::getpid(), counter++);
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// train/valid/test with a handful of pairs.
void write_required(const TempDir& dir) {
  dir.write("train.tsv", "money bank grows\tपैसा बढ़ता है\nriver bank flows\tनदी बहती है\n");
  dir.write("valid.tsv", "money bank flows\tपैसा बहता है\n");
  dir.write("test.tsv", "river bank grows\tनदी बढ़ती है\n");
}

}  // namespace

TEST_SUITE("dataset") {
TEST_CASE("without generalisation files: train, valid and test only; asking for one names its file") {
  TempDir dir;
  write_required(dir);
  const data::Dataset ds = data::load_dataset(dir.path.string());
  CHECK(ds.available() == std::vector<std::string>{"train", "valid", "test"});
  CHECK(ds.generalisation.empty());
  CHECK(ds.train.size() == 2);
  CHECK(ds.split("test").size() == 1);
  CHECK_FALSE(ds.has("deeper"));
  CHECK(error_of([&] { ds.split("deeper"); }) ==
        fmt::format("split 'deeper' is not in this dataset: {} does not exist", dir.file("deeper.tsv")));
  CHECK(error_of([&] { ds.split("bogus"); }) ==
        "unknown split 'bogus' (expected one of train, valid, test, idiom_context, sense_context, role_swap, deeper, "
        "noun_roles, verb_objects, coordination)");
}

TEST_CASE("generalisation files that exist are loaded, in the fixed report order") {
  TempDir dir;
  write_required(dir);
  dir.write("role_swap.tsv", "bank money grows\tबैंक पैसा बढ़ता है\nflows river bank\tबहती नदी है\n");
  dir.write("idiom_context.tsv", "the exam was a piece of cake\tपरीक्षा बहुत आसान थी\n");
  dir.write("unrelated.tsv", "not\ta split\n");  // other files are ignored
  const data::Dataset ds = data::load_dataset(dir.path.string());
  CHECK(ds.available() == std::vector<std::string>{"train", "valid", "test", "idiom_context", "role_swap"});
  REQUIRE(ds.split("role_swap").size() == 2);
  CHECK(ds.split("role_swap")[1].english == std::vector<std::string>{"flows", "river", "bank"});
  CHECK(ds.split("role_swap")[1].source == dir.file("role_swap.tsv") + ":2");
  CHECK(ds.split("idiom_context")[0].hindi.size() == 4);
  CHECK(error_of([&] { ds.split("sense_context"); }).find("sense_context.tsv does not exist") != std::string::npos);
  for (const auto& name : data::generalisation_split_names()) { dir.write(name + ".tsv", "a b\tक ख\n"); }
  CHECK(data::load_dataset(dir.path.string()).available() == data::all_split_names());
}

TEST_CASE("turn_targets writes each target last word first, in every split, and turns back") {
  TempDir dir;
  write_required(dir);
  dir.write("role_swap.tsv", "bank money grows\tबैंक पैसा बढ़ता है\n");
  const data::Dataset plain = data::load_dataset(dir.path.string());
  data::Dataset ds = plain;
  data::turn_targets(ds);
  CHECK(ds.targets_turned);
  CHECK(ds.train[1].hindi == std::vector<std::string>{"है", "बहती", "नदी"});
  CHECK(ds.train[1].english == plain.train[1].english);
  CHECK(ds.test[0].hindi == std::vector<std::string>{"है", "बढ़ती", "नदी"});
  CHECK(ds.split("role_swap")[0].hindi == std::vector<std::string>{"है", "बढ़ता", "पैसा", "बैंक"});
  data::turn_targets(ds);
  CHECK(!ds.targets_turned);
  CHECK(ds.valid[0].hindi == plain.valid[0].hindi);
}

TEST_CASE("a malformed line in a generalisation file is an error naming file:line") {
  TempDir dir;
  write_required(dir);
  dir.write("sense_context.tsv", "river bank flows\tनदी बहती है\nno tab on this line\n");
  CHECK(error_of([&] { data::load_dataset(dir.path.string()); }) ==
        dir.file("sense_context.tsv") + ":2: missing tab between english and hindi");
  dir.write("sense_context.tsv", "");
  CHECK(error_of([&] { data::load_dataset(dir.path.string()); }) ==
        dir.file("sense_context.tsv") + ": no sentence pairs");
  dir.write("sense_context.tsv", "a\tक\n");
  dir.write("deeper.tsv", "a\tक\t\n");
  CHECK(error_of([&] { data::load_dataset(dir.path.string()); }) ==
        dir.file("deeper.tsv") + ":1: more than one tab (expected english<TAB>hindi)");
}

TEST_CASE("the required splits stay required") {
  TempDir dir;
  write_required(dir);
  fs::remove(dir.path / "test.tsv");
  dir.write("deeper.tsv", "a\tक\n");
  CHECK(error_of([&] { data::load_dataset(dir.path.string()); }) == dir.file("test.tsv") + ": cannot open file");
}

TEST_CASE("unknown words of a generalisation split become <unk>; a too-long sentence names file:line") {
  TempDir dir;
  write_required(dir);
  dir.write("deeper.tsv", "money bank zorble\tपैसा ज़ोरबल है\nthe river bank grows again\tनदी फिर बढ़ती है\n");
  const data::Dataset ds = data::load_dataset(dir.path.string());
  std::vector<std::vector<std::string>> en, hi;
  for (const auto& p : ds.train) en.push_back(p.english), hi.push_back(p.hindi);
  const data::Vocab english = data::Vocab::build(en), hindi = data::Vocab::build(hi);  // from train only
  CHECK_FALSE(english.contains("zorble"));
  const data::Layout layout{3, 4};
  const data::Batch batch = data::make_batch(ds.split("deeper"), {0}, english, hindi, layout);
  CHECK(batch.source.to_ids() == std::vector<int64_t>{english.id("money"), english.id("bank"), data::Vocab::UNK});
  CHECK(batch.target_output.to_ids() ==
        std::vector<int64_t>{hindi.id("पैसा"), data::Vocab::UNK, hindi.id("है"), data::Vocab::EOS});
  CHECK(error_of([&] { data::make_batch(ds.split("deeper"), {1}, english, hindi, layout); }) ==
        dir.file("deeper.tsv") + ":2: english has 5 tokens, the model reads at most 3");
}
}

TEST_CASE("the shipped corpus has every generalisation split, each in train's vocabulary and length") {
  const data::Dataset ds = data::load_dataset("data/idioms");
  std::vector<std::vector<std::string>> english, hindi;
  size_t longest_english = 0, longest_hindi = 0;
  for (const auto& p : ds.train) {
    english.push_back(p.english);
    hindi.push_back(p.hindi);
    longest_english = std::max(longest_english, p.english.size());
    longest_hindi = std::max(longest_hindi, p.hindi.size());
  }
  const data::Vocab en = data::Vocab::build(english), hi = data::Vocab::build(hindi);
  for (const auto& name : data::generalisation_split_names()) {
    CAPTURE(name);
    REQUIRE(ds.has(name));
    CHECK(ds.split(name).size() == 400);
    for (const auto& p : ds.split(name)) {
      CAPTURE(p.source);
      CHECK(p.english.size() <= longest_english);
      CHECK(p.hindi.size() <= longest_hindi);
      for (const auto& w : p.english) CHECK(en.contains(w));
      for (const auto& w : p.hindi) CHECK(hi.contains(w));
    }
  }
}

TEST_CASE("English as people type it: lower case, sentence punctuation off, suggestions for unknown words") {
  CHECK(data::normalize_english(data::tokenize("The Exam was a piece of cake.")) ==
        std::vector<std::string>{"the", "exam", "was", "a", "piece", "of", "cake"});
  CHECK(data::normalize_english(data::tokenize("\"Ravi,\" she said ! ?")) ==
        std::vector<std::string>{"ravi", "she", "said"});
  CHECK(data::normalize_english(data::tokenize("don't stop-now")) == std::vector<std::string>{"don't", "stop-now"});
  CHECK(data::normalize_english(data::tokenize("... !")).empty());
  const std::vector<std::string> vocab = {"<pad>", "cake", "car", "bank", "exam", "cat"};
  CHECK(data::nearest_words("cak", vocab) == std::vector<std::string>{"cake", "car", "cat"});
  CHECK(data::nearest_words("exma", vocab) == std::vector<std::string>{"exam"});
  CHECK(data::nearest_words("zorbleflax", vocab).empty());
  // a swap of two neighbouring letters is one edit (Damerau): bank comes first, before the words
  // two substitutions away (issue 36)
  const std::vector<std::string> b_words = {"bat", "book", "break", "bank", "back"};
  CHECK(data::nearest_words("bnak", b_words, 1) == std::vector<std::string>{"bank"});
  CHECK(data::nearest_words("teh", {"the", "ten", "tea"}) == std::vector<std::string>{"the", "ten", "tea"});
  CHECK(data::nearest_words("hte", {"tea", "the"}, 1) == std::vector<std::string>{"the"});
  const auto near_pad = data::nearest_words("<pad", vocab);  // specials are never suggested
  CHECK(std::find(near_pad.begin(), near_pad.end(), "<pad>") == near_pad.end());
}

TEST_CASE("dataset lines are read 64 KB at most, the longer one named with file:line (issue 26)") {
  std::istringstream ok("river bank\tनदी किनारा\n" + std::string(65530, 'a') + "\tb\n");
  CHECK(data::parse_pairs(ok, "t.tsv").size() == 2);
  std::istringstream long_line("river bank\tनदी किनारा\n" + std::string(70000, 'a') + "\tb\n");
  CHECK(qkv::testing::error_of([&] { data::parse_pairs(long_line, "t.tsv"); }) ==
        "t.tsv:2: a line longer than 65536 bytes (is this a text file?)");
  std::istringstream no_newline(std::string(1 << 20, '\0'));  // like /dev/zero: never a newline
  CHECK(qkv::testing::error_of([&] { data::parse_pairs(no_newline, "zeros"); }).rfind("zeros:1: a line longer", 0) ==
        0);
}

TEST_CASE("--target-noise: hidden Hindi inputs become <unk> by their row's key; <sep>, padding and targets stay") {
  std::vector<data::SentencePair> pairs;
  for (int i = 0; i < 8; ++i)
    pairs.push_back(
        {{"the", "boy"}, {"लड़का", "आज", "घर", "आया", "और", "फिर", "सो", "गया"}, fmt::format("t:{}", i + 1)});
  const data::Vocab english = data::Vocab::build({pairs[0].english}), hindi = data::Vocab::build({pairs[0].hindi});
  const data::Layout layout{3, 10};
  const std::vector<size_t> rows = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<uint64_t> keys = {11, 12, 13, 14, 15, 16, 17, 18};
  const data::Batch plain = data::make_batch(pairs, rows, english, hindi, layout);
  const data::Batch hidden = data::make_batch(pairs, rows, english, hindi, layout, Device::cpu(), {0.5, keys});
  CHECK(hidden.target_output.to_ids() == plain.target_output.to_ids());
  CHECK(hidden.source.to_ids() == plain.source.to_ids());
  const std::vector<int64_t> in = hidden.target_input.to_ids(), was = plain.target_input.to_ids();
  int64_t unk = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t t = i % 10;
    if (t == 0 || t > 8) {
      CHECK(in[i] == was[i]);  // <sep> and the padding
    } else if (in[i] != was[i]) {
      CHECK(in[i] == data::Vocab::UNK);
      ++unk;
    }
  }
  CHECK(unk > 16);  // about half of the 64 words, none certain
  CHECK(unk < 48);
  CHECK(data::make_batch(pairs, rows, english, hindi, layout, Device::cpu(), {0.5, keys}).target_input.to_ids() == in);
  std::vector<uint64_t> other = keys;
  other[0] = 99;
  const std::vector<int64_t> moved =
      data::make_batch(pairs, rows, english, hindi, layout, Device::cpu(), {0.5, other}).target_input.to_ids();
  CHECK(std::vector<int64_t>(moved.begin() + 10, moved.end()) == std::vector<int64_t>(in.begin() + 10, in.end()));
  CHECK(error_of([&] {
          data::make_batch(pairs, rows, english, hindi, layout, Device::cpu(), {0.5, {1}});
        }) == "make_batch: 1 row keys for 8 rows");
}
