// train/scaling.cpp — `qkv scaling`: the seed's sqrt(d_k) section reproduced with qkv (placeholder).
#include "commands.h"

namespace qkv::app {

void register_scaling(CLI::App&) {}

}  // namespace qkv::app
