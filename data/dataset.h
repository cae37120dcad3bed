// data/dataset.h — the idiom-translation dataset: TSV loading with file:line errors (the required
// train/valid/test splits and the optional generalisation splits), the two vocabularies (with
// <pad>, <unk>, <sep>, <eos>) and fixed-layout token batches for the model.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/random.h"
#include "framework/tensor.h"

namespace qkv::data {

struct SentencePair {
  std::vector<std::string> english, hindi;  // whitespace-separated tokens
  std::string source;                       // "file:line", for messages
};

// Splits on ASCII whitespace.
std::vector<std::string> tokenize(const std::string& text);
// English as people type it, in the corpus's form: ASCII letters lower-cased and sentence
// punctuation (. , ! ? ; : " and quotes) split off the ends of each word and dropped
// ("The exam was a piece of cake." -> the exam was a piece of cake). Other characters stay.
std::vector<std::string> normalize_english(const std::vector<std::string>& words);
// Up to `most` words of `vocabulary` within edit distance 2 of `word` (Levenshtein), nearest first;
// never a special (<pad>, <unk>, ...). See qkv::nearest_strings.
std::vector<std::string> nearest_words(const std::string& word, const std::vector<std::string>& vocabulary,
                                       size_t most = 3);

// Calls fn(line, where, line_no) for each line of `in`: at most 64 KB each (read_bounded_line), a
// trailing '\r' dropped, where = "path:N". Returns the number of lines. The text readers of data/
// (dataset splits, cues.tsv) share it.
int for_each_text_line(std::istream& in, const std::string& path,
                       const std::function<void(const std::string& line, const std::string& where, int line_no)>& fn);

// Reads `english<TAB>hindi` lines. Any malformed line throws "path:line: reason"; nothing is skipped.
// The longest sentence a dataset line may hold (each side); longer lines are an error naming
// file:line, before anything is sized from them.
inline constexpr int64_t kMaxSentenceWords = 256;
std::vector<SentencePair> load_pairs(const std::string& path);
// The same from a stream (path names it in messages); the fuzz harness uses it.
std::vector<SentencePair> parse_pairs(std::istream& in, const std::string& path);

// The optional generalisation splits, in report order: idiom_context, sense_context, role_swap,
// deeper, noun_roles, verb_objects, coordination (each NAME is read from DIR/NAME.tsv when the
// file exists).
const std::vector<std::string>& generalisation_split_names();
// Every split name a dataset can have: train, valid, test, then the generalisation splits.
std::vector<std::string> all_split_names();

struct Dataset {
  std::string dir;
  std::vector<SentencePair> train, valid, test;                     // always present
  std::map<std::string, std::vector<SentencePair>> generalisation;  // only the files that exist
  bool targets_turned = false;                                      // by turn_targets: last word first
  // True for train, valid, test and every generalisation split whose file was present.
  bool has(const std::string& name) const;
  // The splits present, in all_split_names() order.
  std::vector<std::string> available() const;
  // Throws naming the choices for an unknown name, and naming the missing file for a known
  // generalisation split whose file was absent.
  const std::vector<SentencePair>& split(const std::string& name) const;
};
// A split a user names, for evaluation: NAME is a path to a file when it ends in .tsv or holds a '/',
// else a split the dataset loaded, else DIR/NAME.tsv for any other NAME. A missing file throws
// naming it and the splits the folder has; a malformed one throws its file:line.
struct NamedSplit {
  std::string name;  // as given
  std::vector<SentencePair> pairs;
};
NamedSplit read_split(const std::string& dir, const std::string& name);
// The splits `eval --split all` covers: every NAME.tsv in DIR but train.tsv and cues.tsv (the cue
// table, another format): valid, test, the generalisation splits in report order, then any others
// in name order.
std::vector<std::string> evaluation_split_names(const std::string& dir);

// Loads DIR/train.tsv, DIR/valid.tsv and DIR/test.tsv (required) and every generalisation split
// file that exists. Words unknown to a vocabulary are not an error here (they become <unk>).
Dataset load_dataset(const std::string& dir);
// Every pair of every split turned round, Hindi as the source and English as the target (qkv train
// --reverse: the channel model of models/noisy_channel.h).
void swap_languages(Dataset& ds);
// Each pair's target words in reverse order, in every split or in one (qkv train --right-to-left).
void turn_targets(std::vector<SentencePair>& pairs);
void turn_targets(Dataset& ds);

class Vocab {
 public:
  static constexpr int64_t PAD = 0, UNK = 1, SEP = 2, EOS = 3;
  // The most words a vocabulary holds, specials included: building one from a dataset and reading
  // one from a checkpoint obey the same bound, so qkv never writes a model it could not read back.
  static constexpr int64_t kMaxWords = int64_t{1} << 20;
  Vocab();  // just the four specials
  // Specials first, then every word in order of first appearance.
  static Vocab build(const std::vector<std::vector<std::string>>& sentences);
  // Checks the specials, the size, and that each word is one a line of text could give (not empty,
  // no whitespace, at most kMaxLineBytes).
  static Vocab from_words(const std::vector<std::string>& words);
  int64_t id(const std::string& word) const;  // UNK when unknown
  bool contains(const std::string& word) const { return index_.count(word) > 0; }
  const std::string& word(int64_t id) const;
  int64_t size() const { return static_cast<int64_t>(words_.size()); }
  const std::vector<std::string>& words() const { return words_; }

 private:
  struct EmptyTag {};
  explicit Vocab(EmptyTag) {}
  std::vector<std::string> words_;
  std::unordered_map<std::string, int64_t> index_;
};

// The fixed sequence layout: [source (S slots) ; <sep> y1 .. y_{T_tgt - 1}], T = S + T_tgt.
// Source slots hold English ids (padded with <pad>); the target part holds Hindi ids shifted right.
struct Layout {
  int64_t max_source = 0;  // S
  int64_t max_target = 0;  // T_tgt, including the final <eos>
  int64_t length() const { return max_source + max_target; }
};

struct Batch {
  Tensor source;                        // (B, S) int64 English ids
  Tensor target_input;                  // (B, T_tgt) int64 Hindi ids: <sep> y1 .. y_n <pad> ...
  Tensor target_output;                 // (B, T_tgt) int64 Hindi ids: y1 .. y_n <eos> <pad> ... (<pad> is ignored)
  std::vector<int64_t> source_lengths;  // real English tokens per row
  std::vector<int64_t> target_lengths;  // real target positions per row (the words and <eos>), or
                                        // empty when not known (Translator::loss then pads)
  int64_t target_tokens = 0;            // real target tokens (incl. <eos>), counted on the host
  // Per row, or empty: the seed of the row's randomized positions in training (the trainer keys each
  // row by the step and its pair, so every data-parallel rank and a resumed run draw the same);
  // an unkeyed batch draws from the model's generator.
  std::vector<uint64_t> row_keys;
  int64_t size() const { return source.size(0); }
};

// Word dropout on the teacher-forced Hindi inputs (Bowman et al., 2016): each input word after <sep>
// becomes <unk> with probability `rate`, drawn from a generator seeded by its row's key, so that the
// next word must be read from the English rather than from the word before. The targets are kept.
struct HiddenInputs {
  double rate = 0.0;
  std::vector<uint64_t> row_keys;  // one per row when rate > 0
};

// Builds a batch from pairs[indices]. Sentences longer than the layout throw with file:line.
Batch make_batch(const std::vector<SentencePair>& pairs, const std::vector<size_t>& indices, const Vocab& english,
                 const Vocab& hindi, const Layout& layout, Device device = Device::cpu(),
                 const HiddenInputs& hidden = {});

// Indices 0..n-1 shuffled by `gen` (Fisher-Yates).
std::vector<size_t> shuffled_indices(size_t n, Generator& gen);

}  // namespace qkv::data
