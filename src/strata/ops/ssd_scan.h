// Mamba-2 selective state space scan (SSD) over one sequence segment with its carried state,
// including the discretisation transformers computes around the kernel:
//   dt = clamp(softplus(dt + dt_bias), dt_min, dt_max), A = -exp(A_log), y += D * x.
// ops/cpu/ssd_scan.h gives the recurrence; head h reads group h / (num_heads / n_groups).
// With state_slots it is a batched decode step: every token is its own sequence, whose state
// is one slot of a slot-major state array (one launch for all rows, graph-stable addresses).
#pragma once

#include <limits>
#include <string>

#include "strata/core/tensor.h"

namespace strata::ops {

struct SsdScanArgs {
  Tensor xbc;                  // [T, nh * hd + 2 * n_groups * N]: the conv output, x | B | C
  Tensor dt;                   // [T, nh] raw time steps (before bias and softplus)
  Tensor dt_bias;              // [nh] f32
  Tensor A_log;                // [nh] f32
  Tensor D;                    // [nh] f32, or undefined for no skip term
  Tensor state;                // [nh, hd, N] f32: this sequence's state in, updated out;
                               // with state_slots: [num_slots, nh, hd, N] f32, every slot
  Tensor y;                    // [T, nh, hd]
  Tensor intermediate_states;  // [T, nh, hd, N] f32: state after each token, or undefined
  // Batched decode: token t's state is state[state_slots[t]]; needs no intermediates. Slots
  // are in [0, num_slots) and distinct, except rows whose state is scratch (graph padding rows
  // share one). The CPU throws strata::Error on a slot out of range,
  // the CUDA kernel leaves that row untouched (it cannot report).
  Tensor state_slots;          // [T] i32 on xbc's device, or undefined (xbc is one sequence)
};

struct SsdScanOptions {
  int64_t n_groups = 1;
  float dt_min = 0.0f;  // HF Mamba2: time_step_limit; Nemotron-H: time_step_min
  float dt_max = std::numeric_limits<float>::infinity();
  int64_t chunk_size = 256;  // config chunk_size, for the chunked form
};

void ssd_scan(const SsdScanArgs& args, const SsdScanOptions& options);

// The CUDA backend scans a segment token by token (short and verify rows, which may need
// per-token states) or in chunks of kSsdScanChunkTokens (prefill rows); the chunk length is
// the kernel's own, the math is the same for any chunking.
enum class SsdScanForm { kRecurrent, kChunked };
constexpr int64_t kSsdScanChunkTokens = 64;

// Chunked when the segment has at least one full chunk, no intermediate_states are asked
// for, state_size is a power of two in 16..256 and head_dim a multiple of 32.
SsdScanForm ssd_scan_cuda_form(int64_t num_tokens, int64_t head_dim, int64_t state_size,
                               bool intermediate_states);

// State sizes the CUDA kernels are compiled for, and their largest head size.
inline constexpr int64_t kCudaSsdStateSizes[] = {16, 32, 64, 128, 256};
inline constexpr int64_t kCudaSsdMaxHeadDim = 256;
// Refuses, when `layer` is built, a head or state size `device` has no kernel for (an Error
// naming the layer and the limit), so that no step meets it.
void check_ssd_scan_supported(Device device, int64_t head_dim, int64_t state_size, const std::string& layer);

}  // namespace strata::ops

namespace strata::cpu {
void ssd_scan(const ops::SsdScanArgs& args, const ops::SsdScanOptions& options);
}
namespace strata::cuda {
void ssd_scan(const ops::SsdScanArgs& args, const ops::SsdScanOptions& options);
// A given form (benchmarks); kChunked throws strata::Error where ssd_scan_cuda_form would not
// pick it for a full chunk.
void ssd_scan(const ops::SsdScanArgs& args, const ops::SsdScanOptions& options, ops::SsdScanForm form);
}
