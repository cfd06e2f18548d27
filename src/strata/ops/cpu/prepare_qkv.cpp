// CPU prepare_qkv: the reference composition of the separate ops (split, per-head RMSNorm,
// rotary, store_kv), f32 activations.
#include <cstring>

#include "strata/core/error.h"
#include "strata/ops/paged_attention.h"
#include "strata/ops/prepare_qkv.h"
#include "strata/ops/rms_norm.h"
#include "strata/ops/rope.h"

namespace strata::cpu {

void prepare_qkv(const ops::PrepareQkvArgs& args, const ops::PrepareQkvParams& params) {
  STRATA_CHECK(args.qkv.dtype() == DType::kF32 && args.q_out.dtype() == DType::kF32);
  const int64_t t = args.qkv.dim(0), nh = args.q_out.dim(1), hd = args.q_out.dim(2);
  const int64_t nkv = args.k_cache.dim(2), width = args.qkv.dim(1);
  Tensor k = Tensor::host(DType::kF32, {t, nkv, hd});
  Tensor v = Tensor::host(DType::kF32, {t, nkv, hd});
  const float* src = args.qkv.data_as<float>();
  for (int64_t i = 0; i < t; ++i) {
    const float* row = src + i * width;
    std::memcpy(args.q_out.data_as<float>() + i * nh * hd, row, nh * hd * sizeof(float));
    std::memcpy(k.data_as<float>() + i * nkv * hd, row + nh * hd, nkv * hd * sizeof(float));
    std::memcpy(v.data_as<float>() + i * nkv * hd, row + (nh + nkv) * hd, nkv * hd * sizeof(float));
  }
  if (args.q_norm.defined()) {
    const ops::RmsNormParams norm{.eps = params.norm_eps, .unit_offset = params.norm_unit_offset};
    const Tensor q_rows = args.q_out.reshape({t * nh, hd}), k_rows = k.reshape({t * nkv, hd});
    rms_norm(q_rows, nullptr, args.q_norm, q_rows, norm);
    rms_norm(k_rows, nullptr, args.k_norm, k_rows, norm);
  }
  if (params.rotary_dim > 0)
    rope(args.q_out, k, args.positions, args.inv_freq,
         {.rotary_dim = params.rotary_dim, .attention_scaling = params.attention_scaling});
  store_kv(k, v, args.slot_mapping, args.k_cache, args.v_cache);
}

}  // namespace strata::cpu
