#include "strata/ops/paged_attention.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "strata/ops/dispatch.h"

namespace strata::ops {

void store_kv(const Tensor& k, const Tensor& v, const Tensor& slot_mapping, const Tensor& k_cache,
              const Tensor& v_cache) {
  STRATA_CHECK(k.rank() == 3 && k.shape() == v.shape() && k_cache.rank() == 4);
  STRATA_CHECK(k_cache.shape() == v_cache.shape() && k_cache.dim(2) == k.dim(1) &&
               k_cache.dim(3) == k.dim(2));
  STRATA_CHECK(slot_mapping.numel() == k.dim(0) && slot_mapping.dtype() == DType::kI32);
  STRATA_DISPATCH(k.device(), cpu::store_kv(k, v, slot_mapping, k_cache, v_cache),
                  cuda::store_kv(k, v, slot_mapping, k_cache, v_cache));
}

void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                     const AttentionMetadata& meta, const AttentionParams& params, const Tensor& out) {
  STRATA_CHECK(q.rank() == 3 && k_cache.rank() == 4 && q.dim(2) == k_cache.dim(3));
  STRATA_CHECK_MSG(q.dim(1) % k_cache.dim(2) == 0, "{} query heads over {} kv heads", q.dim(1),
                   k_cache.dim(2));
  STRATA_CHECK(meta.cu_seqlens.numel() == meta.num_rows + 1 && meta.kv_lens.numel() == meta.num_rows);
  expect_shape(out, q.shape(), "paged_attention out");
  STRATA_DISPATCH(q.device(), cpu::paged_attention(q, k_cache, v_cache, meta, params, out),
                  cuda::paged_attention(q, k_cache, v_cache, meta, params, out));
}

void check_paged_attention_supported(Device device, int64_t head_dim, const std::string& layer) {
  if (device.is_cpu() || std::ranges::find(kCudaAttentionHeadDims, head_dim) != std::end(kCudaAttentionHeadDims))
    return;
  fail("{}: attention head size {} has no CUDA kernel (supported: {}); run this model with --device cpu", layer,
       head_dim, fmt::join(kCudaAttentionHeadDims, ", "));
}

}  // namespace strata::ops
