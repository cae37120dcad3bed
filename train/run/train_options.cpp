// train/run/train_options.cpp — the checks made from the option table (see train_options.h).
#include "train/run/train_options.h"

#include <fmt/format.h>

#include <stdexcept>
#include <type_traits>

namespace qkv::app {

std::string bounds_text(const Bounds& b, bool whole) {
  if (whole)
    return fmt::format("a whole number from {} to {}", static_cast<int64_t>(b.low), static_cast<int64_t>(b.high));
  if (b.high == std::numeric_limits<double>::infinity())
    return fmt::format("{} {}", b.low_excluded ? ">" : ">=", b.low);
  return fmt::format("from {} to {}", b.low, b.high);
}

void check_option_bounds(const TrainOptions& o) {
  for_each_option([&](const OptionInfo& info, auto member) {
    using T = std::remove_cvref_t<decltype(o.*member)>;
    const T& value = o.*member;
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      if (!info.bounds.any() && !info.bounds.holds(static_cast<double>(value)))  // NaN holds nowhere
        throw std::runtime_error(
            fmt::format("{} must be {}, got {}", info.flag, bounds_text(info.bounds, std::is_integral_v<T>), value));
    } else if constexpr (ChoiceOption<T>) {
      if (!parse_choice<T>(Choices<T>::name(value)))
        throw std::runtime_error(fmt::format("{} must be one of {}, got {}", info.flag,
                                             fmt::join(choice_names<T>(), " | "), Choices<T>::name(value)));
    }
  });
}

}  // namespace qkv::app
