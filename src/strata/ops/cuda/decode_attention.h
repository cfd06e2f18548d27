// Paged attention for steps where every row has one query token (decode). The general
// kernel packs 64 query rows per block, of which a decode block fills only the group size;
// this one gives each block of four warps one (row, KV head, key split) and streams K/V
// through cp.async; the last split of a (row, KV head) to finish merges the splits.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace strata::cuda {

struct DecodeAttentionArgs {
  const __nv_bfloat16* q;        // [R, Hq, D]: one token per row
  const void* k_cache;           // [num_blocks, block_size, Hkv, D] bf16, or e4m3 with kv_fp8
  const void* v_cache;           // [num_blocks, block_size, Hkv, D]
  __nv_bfloat16* out;            // [R, Hq, D]
  const int32_t* kv_lens;        // [R] keys after this step (the query is the last)
  const int32_t* block_tables;   // [R, max_blocks_per_row]
  const void* sinks = nullptr;   // [Hq] f32 or bf16, or null
  bool sinks_bf16 = false;
  bool kv_fp8 = false;           // caches hold e4m3 codes (scale 1)
  int64_t max_blocks_per_row = 0;
  int num_rows = 0, num_q_heads = 0, num_kv_heads = 0, block_size = 0, head_dim = 0;
  float scale = 1.0f, softcap = 0.0f;
  int sliding_window = 0;
  // Lab levers (bench/gpu_attention_bench): 0 keeps the kernel's choice. num_splits: key splits
  // in the grid (<= 64); min_split_keys: fewest keys a live split takes (rounded up to 64).
  int num_splits = 0, min_split_keys = 0;
};

// Whether the decode kernel takes this shape (head_dim 64/128/256, group size <= 16).
bool decode_attention_supported(int head_dim, int group);
void decode_attention(const DecodeAttentionArgs& args, cudaStream_t stream);

}  // namespace strata::cuda
