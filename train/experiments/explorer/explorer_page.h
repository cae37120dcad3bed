// train/experiments/explorer/explorer_page.h — the offline explorer page (`qkv explore`, the demo): the
// checkpoints' weights, vocabularies and starting sentences inside tools/explorer/explorer.html.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace qkv::app {

// The demo's showcase sentences (name, sentence): the demo's pictures and the explorer's start.
const std::vector<std::pair<std::string, std::string>>& demo_showcase();
// How the explorer page stores the weights: the checkpoint's float32 (the page then translates
// exactly as `qkv translate`) or IEEE half floats (about half the size; a near tie between two
// words can then go the other way, see README).
enum class PageWeights { float32, float16 };
// Writes the explorer page (atomically) for these checkpoints, side by side in this order;
// no starting sentences means the demo's showcase. Every checkpoint is checked first.
void write_explorer_page(const std::vector<std::string>& checkpoints,
                         const std::vector<std::string>& starting_sentences, const std::string& out, bool quiet,
                         PageWeights weights = PageWeights::float32);

}  // namespace qkv::app
