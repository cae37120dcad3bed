// train/experiments/bench/bench.h — `qkv bench`'s measurements (bench.cpp) and where their figures go.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace qkv::app {

// Where bench's figures go: the text report (and RESULT lines for tools/bench_vs_pytorch.sh), or,
// with --format json, one JSON document at the end listing every measurement with its unit.
struct BenchOutput {
  bool json = false;
  nlohmann::ordered_json measurements = nlohmann::ordered_json::array();
  template <typename... Args>
  void say(fmt::format_string<Args...> format, Args&&... args) {
    if (!json) fmt::print(format, std::forward<Args>(args)...);
  }
  // One figure: what was measured, where (labels such as size, device, T, path), value and unit.
  void measure(const std::string& name, nlohmann::ordered_json labels, double value, const std::string& unit) {
    nlohmann::ordered_json m = {{"name", name}};
    for (auto& [key, label] : labels.items()) m[key] = label;
    m["value"] = value;
    m["unit"] = unit;
    measurements.push_back(std::move(m));
  }
};

// `qkv bench`'s options, as train/cli/bench.cpp reads them.
struct BenchOptions {
  std::vector<std::string> devices = {"cpu"}, positions;  // --device; --positions: the schemes beside absolute
  std::string only = "all", format = "text";              // --size; --format
  int threads = 0, steps = 20;
  std::vector<int64_t> lengths;  // --attention-length, and its head width (--attention-width)
  int64_t width = 64;
  bool data_parallel = false;
};

// Everything `qkv bench` measures with these options, into `out`: the attention op at `lengths`
// (when given), each positions scheme beside absolute (when given), data-parallel steps, or the
// full set (matmul overhead, training throughput at the sizes `only` names, cuBLAS gemm on a GPU).
void measure_all(BenchOutput& out, const BenchOptions& o);

}  // namespace qkv::app
