#include "strata/cache/kv_cache.h"

namespace strata {

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
