// tests/gpu/emu/cuda_emu.h — force-included into the translated CUDA sources (as nvcc force-includes
// cuda_runtime.h): CUDA's device-side language for g++, the kernel launcher, and the declarations
// of the CUDA runtime and cuBLAS subset that emu_runtime.cpp and emu_cublas.cpp implement.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>

// ---- qualifiers: everything is host code here ----
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// __shared__ declarations are rewritten by translate.py into per-block storage (see shared_block).

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

// ---- CUDA runtime subset ----
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchFailure = 719,
};
using cudaError = cudaError_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
};
struct CUstream_st;
using cudaStream_t = CUstream_st*;
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int major;
  int minor;
  int multiProcessorCount;
};

cudaError_t cudaMalloc(void** ptr, size_t size);
template <typename T>
inline cudaError_t cudaMalloc(T** ptr, size_t size) {
  return cudaMalloc(reinterpret_cast<void**>(ptr), size);
}
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* ptr, int value, size_t count);
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorName(cudaError_t error);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaDriverGetVersion(int* version);

// ---- cuBLAS subset ----
enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 };
enum cublasMath_t {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_TENSOR_OP_MATH = 1,
  CUBLAS_PEDANTIC_MATH = 2,
  CUBLAS_TF32_TENSOR_OP_MATH = 3
};
enum cublasAtomicsMode_t { CUBLAS_ATOMICS_NOT_ALLOWED = 0, CUBLAS_ATOMICS_ALLOWED = 1 };
struct cublasContext;
using cublasHandle_t = cublasContext*;

cublasStatus_t cublasCreate(cublasHandle_t* handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode);
const char* cublasGetStatusName(cublasStatus_t status);
const char* cublasGetStatusString(cublasStatus_t status);
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float* alpha, const float* A, int lda,
                                         long long strideA, const float* B, int ldb, long long strideB,
                                         const float* beta, float* C, int ldc, long long strideC, int batchCount);
cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const double* alpha, const double* A, int lda,
                                         long long strideA, const double* B, int ldb, long long strideB,
                                         const double* beta, double* C, int ldc, long long strideC, int batchCount);

// ---- the emulated device (emu_runtime.cpp) ----
namespace qkv_emu {

// The calling GPU thread's coordinates (one OS thread runs every GPU thread of a launch, as fibers).
inline thread_local uint3 thread_idx, block_idx;
inline thread_local dim3 block_dim, grid_dim;

// Runs thread_fn(ctx) once per GPU thread of grid x block, block after block; records a launch
// error (cudaGetLastError) for a bad configuration and a fault (next synchronising call) when a
// block deadlocks at a barrier or shuffle.
void run_grid(const char* kernel, dim3 grid, dim3 block, void (*thread_fn)(void*), void* ctx);
// A kernel argument that is a pointer must be null or point into a live cudaMalloc block.
void check_kernel_pointer(const char* kernel, int arg, const void* p);
// Blocks the calling GPU thread until every thread of its block has arrived.
void syncthreads();
// Warp exchange: every lane of `mask` (all 32 lanes are required) passes `bits` (size bytes) and
// receives lane (lane ^ lane_mask)'s.
uint64_t shfl_xor(unsigned mask, uint64_t bits, int size, int lane_mask, int width);
// Called by each GPU thread at a __shared__ declaration: the first call in a block fills the
// storage with 0xff bytes (NaN, -1), as shared memory holds garbage when a block starts.
void shared_block(void* storage, size_t bytes);

// Shared with emu_cublas.cpp: the bytes from p to the end of the cudaMalloc block holding p (0 when
// p is not device memory); a diagnostic line on stderr ("qkv_emu: ..."); the time of a call for
// QKV_EMU_PROFILE.
size_t device_bytes_from(const void* p);
[[gnu::format(printf, 1, 2)]] void report(const char* format, ...);
void profile_add(const char* name, double seconds, uint64_t blocks, uint64_t threads);

template <typename A>
void check_arg(const char* kernel, int arg, const A& a) {
  if constexpr (std::is_pointer_v<A>) check_kernel_pointer(kernel, arg, static_cast<const void*>(a));
}

// kernel<<<grid, block>>>(args...) becomes launch("kernel", grid, block, [](auto... a) { kernel(a...); },
// args...): the arguments are evaluated once, on the host, and every GPU thread gets its own copy.
template <typename Fn, typename... Args>
void launch(const char* kernel, dim3 grid, dim3 block, Fn fn, Args... args) {
  int k = 0;
  (check_arg(kernel, k++, args), ...);
  struct Ctx {
    Fn fn;
    std::tuple<Args...> args;
  } ctx{fn, std::tuple<Args...>(args...)};
  // fn takes its parameters by value: each GPU thread works on its own copies.
  run_grid(
      kernel, grid, block, [](void* p) { std::apply(static_cast<Ctx*>(p)->fn, static_cast<Ctx*>(p)->args); }, &ctx);
}

template <typename A>
void shared_array(A& storage) {
  static_assert(std::is_array_v<A>);
  shared_block(static_cast<void*>(&storage), sizeof(A));
}

}  // namespace qkv_emu

#define threadIdx (::qkv_emu::thread_idx)
#define blockIdx (::qkv_emu::block_idx)
#define blockDim (::qkv_emu::block_dim)
#define gridDim (::qkv_emu::grid_dim)

inline void __syncthreads() { ::qkv_emu::syncthreads(); }

template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "shuffle of an unsupported type");
  uint64_t bits = 0;
  std::memcpy(&bits, &var, sizeof(T));
  bits = ::qkv_emu::shfl_xor(mask, bits, static_cast<int>(sizeof(T)), lane_mask, width);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}
