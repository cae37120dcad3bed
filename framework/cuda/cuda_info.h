// framework/cuda/cuda_info.h — questions about the CUDA devices, answerable without nvcc.
// Implemented in cuda_backend.cu, so these exist only when qkv is built with CUDA: wrap every
// use in #ifdef QKV_WITH_CUDA (the Makefile defines it exactly when framework/cuda/ is compiled).
#pragma once

#include <string>

namespace qkv {

// True when at least one CUDA device can be used. Otherwise false, and *why (when given) says
// why, e.g. "no CUDA device available (cudaErrorNoDevice: no CUDA-capable device is detected)".
// Touches the CUDA runtime (it initialises the driver), but never allocates device memory.
bool cuda_available(std::string* why = nullptr);

// The number of CUDA devices; throws the same clear error as backend_for when there is none.
int cuda_device_count();

// One line about device `index`: name, compute capability, memory, SMs, runtime and driver
// versions. Throws the same clear errors as backend_for(Device::cuda(index)).
std::string cuda_device_summary(int index = 0);

// The card's peak float32 (non-tensor-core) throughput in TFLOP/s: SMs x FP32 lanes per SM x
// 2 (fused multiply-add) x boost clock. Lanes per SM come from the compute capability.
double cuda_peak_fp32_tflops(int index = 0);

}  // namespace qkv
