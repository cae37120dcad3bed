// train/cli/help_format.cpp — how `qkv COMMAND --help` lists an option: `--layers N  stacked blocks,
// 1 to 16 [5]`, a short type (N, X, TEXT or the choices) and the default in brackets at the end.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "framework/text_util.h"
#include "train/cli/commands.h"

namespace qkv::app {

namespace {

class HelpFormatter : public CLI::Formatter {
 public:
  // " N", " X", " TEXT" or " {learned,static,none}"; " ..." after an option that takes a list.
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    if (opt->get_type_size() == 0 || opt->get_type_name().empty()) return "";  // a flag
    std::string out = " " + short_type(opt->get_type_name());
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
    if (opt->get_required()) out += " (required)";
    return out;
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    if (opt->get_type_size() != 0 && !opt->get_default_str().empty()) desc += " [" + opt->get_default_str() + "]";
    return desc;
  }

 private:
  // CLI11's type names are "INT", "FLOAT", "TEXT", "UINT", each followed by its validators'
  // descriptions after colons; the choices of a set ("{a,b}") say the most, the base type the rest.
  static std::string short_type(const std::string& full) {
    std::string base;
    for (const std::string& part : split(full, ':')) {
      if (!part.empty() && part.front() == '{') return part;
      if (base.empty()) base = part;
    }
    if (base == "INT" || base == "UINT") return "N";
    if (base == "FLOAT") return "X";
    return base.empty() ? "VALUE" : base;
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() { return std::make_shared<HelpFormatter>(); }

}  // namespace qkv::app
