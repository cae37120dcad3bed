// framework/cuda/cuda_check.h — error checking for every CUDA runtime and cuBLAS call in the CUDA
// backend: a failure throws std::runtime_error naming file:line, the expression and the error.
// Included only by the .cu files (needs the CUDA headers).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace qkv::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                           " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                           " failed: " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

}  // namespace qkv::cuda

#define QKV_CUDA_CHECK(expr)                                                                                   \
  do {                                                                                                         \
    const cudaError_t qkv_cuda_err_ = (expr);                                                                  \
    if (qkv_cuda_err_ != cudaSuccess) ::qkv::cuda::throw_cuda_error(qkv_cuda_err_, #expr, __FILE__, __LINE__); \
  } while (0)

#define QKV_CUBLAS_CHECK(expr)                                                        \
  do {                                                                                \
    const cublasStatus_t qkv_cublas_status_ = (expr);                                 \
    if (qkv_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                  \
      ::qkv::cuda::throw_cublas_error(qkv_cublas_status_, #expr, __FILE__, __LINE__); \
  } while (0)

// Checks the launch of the kernel just issued (configuration errors surface here; faults inside
// the kernel surface at the next synchronising call).
#define QKV_CUDA_CHECK_LAUNCH() QKV_CUDA_CHECK(cudaGetLastError())
