// CPU bidirectional attention within segments: per (segment, head, tile of 64 queries), the
// scores Q K^T and the weighted values P V are single-threaded OpenBLAS sgemms on the strided
// heads (leading dimension heads * head_dim), with our threads splitting the tiles.
#include "strata/ops/varlen_attention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/core/parallel.h"

namespace strata::cpu {
namespace {

constexpr int64_t kQueryTile = 64;

struct Tile {
  int64_t begin, end;  // the segment's tokens
  int64_t q0, rows;    // the tile's first query and its number of queries
  int64_t head;
};

// scores: [rows, end - begin]; row-wise softmax in place.
void softmax_rows(float* scores, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float* s = scores + r * cols;
    const float max_score = *std::max_element(s, s + cols);
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += s[j] = std::exp(s[j] - max_score);
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t j = 0; j < cols; ++j) s[j] *= inv;
  }
}

void attend_tile(const Tensor& q, const Tensor& k, const Tensor& v, const Tile& t, float scale, const Tensor& out,
                 std::vector<float>& scores) {
  const int64_t heads = q.dim(1), d = q.dim(2), stride = heads * d, n = t.end - t.begin;
  scores.resize(t.rows * n);
  const float* qp = q.data_as<float>() + t.q0 * stride + t.head * d;
  const float* kp = k.data_as<float>() + t.begin * stride + t.head * d;
  const float* vp = v.data_as<float>() + t.begin * stride + t.head * d;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(t.rows), static_cast<int>(n),
              static_cast<int>(d), scale, qp, static_cast<int>(stride), kp, static_cast<int>(stride), 0.0f,
              scores.data(), static_cast<int>(n));
  softmax_rows(scores.data(), t.rows, n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(t.rows), static_cast<int>(d),
              static_cast<int>(n), 1.0f, scores.data(), static_cast<int>(n), vp, static_cast<int>(stride), 0.0f,
              out.data_as<float>() + t.q0 * stride + t.head * d, static_cast<int>(stride));
}

}  // namespace

void varlen_attention(const Tensor& q, const Tensor& k, const Tensor& v, const ops::VarlenSegments& segments,
                      float scale, const Tensor& out) {
  static const bool single_threaded_blas = [] {  // our threads split the tiles, as linear's split rows
    openblas_set_num_threads(1);
    return true;
  }();
  (void)single_threaded_blas;
  const int32_t* cu_seqlens = segments.cu_seqlens.data_as<int32_t>();
  std::vector<Tile> tiles;
  for (int64_t s = 0; s + 1 < segments.cu_seqlens.numel(); ++s)
    for (int64_t h = 0; h < q.dim(1); ++h)
      for (int64_t q0 = cu_seqlens[s]; q0 < cu_seqlens[s + 1]; q0 += kQueryTile)
        tiles.push_back({.begin = cu_seqlens[s], .end = cu_seqlens[s + 1], .q0 = q0,
                         .rows = std::min<int64_t>(kQueryTile, cu_seqlens[s + 1] - q0), .head = h});
  parallel_for(static_cast<int64_t>(tiles.size()), 1, [&](int64_t first, int64_t last) {
    std::vector<float> scores;
    for (int64_t i = first; i < last; ++i) attend_tile(q, k, v, tiles[i], scale, out, scores);
  });
}

}  // namespace strata::cpu
