// CUDA token sampling: one block per row, one launch per batch, no sort. The top-k and
// top-p cuts are found by a 4-pass radix select over the float keys (8-bit digits, warp-
// aggregated shared histograms of counts and integer weights), ties are resolved in id
// order by a block scan, and the draw is a block scan in id order (sampling_math.h).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "strata/ops/cuda/common.cuh"
#include "strata/ops/sampling.h"
#include "strata/ops/sampling_math.h"

namespace strata::cuda {
namespace {

namespace cg = cooperative_groups;
using ops::PenaltyToken;
using ops::SamplingRow;
using u64 = unsigned long long;

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int32_t kNoIdCut = 0x7fffffff;
constexpr unsigned kFullMask = 0xffffffffu;

struct SampleKernelParams {
  const float* logits;  // [num_logits, vocab]
  int64_t num_logits;
  int64_t vocab;
  const SamplingRow* rows;  // [num_rows]
  const PenaltyToken* penalty_tokens;  // [num_penalty_tokens]
  int64_t num_penalty_tokens;
  float* penalized;  // [num_penalized, vocab]
  int64_t num_penalized;
  int32_t* token_ids;     // [num_rows]
  float* logprobs;        // [num_rows]
  int32_t* top_ids;       // [num_rows, kMaxTopLogprobs]
  float* top_logprobs;    // [num_rows, kMaxTopLogprobs]
};

// A prefix of the (key descending, id ascending) order: key > key, or key == key and id <= id.
struct Cut {
  uint32_t key = 0;
  int32_t id = kNoIdCut;
};
__device__ __forceinline__ bool in_cut(const Cut& c, uint32_t key, int64_t i) {
  return key > c.key || (key == c.key && i <= c.id);
}

// The key where the running weight (in key order) reaches the target, with the weight of
// the keys above it and the weight and count of the elements at it.
struct Selection {
  uint32_t key;
  u64 target, above, bin_weight;
  uint32_t bin_count;
};

struct Shared {
  unsigned int count[256];
  u64 mass[256];
  u64 warp_u64[kWarps];
  float warp_max[kWarps], warp_sum[kWarps];
  Selection sel;
  int32_t found;
  int32_t num_top;
  int32_t top_ids[ops::kMaxTopLogprobs];
};

__device__ u64 block_reduce_u64(u64 v, bool max, Shared& s) {
  for (int o = 16; o > 0; o >>= 1) {
    const u64 other = __shfl_xor_sync(kFullMask, v, o);
    v = max ? (other > v ? other : v) : v + other;
  }
  __syncthreads();  // warp_u64 may still be read by a previous call
  if (threadIdx.x % 32 == 0) s.warp_u64[threadIdx.x / 32] = v;
  __syncthreads();
  u64 total = 0;
  for (int w = 0; w < kWarps; ++w) total = max ? (s.warp_u64[w] > total ? s.warp_u64[w] : total) : total + s.warp_u64[w];
  return total;
}

// Merges two (max, sum of exp(v - max)) pairs of an online softmax.
__device__ __forceinline__ void merge_softmax(float& m, float& sum, float m2, float sum2) {
  const float mx = fmaxf(m, m2);
  if (mx == -INFINITY) return;
  sum = sum * expf(m - mx) + sum2 * expf(m2 - mx);
  m = mx;
}

// Log-sum-exp of the raw row; argmax of x by key (lowest id on ties), packed as key << 32 | ~id.
__device__ float first_pass(const float* raw, const float* x, int64_t vocab, Shared& s, u64& best) {
  float m = -INFINITY, sum = 0.0f;
  u64 packed = 0;
  for (int64_t i = threadIdx.x; i < vocab; i += kThreads) {
    merge_softmax(m, sum, raw[i], 1.0f);
    const u64 candidate = (u64{sampling::key_of(x[i])} << 32) | (~static_cast<uint32_t>(i));
    packed = candidate > packed ? candidate : packed;
  }
  for (int o = 16; o > 0; o >>= 1)
    merge_softmax(m, sum, __shfl_xor_sync(kFullMask, m, o), __shfl_xor_sync(kFullMask, sum, o));
  __syncthreads();
  if (threadIdx.x % 32 == 0) {
    s.warp_max[threadIdx.x / 32] = m;
    s.warp_sum[threadIdx.x / 32] = sum;
  }
  best = block_reduce_u64(packed, true, s);  // its syncs publish warp_max / warp_sum
  float tm = -INFINITY, ts = 0.0f;
  for (int w = 0; w < kWarps; ++w) merge_softmax(tm, ts, s.warp_max[w], s.warp_sum[w]);
  return tm + logf(ts);
}

// Thread 0 picks this pass's digit: the bin, scanning down, where the running weight reaches the target.
__device__ void choose_digit(Shared& s, bool mass, int pass, int shift) {
  if (pass == 0) {
    u64 total = 0;
    for (int d = 0; d < 256; ++d) total += mass ? s.mass[d] : s.count[d];
    s.sel.target = s.sel.target > total ? total : s.sel.target;
    s.sel.above = 0;
    s.sel.key = 0;
  }
  u64 above = s.sel.above;
  int chosen = -1;
  for (int d = 255; d >= 0; --d) {
    const u64 wd = mass ? s.mass[d] : s.count[d];
    if (wd == 0) continue;
    chosen = d;
    if (above + wd >= s.sel.target) break;
    above += wd;
  }
  if (chosen < 0) chosen = 0;
  const u64 wd = mass ? s.mass[chosen] : s.count[chosen];
  if (above + wd < s.sel.target && above >= wd) above -= wd;  // target unreachable: keep the last bin
  s.sel.above = above;
  s.sel.key |= static_cast<uint32_t>(chosen) << shift;
  s.sel.bin_weight = wd;
  s.sel.bin_count = s.count[chosen];
}

// Radix select over the keys of `x` by weight (weight(i, value, key) == 0: excluded).
// target_of(total weight) gives the weight to reach; in count mode every weight is 1.
template <bool kMass, class WeightFn, class TargetFn>
__device__ Selection radix_select(const float* x, int64_t vocab, WeightFn weight, TargetFn target_of, Shared& s) {
  uint32_t mask = 0;
  for (int pass = 0; pass < 4; ++pass) {
    const int shift = 24 - 8 * pass;
    __syncthreads();  // the previous pass's digit has been read
    const uint32_t prefix = s.sel.key;
    for (int b = threadIdx.x; b < 256; b += kThreads) {
      s.count[b] = 0;
      s.mass[b] = 0;
    }
    __syncthreads();
    for (int64_t base = 0; base < vocab; base += kThreads) {
      const int64_t i = base + threadIdx.x;
      int bin = -1;
      u64 w = 0;
      if (i < vocab) {
        const float v = x[i];
        const uint32_t key = sampling::key_of(v);
        w = weight(i, v, key);
        if (w != 0 && (key & mask) == (prefix & mask)) bin = static_cast<int>((key >> shift) & 255u);
      }
      const cg::coalesced_group group = cg::labeled_partition(cg::coalesced_threads(), bin);
      const u64 sum = kMass ? cg::reduce(group, w, cg::plus<u64>()) : 0;
      if (bin >= 0 && group.thread_rank() == 0) {
        atomicAdd(&s.count[bin], group.size());
        if (kMass) atomicAdd(&s.mass[bin], sum);
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      if (pass == 0) {
        u64 total = 0;
        for (int d = 0; d < 256; ++d) total += kMass ? s.mass[d] : s.count[d];
        s.sel.target = target_of(total);
      }
      choose_digit(s, kMass, pass, shift);
    }
    mask |= 0xffu << shift;
  }
  __syncthreads();
  const Selection sel = s.sel;
  __syncthreads();  // everyone has its copy before s.sel is reused
  return sel;
}

// The first index, in id order, where the running weight exceeds target; -1 if none.
template <class WeightFn>
__device__ int32_t find_first_over(const float* x, int64_t vocab, WeightFn weight, u64 target, Shared& s) {
  __syncthreads();  // s.found of a previous call has been read
  if (threadIdx.x == 0) s.found = -1;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  u64 running = 0;
  for (int64_t base = 0; base < vocab; base += kThreads) {
    const int64_t i = base + threadIdx.x;
    u64 w = 0;
    if (i < vocab) {
      const float v = x[i];
      w = weight(i, v, sampling::key_of(v));
    }
    u64 incl = w;
    for (int o = 1; o < 32; o <<= 1) {
      const u64 up = __shfl_up_sync(kFullMask, incl, o);
      if (lane >= o) incl += up;
    }
    if (lane == 31) s.warp_u64[warp] = incl;
    __syncthreads();
    u64 before = 0, tile = 0;
    for (int wi = 0; wi < kWarps; ++wi) {
      if (wi < warp) before += s.warp_u64[wi];
      tile += s.warp_u64[wi];
    }
    const u64 end = running + before + incl;
    if (w != 0 && end > target && end - w <= target) s.found = static_cast<int32_t>(i);
    running += tile;
    __syncthreads();
    if (running > target) break;
  }
  return s.found;
}

// The cut that keeps the selected prefix: every key above the selection, and as many of the
// (equal-weight) elements at it, lowest ids first, as the target still needs.
template <class WeightFn>
__device__ Cut resolve_ties(const Selection& sel, const float* x, int64_t vocab, WeightFn weight, Shared& s) {
  if (sel.bin_count == 0 || sel.target <= sel.above) return Cut{sel.key, kNoIdCut};
  const u64 w_tie = sel.bin_weight / sel.bin_count;
  const u64 needed = (sel.target - sel.above + w_tie - 1) / w_tie;
  if (needed >= sel.bin_count) return Cut{sel.key, kNoIdCut};
  const uint32_t key = sel.key;
  auto is_tie = [&](int64_t i, float v, uint32_t k) -> u64 { return k == key && weight(i, v, k) != 0 ? 1 : 0; };
  return Cut{key, find_first_over(x, vocab, is_tie, needed - 1, s)};
}

__device__ Cut top_k_cut(const float* x, int64_t vocab, int32_t k, Shared& s) {
  auto one = [](int64_t, float, uint32_t) -> u64 { return 1; };
  const u64 target = static_cast<u64>(k);
  const Selection sel = radix_select<false>(x, vocab, one, [=](u64) { return target; }, s);
  return resolve_ties(sel, x, vocab, one, s);
}

// The weights the draw sees, for a row of x with maximum `max`.
struct RowWeights {
  float max, inv_t, min_p;
  Cut k, p;
  __device__ u64 before_top_p(int64_t i, float v, uint32_t key) const {
    return in_cut(k, key, i) ? sampling::weight_of(sampling::relative_prob(v, max, inv_t)) : 0;
  }
  __device__ u64 kept(int64_t i, float v, uint32_t key) const {
    if (!in_cut(k, key, i) || !in_cut(p, key, i)) return 0;
    const float prob = sampling::relative_prob(v, max, inv_t);
    if (min_p > 0.0f && !(prob >= min_p)) return 0;
    return sampling::weight_of(prob);
  }
};

__device__ int32_t draw(const float* x, int64_t vocab, const SamplingRow& p, u64 best, Shared& s) {
  const int32_t argmax = static_cast<int32_t>(~static_cast<uint32_t>(best & 0xffffffffu));
  RowWeights rw{.max = x[argmax], .inv_t = 1.0f / p.temperature, .min_p = p.min_p};
  if (p.top_k > 0 && p.top_k < vocab) rw.k = top_k_cut(x, vocab, p.top_k, s);
  if (p.top_p < 1.0f) {
    auto weight = [&](int64_t i, float v, uint32_t key) { return rw.before_top_p(i, v, key); };
    const float top_p = p.top_p;
    auto target_of = [=](u64 total) { return sampling::top_p_target(top_p, total); };
    const Selection sel = radix_select<true>(x, vocab, weight, target_of, s);
    rw.p = resolve_ties(sel, x, vocab, weight, s);
  }
  u64 mine = 0;
  for (int64_t i = threadIdx.x; i < vocab; i += kThreads) {
    const float v = x[i];
    mine += rw.kept(i, v, sampling::key_of(v));
  }
  const u64 total = block_reduce_u64(mine, false, s);
  if (total == 0) return argmax;
  auto kept = [&](int64_t i, float v, uint32_t key) { return rw.kept(i, v, key); };
  const int32_t token = find_first_over(x, vocab, kept, sampling::draw_target(p.random_bits, total), s);
  return token >= 0 ? token : argmax;
}

// The n most likely raw tokens (ties lowest id first) as logprobs, -1 / 0 past n.
__device__ void top_logprobs(const float* raw, int64_t vocab, int32_t n, float lse, int32_t* ids, float* values,
                             Shared& s) {
  const int32_t count = n < vocab ? n : static_cast<int32_t>(vocab);
  if (count > 0) {
    const Cut cut = top_k_cut(raw, vocab, count, s);
    if (threadIdx.x == 0) s.num_top = 0;
    __syncthreads();
    for (int64_t i = threadIdx.x; i < vocab; i += kThreads) {
      if (!in_cut(cut, sampling::key_of(raw[i]), i)) continue;
      const int slot = atomicAdd(&s.num_top, 1);
      if (slot < ops::kMaxTopLogprobs) s.top_ids[slot] = static_cast<int32_t>(i);
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  const int32_t found = count > 0 ? min(s.num_top, ops::kMaxTopLogprobs) : 0;
  for (int a = 1; a < found; ++a) {  // insertion sort of at most 20 ids by (key desc, id asc)
    const int32_t id = s.top_ids[a];
    const uint32_t key = sampling::key_of(raw[id]);
    int b = a - 1;
    for (; b >= 0; --b) {
      const uint32_t kb = sampling::key_of(raw[s.top_ids[b]]);
      if (kb > key || (kb == key && s.top_ids[b] < id)) break;
      s.top_ids[b + 1] = s.top_ids[b];
    }
    s.top_ids[b + 1] = id;
  }
  for (int j = 0; j < ops::kMaxTopLogprobs; ++j) {
    ids[j] = j < found ? s.top_ids[j] : -1;
    values[j] = j < found ? raw[s.top_ids[j]] - lse : 0.0f;
  }
}

// The row's penalised logits in its scratch row (null when it has no penalties), or the
// raw row; `bad` when an index is out of range.
__device__ const float* penalize(const SampleKernelParams& k, const SamplingRow& p, const float* raw, bool& bad) {
  bad = false;
  if (p.num_penalty_tokens <= 0) return raw;
  if (p.penalized_row < 0 || p.penalized_row >= k.num_penalized || p.penalty_begin < 0 ||
      p.penalty_begin + int64_t{p.num_penalty_tokens} > k.num_penalty_tokens) {
    bad = true;
    return raw;
  }
  float* dst = k.penalized + p.penalized_row * k.vocab;
  for (int64_t i = threadIdx.x; i < k.vocab; i += kThreads) dst[i] = raw[i];
  __syncthreads();
  const PenaltyToken* tokens = k.penalty_tokens + p.penalty_begin;
  for (int32_t e = threadIdx.x; e < p.num_penalty_tokens; e += kThreads) {
    const int32_t t = tokens[e].token_id;
    if (t < 0 || t >= k.vocab) continue;
    dst[t] = sampling::penalized_logit(raw[t], true, tokens[e].output_count, p.repetition_penalty,
                                       p.presence_penalty, p.frequency_penalty);
  }
  __syncthreads();
  return dst;
}

__global__ void __launch_bounds__(kThreads) sample_kernel(SampleKernelParams k) {
  __shared__ Shared s;
  const int64_t row = blockIdx.x;
  const SamplingRow p = k.rows[row];
  int32_t* top_ids = k.top_ids + row * ops::kMaxTopLogprobs;
  float* top_values = k.top_logprobs + row * ops::kMaxTopLogprobs;
  bool bad = p.logits_row < 0 || p.logits_row >= k.num_logits || p.num_top_logprobs < 0;
  const float* raw = k.logits + (bad ? 0 : p.logits_row) * k.vocab;
  const float* x = bad ? raw : penalize(k, p, raw, bad);
  if (bad) {  // uniform over the block: it depends on the row's parameters only
    if (threadIdx.x == 0) {
      k.token_ids[row] = -1;
      k.logprobs[row] = 0.0f;
    }
    if (threadIdx.x < ops::kMaxTopLogprobs) {
      top_ids[threadIdx.x] = -1;
      top_values[threadIdx.x] = 0.0f;
    }
    return;
  }
  u64 best = 0;
  const float lse = first_pass(raw, x, k.vocab, s, best);
  const int32_t token = sampling::is_greedy(p.temperature, p.top_k)
                            ? static_cast<int32_t>(~static_cast<uint32_t>(best & 0xffffffffu))
                            : draw(x, k.vocab, p, best, s);
  if (threadIdx.x == 0) {
    k.token_ids[row] = token;
    k.logprobs[row] = raw[token] - lse;
  }
  top_logprobs(raw, k.vocab, min(p.num_top_logprobs, ops::kMaxTopLogprobs), lse, top_ids, top_values, s);
}

}  // namespace

void sample_tokens(const ops::SamplingArgs& args) {
  const int64_t num_rows = args.rows.dim(0);
  const SampleKernelParams k{
      .logits = args.logits.data_as<const float>(),
      .num_logits = args.logits.dim(0),
      .vocab = args.logits.dim(1),
      .rows = args.rows.data_as<const SamplingRow>(),
      .penalty_tokens = args.penalty_tokens.defined() ? args.penalty_tokens.data_as<const PenaltyToken>() : nullptr,
      .num_penalty_tokens = args.penalty_tokens.defined() ? args.penalty_tokens.dim(0) : 0,
      .penalized = args.penalized.defined() ? args.penalized.data_as<float>() : nullptr,
      .num_penalized = args.penalized.defined() ? args.penalized.dim(0) : 0,
      .token_ids = args.token_ids.data_as<int32_t>(),
      .logprobs = args.logprobs.data_as<float>(),
      .top_ids = args.top_ids.data_as<int32_t>(),
      .top_logprobs = args.top_logprobs.data_as<float>()};
  sample_kernel<<<static_cast<unsigned>(num_rows), kThreads, 0, current_stream()>>>(k);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
