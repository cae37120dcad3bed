// framework/distributed.cpp — the data-parallel process group: MPI for start-up, gathers and CPU
// all-reduces; NCCL (bootstrapped over MPI, as llm.c does) for all-reduces of CUDA tensors.
#include "distributed.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>

#ifdef QKV_WITH_MPI
#include <mpi.h>
#endif
#ifdef QKV_WITH_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#include "autograd.h"
#include "backend.h"
#include "ops.h"

namespace qkv::dist {

bool built_with_mpi() {
#ifdef QKV_WITH_MPI
  return true;
#else
  return false;
#endif
}

bool built_with_nccl() {
#ifdef QKV_WITH_NCCL
  return true;
#else
  return false;
#endif
}

int launched_process_count() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* value = std::getenv(name);
    if (!value || !*value) continue;
    char* end = nullptr;
    const long count = std::strtol(value, &end, 10);
    if (*end == '\0' && count >= 1 && count <= (1 << 20)) return static_cast<int>(count);
  }
  return 1;
}

static ProcessGroup* g_world = nullptr;

bool ProcessGroup::active() { return g_world != nullptr; }

#ifdef QKV_WITH_MPI

static void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(fmt::format("data-parallel: {} failed: {}", what, std::string(text, length)));
}

ProcessGroup& ProcessGroup::world() {
  if (g_world) return *g_world;
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) check_mpi(MPI_Init(nullptr, nullptr), "MPI_Init");
  // Errors come back as codes (then exceptions with a message) instead of killing the job silently.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  static ProcessGroup group;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &group.rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &group.size_), "MPI_Comm_size");
  g_world = &group;
  return group;
}

#ifdef QKV_WITH_NCCL
static void check_nccl(ncclResult_t code, const char* what) {
  if (code != ncclSuccess)
    throw std::runtime_error(fmt::format("data-parallel: {} failed: {}", what, ncclGetErrorString(code)));
}
static void check_cuda(cudaError_t code, const char* what) {
  if (code != cudaSuccess)
    throw std::runtime_error(fmt::format("data-parallel: {} failed: {}", what, cudaGetErrorString(code)));
}
#endif

void ProcessGroup::all_reduce_sum(Tensor& flat) {
  if (flat.dtype() != DType::F32 && flat.dtype() != DType::F64)
    throw std::runtime_error("all_reduce_sum: the buffer must be float32 or float64");
  if (flat.dim() != 1)
    throw std::runtime_error(fmt::format("all_reduce_sum: the buffer must be flat, got {} dimensions", flat.dim()));
  const auto start = std::chrono::steady_clock::now();
  const bool f64 = flat.dtype() == DType::F64;
  if (flat.device() == Device::cpu()) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, flat.data_ptr(), static_cast<int>(flat.numel()), f64 ? MPI_DOUBLE : MPI_FLOAT,
                            MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce");
  } else {
#ifdef QKV_WITH_NCCL
    const int device = flat.device().index;
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    if (!nccl_) {  // rank 0 makes the id, MPI carries it to the others
      ncclUniqueId id;
      if (rank_ == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      check_mpi(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast of the NCCL id");
      ncclComm_t comm;
      check_nccl(ncclCommInitRank(&comm, size_, id, rank_), "ncclCommInitRank");
      nccl_ = comm;
      nccl_device_ = device;
    }
    if (device != nccl_device_)
      throw std::runtime_error(
          fmt::format("all_reduce_sum: NCCL was set up on cuda:{}, the buffer is on cuda:{}", nccl_device_, device));
    // qkv's CUDA work runs on the default stream, so NCCL on it is ordered after the backward.
    check_nccl(ncclAllReduce(flat.data_ptr(), flat.data_ptr(), static_cast<size_t>(flat.numel()),
                             f64 ? ncclDouble : ncclFloat, ncclSum, static_cast<ncclComm_t>(nccl_), nullptr),
               "ncclAllReduce");
    backend_for(flat.device()).synchronize();  // timing (below) covers the reduction itself
#else
    throw std::runtime_error("data-parallel on " + flat.device().str() +
                             " needs NCCL, and this qkv was built without it (nccl.h was not found)");
#endif
  }
  all_reduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::string> ProcessGroup::all_gather(const std::string& text) {
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(size_), offsets(size_);
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < size_; ++r) offsets[r] = total, total += lengths[r];
  std::string all(static_cast<size_t>(total), '\0');
  check_mpi(MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                           MPI_COMM_WORLD),
            "MPI_Allgatherv");
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r) out.push_back(all.substr(offsets[r], lengths[r]));
  return out;
}

void ProcessGroup::abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);  // not reached
}

void ProcessGroup::finalize() {
#ifdef QKV_WITH_NCCL
  if (nccl_) ncclCommDestroy(static_cast<ncclComm_t>(nccl_));
  nccl_ = nullptr;
#endif
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

#else  // built without MPI

ProcessGroup& ProcessGroup::world() {
  throw std::runtime_error(
      "--data-parallel needs MPI, and this qkv was built without it (make MPI=0, or libopenmpi-dev "
      "was missing); install libopenmpi-dev and openmpi-bin (bash tools/setup.sh) and rebuild");
}
void ProcessGroup::all_reduce_sum(Tensor&) { throw std::runtime_error("all_reduce_sum: built without MPI"); }
std::vector<std::string> ProcessGroup::all_gather(const std::string&) {
  throw std::runtime_error("all_gather: built without MPI");
}
void ProcessGroup::abort(int code) { std::exit(code); }
void ProcessGroup::finalize() {}

#endif

std::vector<Tensor> all_reduce_gradients(ProcessGroup& group, const std::vector<Tensor>& params,
                                         const std::vector<Tensor>& extras) {
  if (params.empty()) throw std::runtime_error("all_reduce_gradients: no parameters");
  NoGradGuard no_grad;
  const DType dtype = params.front().dtype();
  const Device device = params.front().device();
  std::vector<Tensor> parts;
  for (const Tensor& p : params) {
    if (p.dtype() != dtype || p.device() != device)
      throw std::runtime_error(fmt::format("all_reduce_gradients: parameter {} does not match the first one's {} on {}",
                                           p.describe(), dtype_name(dtype), device.str()));
    parts.push_back(p.grad().defined() ? reshape(p.grad(), {p.numel()}) : Tensor::zeros({p.numel()}, dtype, device));
  }
  for (const Tensor& e : extras) {
    if (e.numel() != 1)
      throw std::runtime_error(fmt::format("all_reduce_gradients: an extra value has {} elements, not 1", e.numel()));
    parts.push_back(reshape(e.dtype() == dtype && e.device() == device ? e : e.to(device).to(dtype), {1}));
  }
  Tensor flat = concat(parts, 0);  // one buffer, one call
  group.all_reduce_sum(flat);
  int64_t offset = 0;
  for (Tensor p : params) {
    p.set_grad(reshape(slice(flat, 0, offset, offset + p.numel()), p.shape()));
    offset += p.numel();
  }
  std::vector<Tensor> summed;
  for (size_t i = 0; i < extras.size(); ++i, ++offset) summed.push_back(slice(flat, 0, offset, offset + 1));
  return summed;
}

}  // namespace qkv::dist
