// framework/cpu/cpu_attention.h — the CPU backend's fused attention kernels (cpu_attention.cpp).
// Internal to framework/cpu/.
#pragma once

#include "../backend.h"

namespace qkv::cpu {

void attention_forward(DType dtype, const AttentionShape& shape, const void* q, const void* k, const void* v, void* out,
                       void* lse);
void attention_backward(DType dtype, const AttentionShape& shape, const void* q, const void* k, const void* v,
                        const void* out, const void* d_out, const void* lse, void* d_q, void* d_k, void* d_v);

}  // namespace qkv::cpu
