// models/memory_budget.cpp — the arithmetic of memory_budget.h, in doubles (a config can describe
// sizes whose byte counts overflow 64 bits), and the message in gigabytes.
#include "memory_budget.h"

#include <fmt/format.h>
#include <unistd.h>

#include <stdexcept>

namespace qkv::models {

uint64_t machine_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) : 0;
}

static std::string gigabytes(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

void check_training_fits(const TranslatorConfig& config, int value_bytes, const std::string& whose) {
  const double machine = static_cast<double>(machine_memory_bytes());
  const double parameters = static_cast<double>(config.parameter_count()), needed = 4.0 * parameters * value_bytes;
  if (machine > 0 && needed > machine)
    throw std::runtime_error(fmt::format(
        "{}: a model of {:.3g} parameters (d_model {}, d_ff {}, {} layers) needs {} to train (weights, gradients and "
        "two AdamW moments), more than this machine's {}",
        whose, parameters, config.d_model, config.d_ff, config.layers, gigabytes(needed), gigabytes(machine)));
}

void check_attention_maps_fit(const TranslatorConfig& config, const std::string& whose) {
  const double machine = static_cast<double>(machine_memory_bytes());
  const double positions =
      static_cast<double>(config.layout.max_source) + static_cast<double>(config.layout.max_target);
  const double needed = (static_cast<double>(config.layers) + 4.0) * positions * positions * 4.0;
  if (machine > 0 && needed > machine / 2)
    throw std::runtime_error(fmt::format(
        "{}: this checkpoint's layout of {:.0f} positions (max_source {} + max_target {}) needs {} for one sentence's "
        "attention maps ({} layer{}), more than half this machine's {}",
        whose, positions, config.layout.max_source, config.layout.max_target, gigabytes(needed), config.layers,
        config.layers == 1 ? "" : "s", gigabytes(machine)));
}

}  // namespace qkv::models
