// cp.async.bulk (the copy engine moving global memory into shared memory) completed through
// an mbarrier: the pieces of the weight-streaming GEMVs.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace strata::cuda {

__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// One thread, before any use: the barrier completes a phase when one arrival and its bytes land.
__device__ __forceinline__ void mbarrier_init(uint32_t barrier) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(barrier) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One thread: arm the barrier for `bytes` and start the copy global -> shared (16-byte aligned,
// bytes a multiple of 16). A reused dst must have its last reads ordered before this call by a
// block barrier.
__device__ __forceinline__ void bulk_copy_to_shared(uint32_t barrier, uint32_t dst, const void* src, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(barrier)
               : "memory");
}

// Every waiting thread: returns once the barrier's phase with this parity (0, 1, 0, ...) completed.
__device__ __forceinline__ void mbarrier_wait(uint32_t barrier, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  }
}

}  // namespace strata::cuda
