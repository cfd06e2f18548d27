// The NCCL communicator: one rank per GPU, collectives queued on the backend's stream. Rank 0's
// unique id reaches the others through a shared-memory group named after this one, or comes in
// the options (a multi-node start hands it out over TCP). NCCL runs
// non-blocking, so that a missing rank ends in ncclCommAbort and an Error at the deadline, never
// a hang: its start and every host wait (barrier, broadcast_bytes) poll against the timeout.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "strata/backend/backend.h"
#include "strata/backend/cuda/cuda_check.h"
#include "strata/core/error.h"
#include "strata/parallel/communicator.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

// Rank 0's id, handed to every rank over a small shared-memory group ("<group>.nccl-id").
ncclUniqueId shared_unique_id(const CommunicatorOptions& options) {
  CommunicatorOptions id_group = options;
  id_group.group_name = options.group_name + ".nccl-id";
  id_group.slot_bytes = 4096;
  const std::unique_ptr<Communicator> group = make_shared_memory_communicator(id_group);
  ncclUniqueId id{};
  std::vector<uint8_t> bytes;
  if (options.rank == 0) {
    const ncclResult_t result = ncclGetUniqueId(&id);
    if (result != ncclSuccess)
      fail("NCCL group '{}': ncclGetUniqueId failed: {} ({})", options.group_name, ncclGetErrorString(result),
           ncclGetLastError(nullptr));
    bytes.assign(reinterpret_cast<const uint8_t*>(&id), reinterpret_cast<const uint8_t*>(&id) + sizeof(id));
  }
  group->broadcast_bytes(bytes, 0);
  STRATA_CHECK(bytes.size() == sizeof(id));
  std::memcpy(&id, bytes.data(), sizeof(id));
  return id;
}

ncclUniqueId unique_id(const CommunicatorOptions& options) {
  if (options.nccl_unique_id.empty()) return shared_unique_id(options);
  ncclUniqueId id{};
  if (options.nccl_unique_id.size() != sizeof(id))
    fail("NCCL group '{}': the unique id rank 0 sent has {} bytes, this NCCL's has {}: build every node with the "
         "same NCCL", options.group_name, options.nccl_unique_id.size(), sizeof(id));
  std::memcpy(&id, options.nccl_unique_id.data(), sizeof(id));
  return id;
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::kF32: return ncclFloat32;
    case DType::kBF16: return ncclBfloat16;
    default: fail("NCCL all_reduce_sum takes f32 or bf16 tensors, got {}", dtype_name(dtype));
  }
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(const CommunicatorOptions& options, Backend& backend);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return options_.rank; }
  int world_size() const override { return options_.world_size; }
  void all_reduce_sum(const Tensor& x) override;
  void all_gather_rows(const Tensor& in, const Tensor& out) override;
  void all_to_all_rows(const Tensor& in, const Tensor& out) override;
  void broadcast_bytes(std::vector<uint8_t>& bytes, int root) override;
  void barrier() override;

 private:
  // Waits until NCCL has taken the call that returned `result` (a non-blocking communicator may
  // answer ncclInProgress); aborts and throws on an error or at the deadline.
  void settle(ncclResult_t result, std::string_view what);
  // Waits until the stream's queued work is done, polling against the timeout.
  void wait_for_stream(std::string_view what);
  [[noreturn]] void abort_and_fail(std::string_view what, const std::string& why);
  void check_usable(std::string_view what, std::initializer_list<const Tensor*> tensors) const;
  // n host bytes from the root's `data` into every rank's, through pinned and device buffers.
  void broadcast_host(void* data, int64_t n, int root, std::string_view what);
  uint8_t* staging(Tensor& buffer, int64_t n, bool pinned);

  CommunicatorOptions options_;
  Backend& backend_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  ncclComm_t comm_ = nullptr;  // null once aborted
  Tensor device_staging_;  // [n] u8, grown as needed
  Tensor host_staging_;    // [n] u8 pinned, grown as needed
};

NcclCommunicator::NcclCommunicator(const CommunicatorOptions& options, Backend& backend)
    : options_(options), backend_(backend) {
  if (backend.device().type != DeviceType::kCuda)
    fail("make_nccl_communicator needs a CUDA backend; rank {} of group '{}' got the {} backend", options.rank,
         options.group_name, backend.name());
  backend.make_current();
  stream_ = cuda::current_stream();
  const ncclUniqueId id = unique_id(options);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const ncclResult_t started = ncclCommInitRankConfig(&comm_, options.world_size, id, options.rank, &config);
  if (started != ncclSuccess && started != ncclInProgress) {
    comm_ = nullptr;
    fail("NCCL group '{}': ncclCommInitRankConfig failed on rank {}: {} ({})", options.group_name, options.rank,
         ncclGetErrorString(started), ncclGetLastError(nullptr));
  }
  settle(started, "the group's start (ncclCommInitRankConfig)");
  STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr) {
    // Finalize flushes queued work, which a missing rank would hold up: it gets the deadline too.
    ncclResult_t state = ncclCommFinalize(comm_);
    const auto deadline = Clock::now() + options_.timeout;
    while (state == ncclInProgress && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      ncclCommGetAsyncError(comm_, &state);
    }
    if (state == ncclSuccess) {
      ncclCommDestroy(comm_);
    } else {
      ncclCommAbort(comm_);
    }
  }
  if (done_ != nullptr) cudaEventDestroy(done_);
}

void NcclCommunicator::settle(ncclResult_t result, std::string_view what) {
  const auto deadline = Clock::now() + options_.timeout;
  while (result == ncclInProgress) {
    if (Clock::now() >= deadline)
      abort_and_fail(what, fmt::format("it did not complete within {:g} s: a rank may have exited or be stuck",
                                       options_.timeout.count() / 1000.0));
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (ncclCommGetAsyncError(comm_, &result) != ncclSuccess) break;
  }
  if (result != ncclSuccess)
    abort_and_fail(what, fmt::format("{} ({})", ncclGetErrorString(result), ncclGetLastError(comm_)));
}

void NcclCommunicator::wait_for_stream(std::string_view what) {
  STRATA_CUDA_CHECK(cudaEventRecord(done_, stream_));
  const auto start = Clock::now();
  const auto deadline = start + options_.timeout;
  for (;;) {
    const cudaError_t state = cudaEventQuery(done_);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) STRATA_CUDA_CHECK(state);
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm_, &async);
    if (async != ncclSuccess && async != ncclInProgress)
      abort_and_fail(what, fmt::format("{} ({})", ncclGetErrorString(async), ncclGetLastError(comm_)));
    const auto now = Clock::now();
    if (now >= deadline)
      abort_and_fail(what, fmt::format("the stream did not finish it within {:g} s: a rank may have exited or be stuck",
                                       options_.timeout.count() / 1000.0));
    // Spin for the first millisecond (a barrier's latency), then let the CPU go.
    if (now - start > std::chrono::milliseconds(1)) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void NcclCommunicator::abort_and_fail(std::string_view what, const std::string& why) {
  ncclCommAbort(comm_);
  comm_ = nullptr;
  fail("NCCL group '{}', rank {}: {} failed: {}; the communicator was aborted", options_.group_name, options_.rank,
       what, why);
}

void NcclCommunicator::check_usable(std::string_view what, std::initializer_list<const Tensor*> tensors) const {
  if (comm_ == nullptr)
    fail("NCCL group '{}', rank {}: {} on an aborted communicator; make a new one", options_.group_name,
         options_.rank, what);
  for (const Tensor* t : tensors)
    if (t->device() != backend_.device())
      fail("NCCL {} takes tensors on the communicator's GPU {}; got one on {}", what, backend_.device().index,
           t->device().is_cpu() ? std::string("the host") : fmt::format("GPU {}", t->device().index));
}

void NcclCommunicator::all_reduce_sum(const Tensor& x) {
  check_usable("all_reduce_sum", {&x});
  settle(ncclAllReduce(x.data(), x.data(), x.numel(), nccl_type(x.dtype()), ncclSum, comm_, stream_),
         "all_reduce_sum");
}

void NcclCommunicator::all_gather_rows(const Tensor& in, const Tensor& out) {
  check_usable("all_gather_rows", {&in, &out});
  if (in.dtype() != out.dtype() || in.rank() < 1 || out.rank() != in.rank() || out.dim(0) != world_size() * in.dim(0) ||
      out.numel() != world_size() * in.numel())
    fail("all_gather_rows: out {} {} must be in {} {} with {} times the rows", dtype_name(out.dtype()),
         out.shape().str(), dtype_name(in.dtype()), in.shape().str(), world_size());
  settle(ncclAllGather(in.data(), out.data(), in.nbytes(), ncclUint8, comm_, stream_), "all_gather_rows");
}

// One send and one receive per rank in a group: NCCL's all-to-all.
void NcclCommunicator::all_to_all_rows(const Tensor& in, const Tensor& out) {
  check_usable("all_to_all_rows", {&in, &out});
  if (in.dtype() != out.dtype() || in.rank() < 1 || !(in.shape() == out.shape()) || in.dim(0) % world_size() != 0)
    fail("all_to_all_rows: in {} {} and out {} {} must have one dtype and shape, rows a multiple of {}",
         dtype_name(in.dtype()), in.shape().str(), dtype_name(out.dtype()), out.shape().str(), world_size());
  const size_t block = in.nbytes() / world_size();
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out.data());
  settle(ncclGroupStart(), "all_to_all_rows");
  for (int q = 0; q < world_size(); ++q) {
    settle(ncclSend(src + q * block, block, ncclUint8, q, comm_, stream_), "all_to_all_rows");
    settle(ncclRecv(dst + q * block, block, ncclUint8, q, comm_, stream_), "all_to_all_rows");
  }
  settle(ncclGroupEnd(), "all_to_all_rows");
}

void NcclCommunicator::broadcast_bytes(std::vector<uint8_t>& bytes, int root) {
  check_usable("broadcast_bytes", {});
  if (root < 0 || root >= world_size())
    fail("broadcast_bytes root {} is out of range for world_size {}", root, world_size());
  uint64_t size = bytes.size();
  broadcast_host(&size, sizeof(size), root, "broadcast_bytes");
  bytes.resize(size);
  if (size > 0) broadcast_host(bytes.data(), static_cast<int64_t>(size), root, "broadcast_bytes");
}

void NcclCommunicator::broadcast_host(void* data, int64_t n, int root, std::string_view what) {
  uint8_t* pinned = staging(host_staging_, n, /*pinned=*/true);
  uint8_t* device = staging(device_staging_, n, /*pinned=*/false);
  if (rank() == root) {
    std::memcpy(pinned, data, n);
    STRATA_CUDA_CHECK(cudaMemcpyAsync(device, pinned, n, cudaMemcpyHostToDevice, stream_));
  }
  settle(ncclBroadcast(device, device, n, ncclUint8, root, comm_, stream_), what);
  STRATA_CUDA_CHECK(cudaMemcpyAsync(pinned, device, n, cudaMemcpyDeviceToHost, stream_));
  wait_for_stream(what);
  std::memcpy(data, pinned, n);
}

void NcclCommunicator::barrier() {
  check_usable("barrier", {});
  uint8_t* word = staging(device_staging_, sizeof(float), /*pinned=*/false);
  settle(ncclAllReduce(word, word, 1, ncclFloat32, ncclSum, comm_, stream_), "barrier");
  wait_for_stream("barrier");
}

// Grown to at least twice the old size, so that a run of growing broadcasts allocates rarely.
uint8_t* NcclCommunicator::staging(Tensor& buffer, int64_t n, bool pinned) {
  if (!buffer.defined() || buffer.nbytes() < n) {
    const int64_t size = std::max<int64_t>({n, 2 * (buffer.defined() ? buffer.nbytes() : 0), 4096});
    buffer = pinned ? backend_.pinned_host(DType::kU8, {size}) : backend_.empty(DType::kU8, {size});
  }
  return buffer.data_as<uint8_t>();
}

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(const CommunicatorOptions& options, Backend& backend) {
  return std::make_unique<NcclCommunicator>(options, backend);
}

std::vector<uint8_t> make_nccl_unique_id() {
  ncclUniqueId id{};
  const ncclResult_t result = ncclGetUniqueId(&id);
  if (result != ncclSuccess)
    fail("ncclGetUniqueId failed: {} ({})", ncclGetErrorString(result), ncclGetLastError(nullptr));
  return {reinterpret_cast<const uint8_t*>(&id), reinterpret_cast<const uint8_t*>(&id) + sizeof(id)};
}

}  // namespace strata
