// Communicator: the collectives that tensor, expert and pipeline parallelism need between the
// ranks of one parallel group, one process per rank. Two implementations: NCCL for GPUs, and
// shared memory between the local processes of one machine for the CPU (every parallel layout
// runs in CI on the CPU). A rank that does not arrive within the timeout makes every collective
// that waits for it on the host throw strata::Error: a dead rank ends the run, never hangs it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/core/tensor.h"

namespace strata {

class Backend;

struct CommunicatorOptions {
  int rank = 0;
  int world_size = 1;
  // What names the group on this machine (the shared-memory segment, NCCL's unique-id
  // rendezvous): every rank of one group passes the same name; two groups never share one.
  // Letters, digits, '.', '_' and '-'.
  std::string group_name;
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
  // NCCL only: the group's unique id when rank 0 handed it out over TCP (several nodes); empty:
  // rank 0 makes one and publishes it through shared memory named after the group.
  std::vector<uint8_t> nccl_unique_id;
  // Shared memory only: the bytes a rank posts per step (every rank passes the same);
  // larger collectives go in chunks of this size. A multiple of 64, at least 4096.
  int64_t slot_bytes = int64_t{1} << 20;
  // Shared memory, rank 0 only: the pids of ranks 1.. when it started them, so that one that
  // exits before joining fails the rendezvous at once rather than at the timeout.
  std::vector<int32_t> rank_pids;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // x: any shape, contiguous, f32 or bf16, on this rank's device; replaced by the sum over
  // ranks. Every rank gets bitwise the same result, so replicated state stays equal: shared
  // memory adds the ranks in rank order in f32 and rounds bf16 once; NCCL reduces each element
  // once and hands every rank that value. On NCCL it is queued on the backend's stream.
  virtual void all_reduce_sum(const Tensor& x) = 0;
  // in: [n, ...] on each rank; out: [world_size * n, ...], same dtype: rank r's rows at r * n.
  // On NCCL it is queued on the backend's stream.
  virtual void all_gather_rows(const Tensor& in, const Tensor& out) = 0;
  // in, out: [world_size * n, ...], same dtype and shape: rows [q * n, (q + 1) * n) of rank r's `in`
  // land at rows [r * n, (r + 1) * n) of rank q's `out` (expert parallelism's dispatch and
  // combine, with each rank's rows padded to n). On NCCL it is queued on the backend's stream.
  virtual void all_to_all_rows(const Tensor& in, const Tensor& out) = 0;
  // Host bytes from `root` to every rank; the other ranks' `bytes` are resized to the root's.
  // Returns when this rank has them (on NCCL, after the stream's earlier work too).
  virtual void broadcast_bytes(std::vector<uint8_t>& bytes, int root) = 0;
  // Returns when every rank has reached it (on NCCL, with the stream's earlier work done).
  virtual void barrier() = 0;
  // Makes a wait of another thread of this rank on the host fail soon (a rank that failed while
  // a thread still waits on rank 0); every call fails afterwards. Shared memory and TCP only:
  // throws an Error elsewhere.
  virtual void interrupt();
};

// The shared-memory communicator of the local processes rank 0..world_size-1 (CPU tensors).
// Rank 0 creates the segment, the others wait for it; the segment's name is removed once every
// rank has joined (or when the last rank leaves a group that never completed).
std::unique_ptr<Communicator> make_shared_memory_communicator(const CommunicatorOptions& options);
// The NCCL communicator of one rank per GPU, on `backend`'s device and stream; the group's id is
// options.nccl_unique_id, else rank 0 publishes one through shared memory named by group_name
// (one machine). Throws an Error on a build without CUDA or NCCL.
std::unique_ptr<Communicator> make_nccl_communicator(const CommunicatorOptions& options, Backend& backend);
// A new NCCL unique id (ncclGetUniqueId) as bytes, for a multi-node start to hand out; throws an
// Error on a build without NCCL.
std::vector<uint8_t> make_nccl_unique_id();

}  // namespace strata
