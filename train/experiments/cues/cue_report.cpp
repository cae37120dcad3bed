// train/experiments/cues/cue_report.cpp — the cue attention and knockout tables of one or more checkpoints'
// cue reports, as `qkv cues` and the demo print them.
#include "train/experiments/cues/cue_report.h"

#include <fmt/format.h>

namespace qkv::app {

std::string cue_tables(const std::vector<CueResult>& results) {
  std::string table =
      fmt::format("{:<8} {:>5} {:>9} {:>9} {:>10}\n", "mode", "layer", "cue peak", "others", "cue above");
  for (const CueResult& r : results)
    for (const models::CueLayer& l : r.report.layers)
      table += fmt::format("{:<8} {:>5} {:>9.3f} {:>9.3f} {:>9.1f}%\n", r.mode, l.layer + 1, l.cue_mean,
                           l.baseline_mean, 100 * l.cue_above_fraction);
  table += fmt::format("\n{:<8} {:>7} {:>12} {:>15} {:>14} {:>17} {:>19} {:>22}  {}\n", "mode", "trials", "cue KO flip",
                       "random KO flip", "cue KO change", "random KO change", "cue KO flip, all q",
                       "random KO flip, all q", "checkpoint");
  for (const CueResult& r : results) {
    const models::CueReport& k = r.report;
    if (k.trials == 0) {  // no rate was measured: say so rather than print 0.0%, which reads as "no effect"
      table += fmt::format("{:<8} {:>7}  no trials: no sentence kept its reading, so nothing was knocked out  {}\n",
                           r.mode, 0, r.checkpoint);
      continue;
    }
    table += fmt::format("{:<8} {:>7} {:>11.1f}% {:>14.1f}% {:>13.1f}% {:>16.1f}% {:>18.1f}% {:>21.1f}%  {}\n", r.mode,
                         k.trials, 100 * k.cue_flip_rate(), 100 * k.random_flip_rate(),
                         100 * k.rate(k.cue_changes, k.trials), 100 * k.rate(k.random_changes, k.trials),
                         100 * k.cue_flip_rate_all_queries(), 100 * k.random_flip_rate_all_queries(), r.checkpoint);
  }
  return table;
}

}  // namespace qkv::app
