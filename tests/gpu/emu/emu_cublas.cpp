// tests/gpu/emu/emu_cublas.cpp — the cuBLAS subset the CUDA backend calls: handle set-up and
// {S,D}gemmStridedBatched as a naive column-major reference, per cuBLAS's documented semantics
// (op flags, leading dimensions, strides, beta == 0 never reading C), accumulating in T.
#include <algorithm>
#include <chrono>

#include "cuda_emu.h"

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  cublasAtomicsMode_t atomics = CUBLAS_ATOMICS_NOT_ALLOWED;
};

using qkv_emu::report;

namespace {

bool valid_op(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

// The element range [lo, hi] that `batch` column-major rows x cols matrices (leading dimension ld,
// `stride` apart) cover, relative to their base pointer.
struct Span {
  long long lo, hi;
};
Span span_of(long long rows, long long cols, long long ld, long long stride, long long batch) {
  const long long last = (batch - 1) * stride;
  return {std::min(0LL, last), std::max(0LL, last) + (cols - 1) * ld + rows - 1};
}

template <typename T>
bool inside_device(const char* api, const char* which, const T* base, Span s) {
  const size_t avail = qkv_emu::device_bytes_from(base);
  if (s.lo >= 0 && avail >= static_cast<size_t>(s.hi + 1) * sizeof(T)) return true;
  report("%s: %s (%p) spans elements [%lld, %lld], but its device allocation holds %zu elements from there", api, which,
         static_cast<const void*>(base), s.lo, s.hi, avail / sizeof(T));
  return false;
}

template <typename T>
bool overlap(const T* a, Span sa, const T* b, Span sb) {
  return a + sa.lo <= b + sb.hi && b + sb.lo <= a + sa.hi;
}

template <typename T>
cublasStatus_t gemm_strided_batched(const char* api, cublasHandle_t handle, cublasOperation_t transa,
                                    cublasOperation_t transb, int m, int n, int k, const T* alpha, const T* A, int lda,
                                    long long strideA, const T* B, int ldb, long long strideB, const T* beta, T* C,
                                    int ldc, long long strideC, int batchCount) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  // op(A) is m x k, op(B) is k x n, C is m x n; A is stored a_rows x a_cols, B b_rows x b_cols.
  const int a_rows = transa == CUBLAS_OP_N ? m : k, a_cols = transa == CUBLAS_OP_N ? k : m;
  const int b_rows = transb == CUBLAS_OP_N ? k : n, b_cols = transb == CUBLAS_OP_N ? n : k;
  if (!valid_op(transa) || !valid_op(transb) || m < 0 || n < 0 || k < 0 || batchCount < 0 ||
      lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) || ldc < std::max(1, m) || !alpha || !beta) {
    report("%s: invalid arguments: transa %d transb %d m %d n %d k %d lda %d ldb %d ldc %d batchCount %d", api, transa,
           transb, m, n, k, lda, ldb, ldc, batchCount);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (m == 0 || n == 0 || batchCount == 0) return CUBLAS_STATUS_SUCCESS;
  const auto start = std::chrono::steady_clock::now();
  const T al = *alpha, be = *beta;
  const bool reads_ab = k > 0 && al != T(0);
  const Span sa = span_of(a_rows, a_cols, lda, strideA, batchCount);
  const Span sb = span_of(b_rows, b_cols, ldb, strideB, batchCount);
  const Span sc = span_of(m, n, ldc, strideC, batchCount);
  if ((reads_ab && (!inside_device(api, "A", A, sa) || !inside_device(api, "B", B, sb))) ||
      !inside_device(api, "C", C, sc))
    return CUBLAS_STATUS_EXECUTION_FAILED;  // out-of-bounds access: an illegal address on a GPU
  const long long c_extent = static_cast<long long>(n - 1) * ldc + m;
  if (batchCount > 1 && (strideC < 0 ? -strideC : strideC) < c_extent) {
    report("%s: the %d output matrices overlap (strideC %lld < %lld): undefined behaviour", api, batchCount, strideC,
           c_extent);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (reads_ab && (overlap(C, sc, A, sa) || overlap(C, sc, B, sb))) {
    report("%s: C overlaps A or B: undefined behaviour", api);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  for (long long b = 0; b < batchCount; ++b) {
    const T* a = A + b * strideA;
    const T* bb = B + b * strideB;
    T* c = C + b * strideC;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        T acc = T(0);
        if (reads_ab)
          for (int l = 0; l < k; ++l) {
            const T x =
                transa == CUBLAS_OP_N ? a[i + static_cast<long long>(l) * lda] : a[l + static_cast<long long>(i) * lda];
            const T y = transb == CUBLAS_OP_N ? bb[l + static_cast<long long>(j) * ldb]
                                              : bb[j + static_cast<long long>(l) * ldb];
            acc += x * y;
          }
        T& out = c[i + static_cast<long long>(j) * ldc];
        out = be == T(0) ? al * acc : al * acc + be * out;  // beta == 0: C is not read (may hold NaN)
      }
  }
  qkv_emu::profile_add(api, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0, 0);
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (stream != nullptr) {
    report("cublasSetStream: only the default stream is emulated");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;  // every mode computes in plain IEEE arithmetic here
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->atomics = mode;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
  }
  return "unknown status";
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float* alpha, const float* A, int lda,
                                         long long strideA, const float* B, int ldb, long long strideB,
                                         const float* beta, float* C, int ldc, long long strideC, int batchCount) {
  return gemm_strided_batched("cublasSgemmStridedBatched", handle, transa, transb, m, n, k, alpha, A, lda, strideA, B,
                              ldb, strideB, beta, C, ldc, strideC, batchCount);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const double* alpha, const double* A, int lda,
                                         long long strideA, const double* B, int ldb, long long strideB,
                                         const double* beta, double* C, int ldc, long long strideC, int batchCount) {
  return gemm_strided_batched("cublasDgemmStridedBatched", handle, transa, transb, m, n, k, alpha, A, lda, strideA, B,
                              ldb, strideB, beta, C, ldc, strideC, batchCount);
}
