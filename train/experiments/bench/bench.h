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

// Everything `qkv bench` measures with these options, into `out`: the attention op at `lengths`
// (when given), each positions scheme beside absolute (when given), data-parallel steps, or the
// full set (matmul overhead, the fused LayerNorm, training throughput at the sizes `only` names).
void measure_all(BenchOutput& out, const std::vector<std::string>& devices, int steps, const std::string& only,
                 const std::vector<int64_t>& lengths, int64_t width, bool data_parallel,
                 const std::vector<std::string>& positions);

}  // namespace qkv::app
