// CUDA MLA key/value expansion and head narrowing: plain copies, one block per (token, head).
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/mla.h"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;

struct ExpandParams {
  const bf16* kv;     // [T, H, nope + v]
  const bf16* k_rot;  // [T, rope]
  bf16* k_out;        // [T, H, rope + nope]
  bf16* v_out;        // [T, H, rope + nope]
  int64_t heads, nope, v_dim, rope;
};

__global__ void mla_expand_kv_kernel(ExpandParams p) {
  const int64_t row = blockIdx.x, t = row / p.heads, width = p.rope + p.nope;
  const bf16* src = p.kv + row * (p.nope + p.v_dim);
  bf16* k = p.k_out + row * width;
  bf16* v = p.v_out + row * width;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x) {
    k[c] = c < p.rope ? p.k_rot[t * p.rope + c] : src[c - p.rope];
    v[c] = c < p.v_dim ? src[p.nope + c] : __float2bfloat16(0.0f);
  }
}

__global__ void narrow_heads_kernel(const bf16* src, bf16* out, int64_t from, int64_t to) {
  const int64_t row = blockIdx.x;
  for (int64_t c = threadIdx.x; c < to; c += blockDim.x) out[row * to + c] = src[row * from + c];
}

}  // namespace

void mla_expand_kv(const Tensor& kv, const Tensor& k_rot, int64_t nope_dim, const Tensor& k_out, const Tensor& v_out) {
  if (kv.dtype() != DType::kBF16) unsupported_dtype("mla_expand_kv", kv.dtype());
  const int64_t rows = kv.dim(0) * kv.dim(1);
  if (rows == 0) return;
  const ExpandParams p{.kv = kv.data_as<const bf16>(), .k_rot = k_rot.data_as<const bf16>(),
                       .k_out = k_out.data_as<bf16>(), .v_out = v_out.data_as<bf16>(), .heads = kv.dim(1),
                       .nope = nope_dim, .v_dim = kv.dim(2) - nope_dim, .rope = k_rot.dim(1)};
  mla_expand_kv_kernel<<<rows, 128, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

void narrow_heads(const Tensor& src, const Tensor& out) {
  if (src.dtype() != DType::kBF16) unsupported_dtype("narrow_heads", src.dtype());
  const int64_t rows = src.dim(0) * src.dim(1);
  if (rows == 0) return;
  narrow_heads_kernel<<<rows, 128, 0, current_stream()>>>(src.data_as<const bf16>(), out.data_as<bf16>(), src.dim(2),
                                                           out.dim(2));
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
