// CUDA weighted sums of table rows: one block per output row, threads across the width, the
// taps summed in order in f32 (as the CPU does). A tap outside the table adds nothing.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/embedding_bag.h"

namespace strata::cuda {
namespace {

struct EmbeddingBagParams {
  const float* table;      // [V, D]
  const int32_t* indices;  // [N, K]
  const float* weights;    // [N, K]
  float* out;              // [N, D]
  int64_t num_rows;        // V
  int64_t dim;             // D
  int64_t num_taps;        // K
};

__global__ void embedding_bag_kernel(EmbeddingBagParams p) {
  const int64_t n = blockIdx.x;
  const int32_t* indices = p.indices + n * p.num_taps;
  const float* weights = p.weights + n * p.num_taps;
  for (int64_t i = threadIdx.x; i < p.dim; i += blockDim.x) {
    float sum = 0.0f;
    for (int64_t k = 0; k < p.num_taps; ++k) {
      const int32_t row = indices[k];
      if (row >= 0 && row < p.num_rows) sum += weights[k] * p.table[row * p.dim + i];
    }
    p.out[n * p.dim + i] = sum;
  }
}

}  // namespace

void embedding_bag(const Tensor& table, const Tensor& indices, const Tensor& weights, const Tensor& out) {
  const int64_t n = indices.dim(0);
  if (n == 0) return;
  STRATA_CHECK(n <= INT32_MAX);
  const EmbeddingBagParams p{.table = table.data_as<float>(), .indices = indices.data_as<int32_t>(),
                             .weights = weights.data_as<float>(), .out = out.data_as<float>(),
                             .num_rows = table.dim(0), .dim = table.dim(1), .num_taps = indices.dim(1)};
  const int threads = p.dim >= 256 ? 256 : 64;
  embedding_bag_kernel<<<static_cast<unsigned>(n), threads, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
