// framework/cuda/cuda_kernels.h — host-side launchers for the CUDA backend's kernels
// (cuda_kernels.cu). Everything runs on the default stream and returns without waiting.
// Internal to framework/cuda/.
#pragma once

#include <cstdint>

#include "framework/backend.h"

namespace qkv::cuda {

constexpr int kMaxRank = 8;

// An index space (a shape) read through up to three stride sets, after dropping size-1 dims and
// merging dims that are contiguous in every set. Passed to kernels by value.
struct Walk {
  int rank = 0;
  int sets = 0;
  int64_t shape[kMaxRank] = {};
  int64_t stride[3][kMaxRank] = {};
};
// Throws when the collapsed rank is above kMaxRank (naming `what` and the shape).
Walk make_walk(const char* what, const Shape& shape, const Strides* s0, const Strides* s1 = nullptr,
               const Strides* s2 = nullptr);

void launch_fill(DType dtype, void* out, int64_t n, double value);
void launch_cast(DType from, const void* in, DType to, void* out, int64_t n);
void launch_unary(UnaryOp op, DType dtype, const void* in, void* out, int64_t n, double scalar);
// out (contiguous over the walk's shape) = a op b, a and b read through stride sets 0 and 1.
void launch_binary(BinaryOp op, DType dtype, const void* a, const void* b, void* out, const Walk& walk);
// out (contiguous) = keep != 0 ? in (contiguous) : value, keep read through stride set 0.
void launch_masked_fill(DType dtype, const void* in, const void* keep, double value, void* out,
                        const Walk& walk);
// out[set 1] = in[set 0], elements of elem_size (4 or 8) bytes.
void launch_strided_copy(size_t elem_size, const void* in, void* out, const Walk& walk);
void launch_reduce_sum(DType dtype, const void* in, const Shape& in_shape, void* out,
                   const Shape& out_shape);
void launch_max_along(DType dtype, const void* in, int64_t outer, int64_t n, int64_t inner,
                      void* out_values, int64_t* out_indices);
void launch_take_along(DType dtype, const void* x, int64_t outer, int64_t n, int64_t inner,
                       const int64_t* index, void* out);
void launch_put_along_add(DType dtype, void* x, int64_t outer, int64_t n, int64_t inner,
                          const int64_t* index, const void* values);
void launch_gather_rows(size_t elem_size, const void* table, int64_t width, const int64_t* index,
                        int64_t count, void* out);
void launch_scatter_add_rows(DType dtype, void* table, int64_t width, const int64_t* index,
                             int64_t count, const void* values);
// The first bad index found on the device, kept until the host reads it (site 0: none).
struct IndexError {
  int64_t site;
  int64_t value;
};
// Backend::check_indices on the device: writes safe (and valid, when not null) and records the
// first out-of-range entry in *error unless an earlier one is still pending. Does not wait.
void launch_check_indices(const int64_t* index, int64_t count, int64_t limit, bool has_ignore, int64_t ignore,
                          int64_t site, int64_t* safe, DType valid_dtype, void* valid, IndexError* error);
void launch_adam_update(DType dtype, void* param, const void* grad, void* exp_avg, void* exp_avg_sq, int64_t n,
                        const AdamStep& step);
void launch_softmax_rows(DType dtype, const void* in, void* out, int64_t rows, int64_t cols, bool log);
void launch_layer_norm_rows(DType dtype, const void* x, const void* weight, const void* bias, int64_t rows,
                            int64_t width, double eps, void* out, void* x_hat, void* rstd);
void launch_layer_norm_backward_rows(DType dtype, const void* g, const void* x_hat, const void* rstd,
                                     const void* weight, int64_t rows, int64_t width, void* d_x);
// C[b] *= beta for every b (beta == 0 writes zeros); batches run in order, so stride 0 repeats.
void launch_scale_batched(DType dtype, void* C, int64_t batch, int64_t count, int64_t stride, double beta);
// Backend::attention_forward / attention_backward; lengths is the device copy of s.key_lengths
// (or null), delta a device scratch of (batch, queries).
void launch_attention_forward(DType dtype, const AttentionShape& s, const int64_t* lengths, const void* q,
                              const void* k, const void* v, void* out, void* lse);
void launch_attention_backward(DType dtype, const AttentionShape& s, const int64_t* lengths, const void* q,
                               const void* k, const void* v, const void* out, const void* d_out, const void* lse,
                               void* delta, void* d_q, void* d_k, void* d_v);

}  // namespace qkv::cuda
