// KvCache: the K and V block storage of every attention layer on one device, indexed by
// the block ids of a BlockPool shared by all layers.
#pragma once

#include <string_view>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/tensor.h"

namespace strata {

// --kv-cache-dtype: auto keeps keys and values in the activations' dtype (f32 on the CPU, bf16
// on a GPU); fp8 stores e4m3 codes with scale 1 (vLLM's default), half of bf16's bytes.
enum class KvCacheDType : uint8_t { kAuto, kFp8 };

// "auto", "fp8" or "fp8_e4m3" (vLLM's names); an Error names the accepted values.
KvCacheDType parse_kv_cache_dtype(std::string_view name);
// The dtype of the cache tensors on `device`.
DType kv_cache_storage_dtype(KvCacheDType dtype, Device device);

struct KvCacheShape {
  int64_t num_layers = 0;    // attention layers only
  int64_t num_blocks = 0;
  int64_t block_size = 16;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  DType dtype = DType::kF32;

  int64_t bytes_per_block() const;  // all layers, K and V
};

class KvCache {
 public:
  KvCache(const KvCacheShape& shape, Backend& backend);

  const KvCacheShape& shape() const { return shape_; }
  // [num_blocks, block_size, num_kv_heads, head_dim]
  const Tensor& k(int64_t layer) const { return k_[layer]; }
  const Tensor& v(int64_t layer) const { return v_[layer]; }

 private:
  KvCacheShape shape_;
  std::vector<Tensor> k_, v_;
};

}  // namespace strata
