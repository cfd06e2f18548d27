// KvCache: the K and V block storage of every attention layer on one device, indexed by
// the block ids of a BlockPool shared by all layers.
#pragma once

#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/tensor.h"

namespace strata {

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
