// CUDA embedding lookup: one block per token copies (and widens or narrows) its table row.
// Ids outside the table's rows give a row of zeros rather than a read out of bounds; a
// vocabulary shard's table starts at first_id, so other ranks' tokens get zeros too.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/embedding.h"

namespace strata::cuda {
namespace {

struct EmbeddingParams {
  const void* table;    // [vocab, hidden]
  const int32_t* ids;   // [T]
  void* out;            // [T, hidden]
  int64_t vocab;        // rows of the table
  int64_t hidden;
  int64_t first_id;     // the token id of the table's row 0
};

template <typename Tin, typename Tout>
__global__ void embedding_kernel(EmbeddingParams p) {
  const int64_t t = blockIdx.x;
  const int64_t id = p.ids[t] - p.first_id;
  const bool valid = id >= 0 && id < p.vocab;
  const Tin* src = static_cast<const Tin*>(p.table) + (valid ? id : 0) * p.hidden;
  Tout* dst = static_cast<Tout*>(p.out) + t * p.hidden;
  for (int64_t i = threadIdx.x; i < p.hidden; i += blockDim.x)
    dst[i] = from_f32<Tout>(valid ? to_f32(src[i]) : 0.0f);
}

template <typename Tin>
void launch_for_table(const EmbeddingParams& p, DType out_dtype, int64_t num_tokens) {
  const cudaStream_t stream = current_stream();
  if (out_dtype == DType::kBF16) {
    embedding_kernel<Tin, __nv_bfloat16><<<num_tokens, 256, 0, stream>>>(p);
  } else if (out_dtype == DType::kF32) {
    embedding_kernel<Tin, float><<<num_tokens, 256, 0, stream>>>(p);
  } else {
    unsupported_dtype("embedding out", out_dtype);
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace

void embedding_shard(const Tensor& table, const Tensor& ids, int64_t first_id, const Tensor& out) {
  const int64_t num_tokens = ids.dim(0);
  if (num_tokens == 0) return;
  const EmbeddingParams p{.table = table.data(), .ids = ids.data_as<int32_t>(), .out = out.data(),
                          .vocab = table.dim(0), .hidden = table.dim(1), .first_id = first_id};
  switch (table.dtype()) {
    case DType::kBF16: launch_for_table<__nv_bfloat16>(p, out.dtype(), num_tokens); break;
    case DType::kF32: launch_for_table<float>(p, out.dtype(), num_tokens); break;
    case DType::kF16: launch_for_table<__half>(p, out.dtype(), num_tokens); break;
    default: unsupported_dtype("embedding table", table.dtype());
  }
}

void embedding(const Tensor& table, const Tensor& ids, const Tensor& out) { embedding_shard(table, ids, 0, out); }

}  // namespace strata::cuda
