// tests/fuzz/fuzz_dataset.cpp — libFuzzer harness for the dataset loader: a split's bytes through
// line parsing (UTF-8, tabs, tokenising, the length limit), vocabularies and a batch, as qkv train
// reads them. Any input must end in a value or a std::exception.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "data/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const std::vector<qkv::data::SentencePair> pairs = qkv::data::parse_pairs(in, "fuzz.tsv");
    std::vector<std::vector<std::string>> english, hindi;
    qkv::data::Layout layout;
    for (const auto& p : pairs) {
      english.push_back(p.english);
      hindi.push_back(p.hindi);
      layout.max_source = std::max<int64_t>(layout.max_source, static_cast<int64_t>(p.english.size()));
      layout.max_target = std::max<int64_t>(layout.max_target, static_cast<int64_t>(p.hindi.size()) + 1);
    }
    const qkv::data::Vocab en = qkv::data::Vocab::build(english), hi = qkv::data::Vocab::build(hindi);
    std::vector<size_t> first;
    for (size_t i = 0; i < pairs.size() && i < 8; ++i) first.push_back(i);
    qkv::data::make_batch(pairs, first, en, hi, layout);
  } catch (const std::exception&) {}
  return 0;
}
