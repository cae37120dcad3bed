// train/inspect.cpp — the inspection commands: attend, demo and scaling.
#include "commands.h"

namespace qkv::app {

void register_inspection(CLI::App&) {}

}  // namespace qkv::app
