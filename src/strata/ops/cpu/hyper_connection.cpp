// Hyper-connection weights and stream mixing in f32, in transformers' order of operations
// (DeepseekV4HyperConnection): sigmoid / softmax, then column-first Sinkhorn sweeps.
#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/core/parallel.h"
#include "strata/ops/hyper_connection.h"

namespace strata::cpu {
namespace {

float sigmoid(float v) { return 1.f / (1.f + std::exp(-v)); }

// m: [n, n] row-major, m[j * n + k]. Divides each column (sum over j), then alternates rows and
// columns: iters sweeps in all, as transformers does.
void sinkhorn(float* m, int64_t n, int64_t iters, float eps) {
  auto normalise_columns = [&] {
    for (int64_t k = 0; k < n; ++k) {
      float sum = 0.f;
      for (int64_t j = 0; j < n; ++j) sum += m[j * n + k];
      for (int64_t j = 0; j < n; ++j) m[j * n + k] /= sum + eps;
    }
  };
  normalise_columns();
  for (int64_t it = 1; it < iters; ++it) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.f;
      for (int64_t k = 0; k < n; ++k) sum += m[j * n + k];
      for (int64_t k = 0; k < n; ++k) m[j * n + k] /= sum + eps;
    }
    normalise_columns();
  }
}

// comb: softmax over each row of w * s + b, plus eps.
void softmax_rows(const float* w, const float* b, float s, int64_t n, float eps, float* comb) {
  for (int64_t j = 0; j < n; ++j) {
    float mx = -INFINITY;
    for (int64_t k = 0; k < n; ++k) mx = std::max(mx, w[j * n + k] * s + b[j * n + k]);
    float sum = 0.f;
    for (int64_t k = 0; k < n; ++k) sum += comb[j * n + k] = std::exp(w[j * n + k] * s + b[j * n + k] - mx);
    for (int64_t k = 0; k < n; ++k) comb[j * n + k] = comb[j * n + k] / sum + eps;
  }
}

}  // namespace

void hyper_connection_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale,
                              const ops::HyperWeightsOptions& options, const Tensor& pre, const Tensor& post,
                              const Tensor& comb) {
  const int64_t n = options.num_streams, width = (2 + n) * n;
  const float* b = base.data_as<float>();
  const float* s = scale.data_as<float>();
  parallel_for(mixes.dim(0), 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* w = mixes.data_as<float>() + t * width;
      for (int64_t j = 0; j < n; ++j) {
        pre.data_as<float>()[t * n + j] = sigmoid(w[j] * s[0] + b[j]) + options.eps;
        post.data_as<float>()[t * n + j] = 2.f * sigmoid(w[n + j] * s[1] + b[n + j]);
      }
      float* c = comb.data_as<float>() + t * n * n;
      softmax_rows(w + 2 * n, b + 2 * n, s[2], n, options.eps, c);
      sinkhorn(c, n, options.sinkhorn_iters, options.eps);
    }
  });
}

void hyper_head_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale, float eps, const Tensor& pre) {
  const int64_t n = mixes.dim(1);
  const float s = scale.data_as<float>()[0];
  for (int64_t i = 0; i < mixes.numel(); ++i)
    pre.data_as<float>()[i] = sigmoid(mixes.data_as<float>()[i] * s + base.data_as<float>()[i % n]) + eps;
}

void hyper_collapse(const Tensor& streams, const Tensor& pre, const Tensor& out) {
  const int64_t n = streams.dim(1), hidden = streams.dim(2);
  parallel_for(streams.dim(0), 4, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* x = streams.data_as<float>() + t * n * hidden;
      const float* p = pre.data_as<float>() + t * n;
      float* o = out.data_as<float>() + t * hidden;
      for (int64_t d = 0; d < hidden; ++d) {
        float sum = 0.f;
        for (int64_t j = 0; j < n; ++j) sum += p[j] * x[j * hidden + d];
        o[d] = sum;
      }
    }
  });
}

void hyper_expand(const Tensor& streams, const Tensor& block_out, const Tensor& post, const Tensor& comb) {
  const int64_t n = streams.dim(1), hidden = streams.dim(2);
  parallel_for(streams.dim(0), 4, [&](int64_t begin, int64_t end) {
    std::vector<float> mixed(n * hidden);
    for (int64_t t = begin; t < end; ++t) {
      float* x = streams.data_as<float>() + t * n * hidden;
      const float* y = block_out.data_as<float>() + t * hidden;
      const float* p = post.data_as<float>() + t * n;
      const float* c = comb.data_as<float>() + t * n * n;
      for (int64_t k = 0; k < n; ++k)
        for (int64_t d = 0; d < hidden; ++d) {
          float sum = 0.f;
          for (int64_t j = 0; j < n; ++j) sum += c[j * n + k] * x[j * hidden + d];
          mixed[k * hidden + d] = p[k] * y[d] + sum;
        }
      std::copy(mixed.begin(), mixed.end(), x);
    }
  });
}

void hyper_repeat(const Tensor& x, const Tensor& streams) {
  const int64_t n = streams.dim(1), hidden = streams.dim(2);
  for (int64_t t = 0; t < streams.dim(0); ++t)
    for (int64_t j = 0; j < n; ++j)
      std::copy_n(x.data_as<float>() + t * hidden, hidden, streams.data_as<float>() + (t * n + j) * hidden);
}

}  // namespace strata::cpu
