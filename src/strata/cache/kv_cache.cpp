#include "strata/cache/kv_cache.h"

#include "strata/core/error.h"

namespace strata {

KvCacheDType parse_kv_cache_dtype(std::string_view name) {
  if (name == "auto") return KvCacheDType::kAuto;
  if (name == "fp8" || name == "fp8_e4m3") return KvCacheDType::kFp8;
  fail("--kv-cache-dtype {}: use auto, fp8 or fp8_e4m3", name);
}

DType kv_cache_storage_dtype(KvCacheDType dtype, Device device) {
  if (dtype == KvCacheDType::kFp8) return DType::kF8_E4M3;
  return device.is_cpu() ? DType::kF32 : DType::kBF16;
}

int64_t KvCacheShape::bytes_per_block() const {
  return 2 * num_layers * dtype_bytes(dtype, block_size * num_kv_heads * head_dim);
}

KvCache::KvCache(const KvCacheShape& shape, Backend& backend) : shape_(shape) {
  const Shape layer_shape{shape.num_blocks, shape.block_size, shape.num_kv_heads, shape.head_dim};
  for (int64_t l = 0; l < shape.num_layers; ++l) {
    k_.push_back(backend.empty(shape.dtype, layer_shape));
    v_.push_back(backend.empty(shape.dtype, layer_shape));
  }
}

}  // namespace strata
