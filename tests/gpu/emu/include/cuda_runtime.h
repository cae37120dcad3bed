// tests/gpu/emu/include/cuda_runtime.h — the emulator stands in for the CUDA runtime header.
#pragma once
#include "../cuda_emu.h"
