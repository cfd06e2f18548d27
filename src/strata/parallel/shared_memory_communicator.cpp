// The shared-memory communicator: collectives as rounds of a SharedMemoryGroup, in chunks of a
// slot. all_reduce_sum adds the ranks in rank order in f32 (bf16 rounded once), so the result
// is the same bits on every rank and at any timing; small chunks are summed by every rank from
// one round, large ones reduce-scattered (rank r sums the r-th part) and gathered in a second.
#include <algorithm>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/ops/cpu/convert.h"
#include "strata/parallel/communicator.h"
#include "strata/parallel/shared_memory_group.h"

namespace strata {
namespace {

enum class Collective : int32_t { kAllReduceSum = 1, kAllGatherRows, kBroadcastBytes, kBarrier, kAllToAllRows };

std::string_view collective_name(int32_t collective) {
  switch (static_cast<Collective>(collective)) {
    case Collective::kAllReduceSum: return "all_reduce_sum";
    case Collective::kAllGatherRows: return "all_gather_rows";
    case Collective::kBroadcastBytes: return "broadcast_bytes";
    case Collective::kBarrier: return "barrier";
    case Collective::kAllToAllRows: return "all_to_all_rows";
  }
  return "an unknown collective";
}

// Up to this many bytes a chunk is summed by every rank from one round: one wait instead of two
// beats splitting the additions.
constexpr int64_t kOneRoundReduceBytes = 32 << 10;
constexpr int64_t kSumBlock = 512;  // elements summed in an f32 block that stays in L1

// out[begin, end) = the ranks' elements [begin, end) added in rank order, in f32.
void sum_in_rank_order(DType dtype, std::span<const uint8_t* const> ranks, int64_t begin, int64_t end, uint8_t* out) {
  float acc[kSumBlock];
  float widened[kSumBlock];
  const int64_t elem_bytes = dtype_bytes(dtype, 1);
  for (int64_t b = begin; b < end; b += kSumBlock) {
    const int64_t n = std::min(kSumBlock, end - b);
    cpu::widen_to_f32(ranks[0] + b * elem_bytes, dtype, n, acc);
    for (size_t r = 1; r < ranks.size(); ++r) {
      const float* x = widened;
      if (dtype == DType::kF32) {
        x = reinterpret_cast<const float*>(ranks[r] + b * elem_bytes);
      } else {
        cpu::widen_to_f32(ranks[r] + b * elem_bytes, dtype, n, widened);
      }
      for (int64_t i = 0; i < n; ++i) acc[i] += x[i];
    }
    cpu::narrow_from_f32(acc, dtype, n, out + b * elem_bytes);
  }
}

class SharedMemoryCommunicator final : public Communicator {
 public:
  explicit SharedMemoryCommunicator(const CommunicatorOptions& options) : group_(options) {}

  int rank() const override { return group_.rank(); }
  int world_size() const override { return group_.world_size(); }

  void all_reduce_sum(const Tensor& x) override {
    guarded([&] { reduce(x); });
  }
  void all_gather_rows(const Tensor& in, const Tensor& out) override {
    guarded([&] { gather(in, out); });
  }
  void all_to_all_rows(const Tensor& in, const Tensor& out) override {
    guarded([&] { all_to_all(in, out); });
  }
  void broadcast_bytes(std::vector<uint8_t>& bytes, int root) override {
    guarded([&] { broadcast(bytes, root); });
  }
  void barrier() override {
    guarded([&] { exchange({.collective = static_cast<int32_t>(Collective::kBarrier)}); });
  }
  void interrupt() override { group_.interrupt(); }

 private:
  // A failed collective leaves the ranks out of step: later calls fail rather than mix rounds.
  template <typename Body>
  void guarded(const Body& body) {
    if (broken_)
      fail("shared-memory group '{}': an earlier collective failed on rank {}; make a new communicator",
           group_.group_name(), rank());
    try {
      body();
    } catch (...) {
      broken_ = true;
      throw;
    }
  }

  void reduce(const Tensor& x);
  void reduce_chunk_in_one_round(const PostTag& tag, uint8_t* chunk, int64_t num_elems);
  void reduce_chunk_in_two_rounds(const PostTag& tag, uint8_t* chunk, int64_t num_elems);
  void gather(const Tensor& in, const Tensor& out);
  void all_to_all(const Tensor& in, const Tensor& out);
  void broadcast(std::vector<uint8_t>& bytes, int root);
  // Publishes this rank's post tagged `tag` and checks that every rank is in the same collective.
  void exchange(const PostTag& tag);
  std::vector<const uint8_t*> payloads() const;

  SharedMemoryGroup group_;
  bool broken_ = false;
};

void SharedMemoryCommunicator::exchange(const PostTag& tag) {
  group_.next_tag() = tag;
  group_.publish_and_wait(collective_name(tag.collective));
  for (int r = 0; r < world_size(); ++r) {
    const PostTag& other = group_.tag(r);
    const bool sizes_agree = other.bytes == tag.bytes || other.bytes < 0 || tag.bytes < 0;
    if (other.collective == tag.collective && other.dtype == tag.dtype && other.root == tag.root && sizes_agree) continue;
    fail("shared-memory group '{}': rank {} called {} (root {}, {} bytes) while rank {} called {} (root {}, {} bytes): "
         "every rank must call the same collectives in the same order, with the same sizes",
         group_.group_name(), r, collective_name(other.collective), other.root, other.bytes, rank(),
         collective_name(tag.collective), tag.root, tag.bytes);
  }
}

std::vector<const uint8_t*> SharedMemoryCommunicator::payloads() const {
  std::vector<const uint8_t*> out(world_size());
  for (int r = 0; r < world_size(); ++r) out[r] = group_.payload(r);
  return out;
}

void SharedMemoryCommunicator::reduce(const Tensor& x) {
  if (!x.device().is_cpu()) fail("shared-memory all_reduce_sum takes host tensors; got a device tensor");
  if (x.dtype() != DType::kF32 && x.dtype() != DType::kBF16)
    fail("all_reduce_sum takes f32 or bf16 tensors, got {}", dtype_name(x.dtype()));
  const int64_t elem_bytes = dtype_bytes(x.dtype(), 1);
  const int64_t chunk_elems = group_.slot_bytes() / elem_bytes;
  const PostTag tag{.collective = static_cast<int32_t>(Collective::kAllReduceSum),
                    .dtype = static_cast<int32_t>(x.dtype()),
                    .bytes = x.nbytes()};
  auto* data = static_cast<uint8_t*>(x.data());
  int64_t done = 0;
  do {  // at least one round, so that ranks disagreeing on an empty tensor still fail
    const int64_t n = std::min(chunk_elems, x.numel() - done);
    if (n * elem_bytes <= kOneRoundReduceBytes || world_size() == 1) {
      reduce_chunk_in_one_round(tag, data + done * elem_bytes, n);
    } else {
      reduce_chunk_in_two_rounds(tag, data + done * elem_bytes, n);
    }
    done += n;
  } while (done < x.numel());
}

void SharedMemoryCommunicator::reduce_chunk_in_one_round(const PostTag& tag, uint8_t* chunk, int64_t num_elems) {
  const auto dtype = static_cast<DType>(tag.dtype);
  std::memcpy(group_.next_payload(), chunk, dtype_bytes(dtype, num_elems));
  exchange(tag);
  sum_in_rank_order(dtype, payloads(), 0, num_elems, chunk);
}

// Round 1 posts the chunk and rank r sums part r into its next post; round 2 gathers the parts.
void SharedMemoryCommunicator::reduce_chunk_in_two_rounds(const PostTag& tag, uint8_t* chunk, int64_t num_elems) {
  const auto dtype = static_cast<DType>(tag.dtype);
  const int64_t elem_bytes = dtype_bytes(dtype, 1);
  const int64_t align = 64 / elem_bytes;  // parts start on cache lines
  const int64_t per_rank = ((num_elems + world_size() - 1) / world_size() + align - 1) / align * align;
  const auto part = [&](int r) {
    const int64_t begin = std::min(num_elems, r * per_rank);
    return std::pair{begin, std::min(num_elems, begin + per_rank)};
  };
  std::memcpy(group_.next_payload(), chunk, num_elems * elem_bytes);
  exchange(tag);
  const auto [begin, end] = part(rank());
  sum_in_rank_order(dtype, payloads(), begin, end, group_.next_payload());
  exchange(tag);
  for (int r = 0; r < world_size(); ++r) {
    const auto [b, e] = part(r);
    std::memcpy(chunk + b * elem_bytes, group_.payload(r) + b * elem_bytes, (e - b) * elem_bytes);
  }
}

void SharedMemoryCommunicator::gather(const Tensor& in, const Tensor& out) {
  if (!in.device().is_cpu() || !out.device().is_cpu())
    fail("shared-memory all_gather_rows takes host tensors; got a device tensor");
  if (in.dtype() != out.dtype() || in.rank() < 1 || out.rank() != in.rank() || out.dim(0) != world_size() * in.dim(0) ||
      out.numel() != world_size() * in.numel())
    fail("all_gather_rows: out {} {} must be in {} {} with {} times the rows", dtype_name(out.dtype()),
         out.shape().str(), dtype_name(in.dtype()), in.shape().str(), world_size());
  const int64_t num_bytes = in.nbytes();
  const PostTag tag{.collective = static_cast<int32_t>(Collective::kAllGatherRows),
                    .dtype = static_cast<int32_t>(in.dtype()),
                    .bytes = num_bytes};
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out.data());
  int64_t done = 0;
  do {
    const int64_t n = std::min(group_.slot_bytes(), num_bytes - done);
    std::memcpy(group_.next_payload(), src + done, n);
    exchange(tag);
    for (int r = 0; r < world_size(); ++r) std::memcpy(dst + r * num_bytes + done, group_.payload(r), n);
    done += n;
  } while (done < num_bytes);
}

// Each round a rank posts the next piece of every destination's block, piece q at q * step; rank
// q copies piece q of every rank's post into that rank's block of its `out`.
void SharedMemoryCommunicator::all_to_all(const Tensor& in, const Tensor& out) {
  if (!in.device().is_cpu() || !out.device().is_cpu())
    fail("shared-memory all_to_all_rows takes host tensors; got a device tensor");
  if (in.dtype() != out.dtype() || in.rank() < 1 || !(in.shape() == out.shape()) || in.dim(0) % world_size() != 0)
    fail("all_to_all_rows: in {} {} and out {} {} must have one dtype and shape, rows a multiple of {}",
         dtype_name(in.dtype()), in.shape().str(), dtype_name(out.dtype()), out.shape().str(), world_size());
  const int64_t block = in.nbytes() / world_size();  // bytes for each destination
  const int64_t step = group_.slot_bytes() / world_size();
  const PostTag tag{.collective = static_cast<int32_t>(Collective::kAllToAllRows),
                    .dtype = static_cast<int32_t>(in.dtype()),
                    .bytes = in.nbytes()};
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out.data());
  int64_t done = 0;
  do {
    const int64_t n = std::min(step, block - done);
    for (int q = 0; q < world_size(); ++q) std::memcpy(group_.next_payload() + q * step, src + q * block + done, n);
    exchange(tag);
    for (int r = 0; r < world_size(); ++r) std::memcpy(dst + r * block + done, group_.payload(r) + rank() * step, n);
    done += n;
  } while (done < block);
}

// The root's first post carries the size in its tag; the others learn it there and resize.
void SharedMemoryCommunicator::broadcast(std::vector<uint8_t>& bytes, int root) {
  if (root < 0 || root >= world_size())
    fail("broadcast_bytes root {} is out of range for world_size {}", root, world_size());
  const bool is_root = rank() == root;
  const PostTag tag{.collective = static_cast<int32_t>(Collective::kBroadcastBytes),
                    .root = root,
                    .bytes = is_root ? static_cast<int64_t>(bytes.size()) : -1};
  int64_t total = tag.bytes;
  int64_t done = 0;
  do {
    const int64_t n = is_root ? std::min(group_.slot_bytes(), total - done) : 0;
    if (n > 0) std::memcpy(group_.next_payload(), bytes.data() + done, n);
    exchange(tag);
    if (!is_root) {
      if (done == 0) bytes.resize(total = group_.tag(root).bytes);
      const int64_t m = std::min(group_.slot_bytes(), total - done);
      if (m > 0) std::memcpy(bytes.data() + done, group_.payload(root), m);
    }
    done += std::min(group_.slot_bytes(), total - done);
  } while (done < total);
}

}  // namespace

std::unique_ptr<Communicator> make_shared_memory_communicator(const CommunicatorOptions& options) {
  return std::make_unique<SharedMemoryCommunicator>(options);
}

}  // namespace strata
