// Stable grouping of the (token, choice) pairs by expert in one block of 32 warps: warp w owns
// the w-th contiguous chunk of pairs and counts it per expert in shared memory, the counts are
// scanned into expert offsets and per-(warp, expert) bases, and each warp then places its chunk
// in pair order (match_any ranks pairs of one expert within a round). O(pairs / 1024 + E).
// Under expert parallelism the pairs of other ranks' experts form one more bucket, E, placed
// last in pair order: offsets[E] is where they start, and nothing counts past them.
#include <string>

#include "strata/ops/cuda/common.cuh"
#include "strata/ops/moe.h"

namespace strata::cuda {
namespace {

constexpr int kWarps = 32;
constexpr int kThreads = kWarps * 32;
constexpr int64_t kMaxSharedBytes = 208 * 1024;

struct GroupParams {
  const int32_t* ids;   // [pairs] expert of each pair (>= 0)
  int32_t* sorted;      // [pairs]
  int32_t* token_rows;  // [pairs]
  int32_t* offsets;     // [local experts + 1]
  int64_t pairs, k;
  int64_t experts;       // buckets: the local experts, then one for other ranks' pairs
  int64_t local_experts;
  int64_t first_expert;  // the routing id of local expert 0

  // The bucket of routing id `id`: its local expert, or the last bucket for another rank's.
  __device__ int32_t bucket(int32_t id) const {
    const int64_t local = id - first_expert;
    return local >= 0 && local < local_experts ? static_cast<int32_t>(local) : static_cast<int32_t>(local_experts);
  }
};

// counts: [kWarps][E] per-warp counts; afterwards the first sorted slot of each (warp, expert).
__device__ void scan_counts(const GroupParams& p, int32_t* counts, int32_t* warp_sums) {
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int64_t per = (p.experts + kThreads - 1) / kThreads;
  const int64_t e0 = tid * per < p.experts ? tid * per : p.experts;
  const int64_t e1 = e0 + per < p.experts ? e0 + per : p.experts;
  int32_t mine = 0;
  for (int64_t e = e0; e < e1; ++e)
    for (int w = 0; w < kWarps; ++w) mine += counts[w * p.experts + e];
  int32_t incl = mine;
  for (int o = 1; o < 32; o <<= 1) {
    const int32_t v = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += v;
  }
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  int32_t running = incl - mine;
  for (int w = 0; w < warp; ++w) running += warp_sums[w];
  for (int64_t e = e0; e < e1; ++e) {
    p.offsets[e] = running;
    for (int w = 0; w < kWarps; ++w) {
      const int32_t c = counts[w * p.experts + e];
      counts[w * p.experts + e] = running;
      running += c;
    }
  }
  __syncthreads();
}

__global__ void __launch_bounds__(kThreads) group_kernel(GroupParams p) {
  extern __shared__ int32_t counts[];  // [kWarps][E]
  __shared__ int32_t warp_sums[kWarps];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  for (int64_t i = tid; i < kWarps * p.experts; i += kThreads) counts[i] = 0;
  __syncthreads();
  const int64_t chunk = (p.pairs + kWarps - 1) / kWarps;
  const int64_t begin = warp * chunk, end = begin + chunk < p.pairs ? begin + chunk : p.pairs;
  int32_t* mine = counts + warp * p.experts;
  for (int64_t i = begin + lane; i < end; i += 32) {
    const int32_t e = p.bucket(p.ids[i]);
    if (e < p.experts) atomicAdd(&mine[e], 1);
  }
  __syncthreads();
  scan_counts(p, counts, warp_sums);
  const unsigned below = (1u << lane) - 1;
  for (int64_t base = begin; base < end; base += 32) {
    const int64_t i = base + lane;
    const int32_t e = i < end ? p.bucket(p.ids[i]) : -1;
    const bool valid = e >= 0 && e < p.experts;
    const unsigned same = __match_any_sync(0xffffffffu, e);
    const int32_t slot = valid ? mine[e] + __popc(same & below) : 0;
    __syncwarp();  // every lane has read its base before the leaders advance them
    if (valid) {
      p.sorted[slot] = static_cast<int32_t>(i);
      p.token_rows[slot] = static_cast<int32_t>(i / p.k);
      if ((same & below) == 0) mine[e] += __popc(same);
    }
    __syncwarp();
  }
}

}  // namespace

void moe_group(const Tensor& topk_ids, const ops::MoeGroups& groups) {
  const int64_t pairs = topk_ids.numel(), local = groups.expert_offsets.dim(0) - 1;
  const int64_t e = local + 1;  // the local experts, then other ranks' (none on a single rank)
  const int64_t smem = kWarps * e * static_cast<int64_t>(sizeof(int32_t));
  static_assert((ops::kCudaMaxExperts + 1) * kWarps * 4 <= kMaxSharedBytes);
  if (smem > kMaxSharedBytes)  // refused at model build (ops::check_experts_supported)
    throw Error("moe_group: " + std::to_string(local) + " experts exceed the CUDA grouping kernel's limit of " +
                std::to_string(kMaxSharedBytes / (kWarps * 4) - 1));
  static const bool configured = [] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(group_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kMaxSharedBytes)));
    return true;
  }();
  (void)configured;
  const GroupParams p{.ids = topk_ids.data_as<int32_t>(), .sorted = groups.sorted_pairs.data_as<int32_t>(),
                      .token_rows = groups.token_rows.data_as<int32_t>(),
                      .offsets = groups.expert_offsets.data_as<int32_t>(), .pairs = pairs, .k = topk_ids.dim(1),
                      .experts = e, .local_experts = local, .first_expert = groups.first_expert};
  group_kernel<<<1, kThreads, static_cast<size_t>(smem), current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
