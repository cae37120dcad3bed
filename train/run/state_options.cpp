// train/run/state_options.cpp — a run's options as its saved state holds them (JSON, every real number
// an exact hex float) and read back, each checked as the command line checks it.
#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "framework/bounded_json.h"
#include "framework/distributed.h"
#include "train/run/run_state.h"
#include "train/run/state_fields.h"

namespace qkv::app {

// A saved option as its state writes it: a real number as an exact hex float and the seed as
// decimal text (JSON numbers are doubles to many readers), a choice or device by name.
template <class T>
static nlohmann::ordered_json state_value(const T& value) {
  if constexpr (std::is_same_v<T, double>)
    return exact(value);
  else if constexpr (std::is_same_v<T, uint64_t>)
    return std::to_string(value);
  else if constexpr (ChoiceOption<T>)
    return Choices<T>::name(value);
  else if constexpr (std::is_same_v<T, Device>)
    return value.str();
  else
    return value;  // a whole number, a flag, text
}

std::string options_json(const TrainOptions& o) {
  nlohmann::ordered_json j;
  for_each_option([&](const OptionInfo& info, auto member) {
    if (info.saved()) j[info.key()] = state_value(o.*member);
  });
  j["ranks"] = o.data_parallel ? dist::ProcessGroup::world().size() : 1;
  return j.dump();
}

// One saved option into `value`, checked for type, spelling and the table's bounds as the command
// line checks it (before anything is sized from it).
template <class T>
static void read_state_value(const nlohmann::json& j, const OptionInfo& info, T& value) {
  const std::string key = info.key();
  const auto refused = [&](const std::string& text) {
    return std::runtime_error(fmt::format("training state: its {} {} is not one qkv train accepts", key, shown(text)));
  };
  if constexpr (std::is_same_v<T, double>) {  // exactly as exact() writes it, within the option's bounds
    const Bounds& b = info.bounds;
    value = parse_exact(j.at(key).get<std::string>(), key, b.low, std::min(b.high, std::numeric_limits<double>::max()));
    if (b.low_excluded && value == b.low)
      throw std::runtime_error(fmt::format("training state: its {} is {}; it must be {}", key, value,
                                           b.low == 0 ? "positive" : "> " + fmt::format("{}", b.low)));
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    const std::string text = j.at(key).get<std::string>();
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || std::to_string(value) != text)
      throw std::runtime_error(
          fmt::format("training state: its {} {} is not an integer in [0, 2^64)", key, shown(text)));
  } else if constexpr (ChoiceOption<T>) {
    const std::string text = j.at(key).get<std::string>();
    const std::optional<T> choice = parse_choice<T>(text);
    if (!choice) throw refused(text);
    value = *choice;
  } else if constexpr (std::is_same_v<T, Device>) {
    const std::string text = j.at(key).get<std::string>();
    try {
      value = Device::parse(text);
    } catch (const std::exception&) { throw refused(text); }
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    value = j.at(key).get<T>();
    const auto low = static_cast<int64_t>(info.bounds.low), high = static_cast<int64_t>(info.bounds.high);
    if (value < low || value > high)
      throw std::runtime_error(fmt::format("training state: {} {} is outside [{}, {}]", key, value, low, high));
  } else {
    value = j.at(key).get<T>();  // a flag, text
  }
}

TrainOptions options_from_json(const std::string& text, const TrainOptions& current) {
  TrainOptions o = current;  // out_dir, threads, quiet and the flags of this invocation stay
  try {
    const nlohmann::json j = parse_bounded_json(text, {.max_depth = 1, .max_values = 64});  // one flat object
    if (!j.is_object()) throw std::runtime_error("not a JSON object");
    for_each_option([&](const OptionInfo& info, auto member) {
      if (!info.saved()) return;
      if (info.kind == OptionKind::LaterSetting && !j.contains(info.key()))
        o.*member = TrainOptions{}.*member;
      else
        read_state_value(j, info, o.*member);
    });
    const int64_t ranks = j.contains("ranks") ? j.at("ranks").get<int64_t>() : 1;
    const int64_t now = current.data_parallel ? dist::ProcessGroup::world().size() : 1;
    if (ranks != now)
      throw std::runtime_error(
          fmt::format("the run was saved by {} rank{}{} and is resumed with {}; resume it with the same number{}",
                      ranks, ranks == 1 ? "" : "s", ranks == 1 ? " (no --data-parallel)" : "", now,
                      ranks > 1 ? fmt::format(" (mpirun -np {} ... --data-parallel)", ranks)
                                : std::string(" (without --data-parallel)")));
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (what.rfind("the run was saved by", 0) == 0 || what.rfind("training state: ", 0) == 0) throw;
    throw std::runtime_error("training state: its options are unreadable: " + what);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("training state: its options are unreadable: ") + e.what());
  }
  return o;
}

}  // namespace qkv::app
