// CPU linear: one token (decode) streams each weight row once through AVX2 dots; 2-16
// tokens (batched decode, verify) run the register-blocked small_batch_gemm; more (prefill)
// widen row tiles to f32 for single-threaded OpenBLAS sgemm. Our threads split the rows.
#include "strata/ops/linear.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "strata/core/parallel.h"
#include "strata/ops/cpu/convert.h"
#include "strata/ops/cpu/quant_matmul.h"
#include "strata/ops/cpu/small_batch_gemm.h"

namespace strata::cpu {
namespace {

constexpr int64_t kTileRows = 64;

void linear_matvec(const Tensor& x, const Tensor& weight, const Tensor& out) {
  const int64_t tokens = x.dim(0), in = x.dim(1), rows = weight.dim(0);
  const int64_t row_bytes = dtype_bytes(weight.dtype(), in);
  const char* w = static_cast<const char*>(weight.data());
  parallel_for(rows, 64, [&](int64_t begin, int64_t end) {
    float dots[kDotRowsF32];
    for (int64_t o = begin; o < end; o += kDotRowsF32) {
      const int n = static_cast<int>(std::min<int64_t>(kDotRowsF32, end - o));
      for (int64_t t = 0; t < tokens; ++t) {  // rows stay in L1 for the later tokens
        dot_rows_f32(x.data_as<float>() + t * in, w + o * row_bytes, weight.dtype(), row_bytes, n, in, dots);
        for (int r = 0; r < n; ++r) out.data_as<float>()[t * rows + o + r] = dots[r];
      }
    }
  });
}

void linear_tiled(const Tensor& x, const Tensor& weight, const Tensor& out) {
  const int64_t tokens = x.dim(0), in = x.dim(1), rows = weight.dim(0);
  const int64_t row_bytes = dtype_bytes(weight.dtype(), in);
  const char* w = static_cast<const char*>(weight.data());
  const int64_t num_tiles = (rows + kTileRows - 1) / kTileRows;
  parallel_for(num_tiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> tile(kTileRows * in);
    for (int64_t tile_index = begin; tile_index < end; ++tile_index) {
      const int64_t r0 = tile_index * kTileRows;
      const int64_t n = std::min(kTileRows, rows - r0);
      const float* wf;
      if (weight.dtype() == DType::kF32) {
        wf = weight.data_as<float>() + r0 * in;
      } else {
        for (int64_t r = 0; r < n; ++r)
          widen_to_f32(w + (r0 + r) * row_bytes, weight.dtype(), in, tile.data() + r * in);
        wf = tile.data();
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(tokens),
                  static_cast<int>(n), static_cast<int>(in), 1.0f, x.data_as<float>(),
                  static_cast<int>(in), wf, static_cast<int>(in), 0.0f, out.data_as<float>() + r0,
                  static_cast<int>(rows));
    }
  });
}

}  // namespace

void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out) {
  static const bool single_threaded_blas = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)single_threaded_blas;
  if (is_quantized(weight.dtype())) {  // quant_matmul picks int8 dots or dequantise + sgemm
    quant_matmul({.x = x.data_as<float>(), .w = weight.data(), .y = out.data_as<float>(),
                  .w_dtype = weight.dtype(), .num_tokens = x.dim(0), .in_features = x.dim(1),
                  .out_features = weight.dim(0)});
  } else {
    switch (linear_kernel_for(weight.dtype(), x.dim(0))) {
      case LinearKernel::kDotRows: linear_matvec(x, weight, out); break;
      case LinearKernel::kSmallBatch:
        small_batch_gemm({.x = x.data_as<float>(), .w = weight.data(), .y = out.data_as<float>(),
                          .w_dtype = weight.dtype(), .num_tokens = x.dim(0), .in_features = x.dim(1),
                          .out_features = weight.dim(0)});
        break;
      case LinearKernel::kTiledSgemm: linear_tiled(x, weight, out); break;
    }
  }
  if (bias.defined()) {
    std::vector<float> b(weight.dim(0));
    widen_to_f32(bias.data(), bias.dtype(), weight.dim(0), b.data());
    for (int64_t t = 0; t < x.dim(0); ++t)
      for (int64_t o = 0; o < weight.dim(0); ++o) out.data_as<float>()[t * weight.dim(0) + o] += b[o];
  }
}

// The CPU runs the fused forms as their parts: it is the reference they are tested against.
void linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
            const ops::LinearOptions& options) {
  const Tensor& input = options.gated_input ? options.gated_scratch : x;
  if (options.gated_input) cpu::gated_activation_halves(x, options.gated_scratch, *options.gated_input);
  if (!options.accumulate) return linear(input, weight, bias, out);
  Tensor product = Tensor::host(DType::kF32, out.shape());
  linear(input, weight, bias, product);
  float* dst = out.data_as<float>();
  const float* src = product.data_as<float>();
  for (int64_t i = 0; i < out.numel(); ++i) dst[i] += src[i];
}

}  // namespace strata::cpu
