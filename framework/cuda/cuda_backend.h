// framework/cuda/cuda_backend.h — the CUDA backend's class: its state and one override per line of
// backend_primitives.def, defined in cuda_backend.cu (device, memory) and cuda_kernels.cu (the
// kernels and cuBLAS). Internal to framework/cuda/: included only by the .cu files.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "framework/backend.h"
#include "framework/block_cache.h"
#include "framework/cuda/cuda_check.h"

namespace qkv::cuda {

// The first bad index found on the device, kept until the host reads it (site 0: none).
struct IndexError {
  int64_t site;
  int64_t value;
};

// One device. All work runs on the default stream: a primitive queues its kernels and returns
// without waiting (copy_to_host and synchronize wait).
class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index);
  // Never destroyed (the backend lives for the whole process; see make_cuda_backend).

  std::string name() const override;

#define QKV_PRIMITIVE(result, name, parameters) result name parameters override;
#include "framework/backend_primitives.def"

 private:
  // Makes this backend's device current for the calling thread (cheap when it already is).
  void activate() const;
  // The number (from 1) that the device-side IndexError uses for check's what and range.
  int64_t site_of(const IndexCheck& check);
  // Called after every wait for the device: throws the first recorded bad index, once.
  void raise_pending_index_error();

  int index_;
  BlockCache memory_;  // device memory (cuda_backend.cu)
  cublasHandle_t cublas_ = nullptr;
  // The device-side record of the first bad index (check_indices), and the host-side texts of
  // each check site it can name: site k is sites_[k - 1].
  IndexError* index_error_ = nullptr;
  std::vector<IndexCheck> sites_;
  std::mutex sites_mutex_;
};

}  // namespace qkv::cuda
