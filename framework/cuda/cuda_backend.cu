// framework/cuda/cuda_backend.cu — the CUDA backend: a caching device allocator, cuBLAS gemm and
// the kernels of cuda_kernels.cu, all on the default stream. It registers its factory with
// backend_for at static-initialisation time but calls no CUDA API until a cuda device is used.
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/backend.h"
#include "framework/block_cache.h"
#include "framework/cuda/cuda_check.h"
#include "framework/cuda/cuda_info.h"
#include "framework/cuda/cuda_kernels.h"

namespace qkv {

namespace {

std::string device_name(int index) { return "cuda:" + std::to_string(index); }

// Device memory through the shared block cache (framework/block_cache.h): blocks are rounded up
// (512 B below 1 MiB, 128 KiB above) and kept when released, up to the largest working set seen,
// so a training loop's repeated shapes never reach cudaMalloc again; on cudaMalloc failure the
// cache is freed and the call tried once more. Reusing a block is safe without synchronisation
// because all work runs on the default stream.
class CachingAllocator {
 public:
  explicit CachingAllocator(int device)
      : device_(device),
        cache_({[](size_t size) -> void* {
                  void* p = nullptr;
                  const cudaError_t err = cudaMalloc(&p, size);
                  if (err == cudaErrorMemoryAllocation) {
                    (void)cudaGetLastError();
                    return nullptr;
                  }
                  if (err != cudaSuccess) cuda::throw_cuda_error(err, "cudaMalloc(&p, size)", __FILE__, __LINE__);
                  return p;
                },
                [](void* p) { (void)cudaFree(p); }},  // best effort: also runs when out of memory
               /*small_step=*/512, /*large_step=*/size_t{1} << 17, /*cache_limit=*/SIZE_MAX) {}

  void* allocate(size_t nbytes) {
    void* p = cache_.allocate(nbytes);
    if (!p) {
      char message[160];
      std::snprintf(message, sizeof(message), "%s: out of memory allocating %zu bytes (%.1f MiB)",
                    device_name(device_).c_str(), nbytes, static_cast<double>(nbytes) / (1024.0 * 1024.0));
      throw std::runtime_error(message);
    }
    return p;
  }
  void release(void* p) { cache_.release(p); }

 private:
  int device_;
  BlockCache cache_;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index) : index_(index), allocator_(index) {
    activate();
    QKV_CUBLAS_CHECK(cublasCreate(&cublas_));
    QKV_CUBLAS_CHECK(cublasSetStream(cublas_, 0));
    // Plain IEEE float32 gemm (no TF32), so float32 results track the CPU's.
    QKV_CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
    // No atomics inside cuBLAS: gemm results are bit-for-bit reproducible run to run.
    QKV_CUBLAS_CHECK(cublasSetAtomicsMode(cublas_, CUBLAS_ATOMICS_NOT_ALLOWED));
    index_error_ = static_cast<cuda::IndexError*>(allocator_.allocate(sizeof(cuda::IndexError)));
    QKV_CUDA_CHECK(cudaMemset(index_error_, 0, sizeof(cuda::IndexError)));
  }
  // Never destroyed (the backend lives for the whole process; see make_cuda_backend).

  std::string name() const override { return device_name(index_); }

  // ---- memory ----
  void* allocate(size_t nbytes) override {
    activate();
    return allocator_.allocate(nbytes);
  }
  void release(void* ptr) override { allocator_.release(ptr); }

  void copy_to_host(void* host_dst, const void* src, size_t nbytes) override {
    if (nbytes == 0) return;
    activate();
    QKV_CUDA_CHECK(cudaMemcpy(host_dst, src, nbytes, cudaMemcpyDeviceToHost));
    raise_pending_index_error();
  }
  void copy_from_host(void* dst, const void* host_src, size_t nbytes) override {
    if (nbytes == 0) return;
    activate();
    // From pageable memory the driver stages the source before returning, so the caller may
    // reuse it at once; unlike cudaMemcpy this need not wait for the work already queued.
    QKV_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, nbytes, cudaMemcpyHostToDevice, 0));
  }
  void copy(void* dst, const void* src, size_t nbytes) override {
    if (nbytes == 0 || dst == src) return;
    activate();
    const char* d = static_cast<const char*>(dst);
    const char* s = static_cast<const char*>(src);
    if (d < s + nbytes && s < d + nbytes) {  // overlapping (memmove semantics): go through a temporary
      void* tmp = allocator_.allocate(nbytes);
      QKV_CUDA_CHECK(cudaMemcpyAsync(tmp, src, nbytes, cudaMemcpyDeviceToDevice, 0));
      QKV_CUDA_CHECK(cudaMemcpyAsync(dst, tmp, nbytes, cudaMemcpyDeviceToDevice, 0));
      allocator_.release(tmp);
      return;
    }
    QKV_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, 0));
  }
  void synchronize() override {
    activate();
    QKV_CUDA_CHECK(cudaDeviceSynchronize());
    raise_pending_index_error();
  }

  // ---- elementwise ----
  void fill(DType dtype, void* out, int64_t n, double value) override {
    activate();
    cuda::launch_fill(dtype, out, n, value);
  }
  void cast(DType from, const void* in, DType to, void* out, int64_t n) override {
    activate();
    cuda::launch_cast(from, in, to, out, n);
  }
  void unary(UnaryOp op, DType dtype, const void* in, void* out, int64_t n, double scalar) override {
    activate();
    cuda::launch_unary(op, dtype, in, out, n, scalar);
  }
  void binary(BinaryOp op, DType dtype, const void* a, const Strides& a_strides, const void* b,
              const Strides& b_strides, void* out, const Shape& out_shape) override {
    if (shape_numel(out_shape) == 0) return;
    activate();
    const Strides s_out = contiguous_strides(out_shape);
    const cuda::Walk walk = cuda::make_walk("binary", out_shape, &a_strides, &b_strides, &s_out);
    cuda::launch_binary(op, dtype, a, b, out, walk);
  }
  void masked_fill(DType dtype, const void* in, const void* keep, const Strides& keep_strides,
                   double value, void* out, const Shape& shape) override {
    if (shape_numel(shape) == 0) return;
    activate();
    const Strides s = contiguous_strides(shape);
    const cuda::Walk walk = cuda::make_walk("masked_fill", shape, &keep_strides, &s);
    cuda::launch_masked_fill(dtype, in, keep, value, out, walk);
  }
  void strided_copy(DType dtype, const void* in, const Strides& in_strides, void* out,
                    const Strides& out_strides, const Shape& shape) override {
    if (shape_numel(shape) == 0) return;
    activate();
    const cuda::Walk walk = cuda::make_walk("strided_copy", shape, &in_strides, &out_strides);
    cuda::launch_strided_copy(dtype_size(dtype), in, out, walk);
  }

  // ---- reductions ----
  void reduce_sum(DType dtype, const void* in, const Shape& in_shape, void* out, const Shape& out_shape) override {
    activate();
    cuda::launch_reduce_sum(dtype, in, in_shape, out, out_shape);
  }
  void max_along(DType dtype, const void* in, int64_t outer, int64_t n, int64_t inner,
                 void* out_values, int64_t* out_indices) override {
    activate();
    cuda::launch_max_along(dtype, in, outer, n, inner, out_values, out_indices);
  }

  // ---- indexing ----
  void take_along(DType dtype, const void* x, int64_t outer, int64_t n, int64_t inner,
                  const int64_t* index, void* out) override {
    activate();
    cuda::launch_take_along(dtype, x, outer, n, inner, index, out);
  }
  void put_along_add(DType dtype, void* x, int64_t outer, int64_t n, int64_t inner,
                     const int64_t* index, const void* values) override {
    activate();
    cuda::launch_put_along_add(dtype, x, outer, n, inner, index, values);
  }
  void gather_rows(DType dtype, const void* table, int64_t width, const int64_t* index, int64_t count,
                   void* out) override {
    activate();
    cuda::launch_gather_rows(dtype_size(dtype), table, width, index, count, out);
  }
  void scatter_add_rows(DType dtype, void* table, int64_t width, const int64_t* index, int64_t count,
                        const void* values) override {
    activate();
    cuda::launch_scatter_add_rows(dtype, table, width, index, count, values);
  }
  void check_indices(const IndexCheck& check, const int64_t* index, int64_t count, int64_t* safe,
                     DType valid_dtype, void* valid) override {
    activate();
    cuda::launch_check_indices(index, count, check.limit, check.has_ignore, check.ignore, site_of(check), safe,
                               valid_dtype, valid, index_error_);
  }

  void adam_update(DType dtype, void* param, const void* grad, void* exp_avg, void* exp_avg_sq, int64_t n,
                   const AdamStep& step) override {
    activate();
    cuda::launch_adam_update(dtype, param, grad, exp_avg, exp_avg_sq, n, step);
  }

  void softmax_rows(DType dtype, const void* in, void* out, int64_t rows, int64_t cols,
                    bool log) override {
    activate();
    cuda::launch_softmax_rows(dtype, in, out, rows, cols, log);
  }

  void layer_norm_rows(DType dtype, const void* x, const void* weight, const void* bias, int64_t rows,
                       int64_t width, double eps, void* out, void* x_hat, void* rstd) override {
    activate();
    cuda::launch_layer_norm_rows(dtype, x, weight, bias, rows, width, eps, out, x_hat, rstd);
  }

  void layer_norm_backward_rows(DType dtype, const void* g, const void* x_hat, const void* rstd,
                                const void* weight, int64_t rows, int64_t width, void* d_x) override {
    activate();
    cuda::launch_layer_norm_backward_rows(dtype, g, x_hat, rstd, weight, rows, width, d_x);
  }

  // The mask's key lengths travel to the device with each call (one small copy).
  void attention_forward(DType dtype, const AttentionShape& shape, const void* q, const void* k, const void* v,
                         void* out, void* lse) override {
    activate();
    DeviceLengths lengths(*this, shape.key_lengths);
    cuda::launch_attention_forward(dtype, shape, lengths.data, q, k, v, out, lse);
  }
  void attention_backward(DType dtype, const AttentionShape& shape, const void* q, const void* k, const void* v,
                          const void* out, const void* d_out, const void* lse, void* d_q, void* d_k,
                          void* d_v) override {
    activate();
    DeviceLengths lengths(*this, shape.key_lengths);
    void* delta = allocator_.allocate(static_cast<size_t>(std::max<int64_t>(shape.batch * shape.queries, 1)) *
                                      dtype_size(dtype));
    try {
      cuda::launch_attention_backward(dtype, shape, lengths.data, q, k, v, out, d_out, lse, delta, d_q, d_k, d_v);
    } catch (...) {
      allocator_.release(delta);
      throw;
    }
    allocator_.release(delta);
  }

  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: hand cuBLAS B first.
  void gemm_batched(DType dtype, bool transpose_a, bool transpose_b, int64_t batch, int64_t M,
                    int64_t N, int64_t K, double alpha, const void* A, int64_t stride_a, const void* B,
                    int64_t stride_b, double beta, void* C, int64_t stride_c) override {
    if (dtype == DType::I64) throw std::runtime_error("cuda backend: gemm does not support int64");
    if (batch <= 0 || M <= 0 || N <= 0) return;
    activate();
    if (K <= 0) {  // op(A) op(B) is empty: C = beta * C
      cuda::launch_scale_batched(dtype, C, batch, M * N, stride_c, beta);
      return;
    }
    const int64_t limit = 0x7fffffff;
    if (M > limit || N > limit || K > limit || batch > limit)
      throw std::runtime_error("cuda backend: gemm dimensions exceed cuBLAS's int range");
    // With a shared output (stride 0) the batches accumulate one after another, as on the CPU.
    const int64_t calls = stride_c == 0 ? batch : 1;
    const int64_t per_call = stride_c == 0 ? 1 : batch;
    const cublasOperation_t op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ldb = static_cast<int>(transpose_b ? K : N);
    const int lda = static_cast<int>(transpose_a ? M : K);
    const int ldc = static_cast<int>(N);
    const size_t elem = dtype_size(dtype);
    for (int64_t call = 0; call < calls; ++call) {
      const char* a = static_cast<const char*>(A) + call * stride_a * elem;
      const char* b = static_cast<const char*>(B) + call * stride_b * elem;
      const double beta_here = beta;  // the CPU applies beta at every batch entry too
      char* c = static_cast<char*>(C);
      if (dtype == DType::F32) {
        const float al = static_cast<float>(alpha), be = static_cast<float>(beta_here);
        QKV_CUBLAS_CHECK(cublasSgemmStridedBatched(
            cublas_, op_b, op_a, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &al,
            reinterpret_cast<const float*>(b), ldb, stride_b, reinterpret_cast<const float*>(a), lda, stride_a,
            &be, reinterpret_cast<float*>(c), ldc, stride_c, static_cast<int>(per_call)));
      } else {
        const double al = alpha, be = beta_here;
        QKV_CUBLAS_CHECK(cublasDgemmStridedBatched(
            cublas_, op_b, op_a, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &al,
            reinterpret_cast<const double*>(b), ldb, stride_b, reinterpret_cast<const double*>(a), lda,
            stride_a, &be, reinterpret_cast<double*>(c), ldc, stride_c, static_cast<int>(per_call)));
      }
    }
  }

 private:
  // A device copy of an attention mask's key lengths for one call (null when there are none).
  struct DeviceLengths {
    DeviceLengths(CudaBackend& owner, const std::vector<int64_t>& host) : backend(owner) {
      if (host.empty()) return;
      data = static_cast<int64_t*>(backend.allocator_.allocate(host.size() * sizeof(int64_t)));
      try {
        backend.copy_from_host(data, host.data(), host.size() * sizeof(int64_t));
      } catch (...) {
        backend.allocator_.release(data);
        throw;
      }
    }
    ~DeviceLengths() { backend.allocator_.release(data); }
    DeviceLengths(const DeviceLengths&) = delete;
    DeviceLengths& operator=(const DeviceLengths&) = delete;
    CudaBackend& backend;
    int64_t* data = nullptr;
  };

  // Makes this backend's device current for the calling thread (cheap when it already is).
  void activate() const {
    thread_local int current = -1;
    if (current == index_) return;
    QKV_CUDA_CHECK(cudaSetDevice(index_));
    current = index_;
  }

  int index_;
  CachingAllocator allocator_;
  cublasHandle_t cublas_ = nullptr;
  // The device-side record of the first bad index (check_indices), and the host-side texts of
  // each check site it can name: site k is sites_[k - 1].
  cuda::IndexError* index_error_ = nullptr;
  std::vector<IndexCheck> sites_;
  std::mutex sites_mutex_;

  int64_t site_of(const IndexCheck& check) {
    std::lock_guard<std::mutex> lock(sites_mutex_);
    for (size_t k = 0; k < sites_.size(); ++k)
      if (sites_[k].what == check.what && sites_[k].range == check.range) return static_cast<int64_t>(k) + 1;
    sites_.push_back(check);
    return static_cast<int64_t>(sites_.size());
  }

  // Called after every wait for the device: throws the first recorded bad index, once.
  void raise_pending_index_error() {
    cuda::IndexError error{};
    QKV_CUDA_CHECK(cudaMemcpy(&error, index_error_, sizeof(error), cudaMemcpyDeviceToHost));
    if (error.site == 0) return;
    QKV_CUDA_CHECK(cudaMemset(index_error_, 0, sizeof(cuda::IndexError)));
    std::string what = "index", range = "?";
    {
      std::lock_guard<std::mutex> lock(sites_mutex_);
      if (error.site >= 1 && error.site <= static_cast<int64_t>(sites_.size())) {
        what = sites_[error.site - 1].what;
        range = sites_[error.site - 1].range;
      }
    }
    throw std::runtime_error(what + " " + std::to_string(error.value) + " out of range for " + range + " (found on " +
                             device_name(index_) + ")");
  }
};

// Number of usable devices, or a clear reason why there are none.
int device_count_or_throw() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::runtime_error(std::string("no CUDA device available (") + cudaGetErrorName(err) + ": " +
                             cudaGetErrorString(err) + "): no usable CUDA GPU on this machine; use --device cpu");
  }
  if (count <= 0)
    throw std::runtime_error("no CUDA device available (cudaErrorNoDevice: no CUDA-capable device is detected): "
                             "no CUDA GPU on this machine; use --device cpu");
  return count;
}

void check_index(int index, int count) {
  if (index < 0 || index >= count)
    throw std::runtime_error(device_name(index) + " does not exist: " + std::to_string(count) +
                             " CUDA device(s) available");
}

// Called by backend_for (under its lock) the first time a cuda device is used; the backend is
// deliberately leaked so that tensors released during static destruction still find it.
Backend* make_cuda_backend(int index) {
  check_index(index, device_count_or_throw());
  return new CudaBackend(index);
}

// Only records the factory: no CUDA call happens at static-initialisation time.
struct Registrar {
  Registrar() { register_cuda_backend(&make_cuda_backend); }
};
const Registrar registrar;

}  // namespace

bool cuda_available(std::string* why) {
  try {
    device_count_or_throw();
    return true;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return false;
  }
}

int cuda_device_count() { return device_count_or_throw(); }

std::string cuda_device_summary(int index) {
  check_index(index, device_count_or_throw());
  cudaDeviceProp prop{};
  QKV_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  int runtime = 0, driver = 0;
  QKV_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  QKV_CUDA_CHECK(cudaDriverGetVersion(&driver));
  char line[512];
  std::snprintf(line, sizeof(line), "%s: %s (sm_%d%d, %.1f GiB, %d SMs), CUDA runtime %d.%d, driver %d.%d",
                device_name(index).c_str(), prop.name, prop.major, prop.minor,
                static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0), prop.multiProcessorCount,
                runtime / 1000, runtime % 1000 / 10, driver / 1000, driver % 1000 / 10);
  return line;
}

double cuda_peak_fp32_tflops(int index) {
  check_index(index, device_count_or_throw());
  int sms = 0, clock_khz = 0, major = 0, minor = 0;
  QKV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, index));
  QKV_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index));
  QKV_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index));
  QKV_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, index));
  // FP32 lanes per SM: 64 on sm_60, every sm_7x (V100, T4) and sm_80 (A100); 128 on the others
  // since sm_61 (sm_86/89, H100/H200's sm_90).
  const int lanes = (major == 7 || (major == 6 && minor == 0) || (major == 8 && minor == 0)) ? 64 : 128;
  return 2.0 * sms * lanes * (clock_khz * 1e3) / 1e12;
}

}  // namespace qkv
