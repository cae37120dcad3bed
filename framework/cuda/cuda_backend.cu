// framework/cuda/cuda_backend.cu — the CUDA backend's device and memory (a caching allocator, the
// copies, the deferred index error); its kernels and cuBLAS gemm are in cuda_kernels.cu. It registers
// its factory with backend_for at static-initialisation time but calls no CUDA API until a cuda
// device is used.
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "framework/backend.h"
#include "framework/block_cache.h"
#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/cuda_check.h"
#include "framework/cuda/cuda_info.h"

namespace qkv {

namespace {

std::string device_name(int index) { return "cuda:" + std::to_string(index); }

// Device memory for the shared block cache (framework/block_cache.h): nullptr when cudaMalloc is
// out of memory (the cache then frees what it holds and tries once more).
BlockCache::Source device_memory() {
  return {[](size_t size) -> void* {
            void* p = nullptr;
            const cudaError_t err = cudaMalloc(&p, size);
            if (err == cudaErrorMemoryAllocation) {
              (void)cudaGetLastError();
              return nullptr;
            }
            if (err != cudaSuccess) cuda::throw_cuda_error(err, "cudaMalloc(&p, size)", __FILE__, __LINE__);
            return p;
          },
          [](void* p) { (void)cudaFree(p); }};  // best effort: also runs when out of memory
}

}  // namespace

namespace cuda {

// Blocks are rounded up (512 B below 1 MiB, 128 KiB above) and kept when released, up to the
// largest working set seen, so a training loop's repeated shapes never reach cudaMalloc again.
// Reusing a block is safe without synchronisation because all work runs on the default stream.
CudaBackend::CudaBackend(int index)
    : index_(index), memory_(device_memory(), /*small_step=*/512, /*large_step=*/size_t{1} << 17,
                             /*cache_limit=*/SIZE_MAX) {
  activate();
  QKV_CUBLAS_CHECK(cublasCreate(&cublas_));
  QKV_CUBLAS_CHECK(cublasSetStream(cublas_, 0));
  // Plain IEEE float32 gemm (no TF32), so float32 results track the CPU's.
  QKV_CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
  // No atomics inside cuBLAS: gemm results are bit-for-bit reproducible run to run.
  QKV_CUBLAS_CHECK(cublasSetAtomicsMode(cublas_, CUBLAS_ATOMICS_NOT_ALLOWED));
  index_error_ = static_cast<IndexError*>(allocate(sizeof(IndexError)));
  QKV_CUDA_CHECK(cudaMemset(index_error_, 0, sizeof(IndexError)));
}

std::string CudaBackend::name() const { return device_name(index_); }

// ---- memory ----
void* CudaBackend::allocate(size_t nbytes) {
  activate();
  void* p = memory_.allocate(nbytes);
  if (!p) {
    char message[160];
    std::snprintf(message, sizeof(message), "%s: out of memory allocating %zu bytes (%.1f MiB)",
                  device_name(index_).c_str(), nbytes, static_cast<double>(nbytes) / (1024.0 * 1024.0));
    throw std::runtime_error(message);
  }
  return p;
}

void CudaBackend::release(void* ptr) { memory_.release(ptr); }

void CudaBackend::copy_to_host(void* host_dst, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  activate();
  QKV_CUDA_CHECK(cudaMemcpy(host_dst, src, nbytes, cudaMemcpyDeviceToHost));
  raise_pending_index_error();
}

void CudaBackend::copy_from_host(void* dst, const void* host_src, size_t nbytes) {
  if (nbytes == 0) return;
  activate();
  // From pageable memory the driver stages the source before returning, so the caller may
  // reuse it at once; unlike cudaMemcpy this need not wait for the work already queued.
  QKV_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, nbytes, cudaMemcpyHostToDevice, 0));
}

void CudaBackend::copy(void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0 || dst == src) return;
  activate();
  const char* d = static_cast<const char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (d < s + nbytes && s < d + nbytes) {  // overlapping (memmove semantics): go through a temporary
    void* tmp = allocate(nbytes);
    QKV_CUDA_CHECK(cudaMemcpyAsync(tmp, src, nbytes, cudaMemcpyDeviceToDevice, 0));
    QKV_CUDA_CHECK(cudaMemcpyAsync(dst, tmp, nbytes, cudaMemcpyDeviceToDevice, 0));
    release(tmp);
    return;
  }
  QKV_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, 0));
}

void CudaBackend::synchronize() {
  activate();
  QKV_CUDA_CHECK(cudaDeviceSynchronize());
  raise_pending_index_error();
}

void CudaBackend::activate() const {
  thread_local int current = -1;
  if (current == index_) return;
  QKV_CUDA_CHECK(cudaSetDevice(index_));
  current = index_;
}

// ---- the deferred index error (check_indices) ----
int64_t CudaBackend::site_of(const IndexCheck& check) {
  std::lock_guard<std::mutex> lock(sites_mutex_);
  for (size_t k = 0; k < sites_.size(); ++k)
    if (sites_[k].what == check.what && sites_[k].range == check.range) return static_cast<int64_t>(k) + 1;
  sites_.push_back(check);
  return static_cast<int64_t>(sites_.size());
}

void CudaBackend::raise_pending_index_error() {
  IndexError error{};
  QKV_CUDA_CHECK(cudaMemcpy(&error, index_error_, sizeof(error), cudaMemcpyDeviceToHost));
  if (error.site == 0) return;
  QKV_CUDA_CHECK(cudaMemset(index_error_, 0, sizeof(IndexError)));
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

}  // namespace cuda

namespace {

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
    throw std::runtime_error(
        "no CUDA device available (cudaErrorNoDevice: no CUDA-capable device is detected): "
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
  return new cuda::CudaBackend(index);
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
