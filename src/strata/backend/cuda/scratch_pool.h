// Device memory that CUDA ops keep between launches of one op (split-KV partials, weights
// widened for cuBLASLt, MoE positions, chunk states), one buffer a use, owned by the CUDA
// backend whose stream is current: two backends in a process never share one. Buffers only
// grow, never while a graph is being captured (the runner warms shapes up first), and an
// outgrown buffer stays until the backend goes: a captured graph may still point at it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace strata::cuda {

enum class ScratchUse : uint8_t {
  kDecodeAttentionPartials,
  kPagedAttentionPartials,
  kWidenedWeight,     // a quantized linear's weight as bf16, for steps past the GEMVs' rows
  kGatedExpertInput,  // act(gate) * up of quantized experts' rows
  kWidenedExperts,    // quantized experts as bf16, for the grouped GEMM
  kCombinePositions,  // each (token, expert) pair's row in the sorted order
  kGatedDeltaChunks,  // the chunked Gated DeltaNet's per-chunk states
  kQuantGemmPartials, // the quantized GEMM's f32 sums of each K split
  kCount,
};

class ScratchPool {
 public:
  ScratchPool() = default;
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;
  ~ScratchPool();
  // At least `bytes` of device memory for `use`; the same pointer until a larger request.
  void* get(ScratchUse use, int64_t bytes);

 private:
  struct Buffer {
    void* current = nullptr;
    int64_t bytes = 0;
  };
  std::array<Buffer, static_cast<size_t>(ScratchUse::kCount)> buffers_;
  std::vector<void*> outgrown_;
};

// The pool of the backend that made itself current on this thread (beside current_stream()).
void set_current_scratch_pool(ScratchPool* pool);
// At least `bytes` for `use` from that pool.
void* scratch(ScratchUse use, int64_t bytes);

}  // namespace strata::cuda
