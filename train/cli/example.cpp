// train/cli/example.cpp — `qkv example`: the tutorial's running example (money bank grows) computed with qkv ops,
// printed as the tutorial lays out its tables.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "train/experiments/tutorial/tutorial_example.h"
#include "train/cli/commands.h"

namespace qkv::app {

// Prints a (rows, cols) tensor as a labelled table, the way the tutorial lays its tables out.
static void print_table(const std::string& title, const Tensor& t, const std::vector<std::string>& rows,
                        const std::vector<std::string>& cols, int decimals) {
  fmt::print("{}\n", title);
  const std::vector<double> v = t.to_vector();
  const int64_t n_cols = t.size(1);
  fmt::print("{:>8}", "");
  for (const auto& c : cols) fmt::print("  {:>7}", c);
  fmt::print("\n");
  for (size_t r = 0; r < rows.size(); ++r) {
    fmt::print("{:>8}  [", rows[r]);
    for (int64_t c = 0; c < n_cols; ++c) fmt::print("{}{:>7.{}f}", c ? "  " : "", v[r * n_cols + c], decimals);
    fmt::print(" ]\n");
  }
  fmt::print("\n");
}

void register_example(CLI::App& app) {
  auto* cmd = app.add_subcommand("example", "compute the tutorial's running example (money bank grows) with qkv ops");
  auto threads = std::make_shared<int>(0);
  add_threads_option(cmd, *threads);
  cmd->callback([threads] {
    apply_threads(*threads);
    const models::TutorialExample ex = models::run_tutorial_example();
    const std::vector<std::string> dims = {"d0", "d1", "d2", "d3"};
    print_table("Static embeddings E (T=3, d=4):", ex.E, ex.tokens, dims, 0);
    print_table("Step 1: scores S = E E^T", ex.S, ex.tokens, ex.tokens, 0);
    print_table("Step 2: scaled S / sqrt(4)", ex.S_scaled, ex.tokens, ex.tokens, 1);
    print_table("Step 3: weights W = softmax(S / sqrt(4)) by row", ex.W, ex.tokens, ex.tokens, 4);
    std::vector<std::string> ys;
    for (const auto& t : ex.tokens) ys.push_back("y_" + t);
    print_table("Step 4: contextual embeddings Y = W E", ex.Y, ys, dims, 4);
    fmt::print("cos(bank, money): {:.4f} -> {:.4f}   (static -> after self-attention)\n", ex.cos_before, ex.cos_after);
  });
}

}  // namespace qkv::app
