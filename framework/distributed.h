// framework/distributed.h — the process group for data-parallel training: OpenMPI starts the
// processes and sums flat buffers across them (NCCL does it for CUDA tensors when built with it).
// Built without MPI (make MPI=0), init() throws one clear line.
#pragma once

#include <string>
#include <vector>

#include "tensor.h"

namespace qkv::dist {

// Whether this build has MPI (and NCCL for CUDA tensors).
bool built_with_mpi();
bool built_with_nccl();

// How many processes the launcher that started this one says it started: OpenMPI's mpirun sets
// OMPI_COMM_WORLD_SIZE, MPICH's PMI_SIZE; 1 when neither is set (not launched by mpirun) or when
// the value is not a positive number. Read from the environment, without joining the group.
int launched_process_count();

class ProcessGroup {
 public:
  // Joins the processes mpirun started (MPI_Init once; a process started without mpirun is a
  // group of one). Throws when qkv was built without MPI.
  static ProcessGroup& world();
  // Whether world() has been called in this process (the error handler asks before aborting).
  static bool active();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Sums a flat, contiguous float32 or float64 tensor over every rank, in place; every rank ends
  // with the same bits. CPU tensors go through MPI_Allreduce, CUDA tensors through NCCL. For a
  // given group size and tensor length the reduction order is fixed, so reruns are bit-identical.
  void all_reduce_sum(Tensor& flat);
  // Every rank's `text`, in rank order (rank r's at index r).
  std::vector<std::string> all_gather(const std::string& text);
  // Seconds spent inside all_reduce_sum since the start (for qkv bench --data-parallel).
  double all_reduce_seconds() const { return all_reduce_seconds_; }
  // Ends every rank now with `code` (MPI_Abort): a rank that fails must not leave the others
  // waiting in a collective.
  [[noreturn]] void abort(int code);
  // MPI_Finalize; called once at normal exit.
  void finalize();

 private:
  ProcessGroup() = default;
  int rank_ = 0, size_ = 1;
  double all_reduce_seconds_ = 0;
  void* nccl_ = nullptr;  // ncclComm_t, created on the first CUDA all-reduce
  int nccl_device_ = -1;
};

// Data-parallel gradient averaging in one call: packs every parameter's gradient (zeros where a
// rank has none) and the `extras` (one-element tensors, e.g. this rank's share of the loss) into
// one flat buffer of the parameters' dtype and device, sums it over the ranks, and sets each
// gradient to its summed part. Each rank must have scaled its loss by its share of the global
// batch, so the sum is the global batch's gradient. Returns the summed extras, as (1,) tensors.
std::vector<Tensor> all_reduce_gradients(ProcessGroup& group, const std::vector<Tensor>& params,
                                         const std::vector<Tensor>& extras);

}  // namespace qkv::dist
