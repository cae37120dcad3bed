// tests/gpu/emu/include/cublas_v2.h — the emulator stands in for the cuBLAS header.
#pragma once
#include "../cuda_emu.h"
