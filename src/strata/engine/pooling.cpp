#include "strata/engine/pooling.h"

#include <algorithm>
#include <cmath>

#include "strata/core/error.h"

namespace strata {

bool pools_every_position(const PoolerConfig& pooler) { return pooler.pooling_type != PoolingType::kLast; }

void pool_rows(const PoolerConfig& pooler, std::span<const float> rows, int64_t width, int32_t first_position,
               PoolingState& state) {
  STRATA_CHECK(width > 0 && rows.size() % static_cast<size_t>(width) == 0);
  const int64_t num_rows = static_cast<int64_t>(rows.size()) / width;
  if (num_rows == 0) return;
  const auto row = [&](int64_t r) { return rows.subspan(static_cast<size_t>(r * width), static_cast<size_t>(width)); };
  switch (pooler.pooling_type) {
    case PoolingType::kLast: {
      const std::span<const float> last = row(num_rows - 1);
      state.values.assign(last.begin(), last.end());
      state.num_rows = 1;
      return;
    }
    case PoolingType::kCls: {
      if (first_position != 0) return;
      state.values.assign(row(0).begin(), row(0).end());
      state.num_rows = 1;
      return;
    }
    case PoolingType::kMean: {
      if (state.values.empty()) state.values.assign(static_cast<size_t>(width), 0.0);
      for (int64_t r = 0; r < num_rows; ++r)
        for (int64_t j = 0; j < width; ++j) state.values[static_cast<size_t>(j)] += row(r)[static_cast<size_t>(j)];
      state.num_rows += static_cast<int32_t>(num_rows);
      return;
    }
  }
}

namespace {

void l2_normalize(std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x * x;
  const double norm = std::max(std::sqrt(sum), 1e-12);  // torch.nn.functional.normalize's eps
  for (double& x : v) x /= norm;
}

double dense_activation(double x, DenseActivation act) {
  switch (act) {
    case DenseActivation::kIdentity: return x;
    case DenseActivation::kTanh: return std::tanh(x);
    case DenseActivation::kRelu: return std::max(x, 0.0);
    case DenseActivation::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case DenseActivation::kGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  }
  return x;
}

// v = activation(W v + b), as sentence-transformers' Dense module.
void apply_dense(const PoolerDense& dense, std::vector<double>& v) {
  STRATA_CHECK(static_cast<int64_t>(v.size()) == dense.in_features);
  std::vector<double> out(static_cast<size_t>(dense.out_features));
  for (int64_t o = 0; o < dense.out_features; ++o) {
    double sum = dense.bias.empty() ? 0.0 : dense.bias[static_cast<size_t>(o)];
    const float* row = dense.weight.data() + o * dense.in_features;
    for (int64_t i = 0; i < dense.in_features; ++i) sum += row[i] * v[static_cast<size_t>(i)];
    out[static_cast<size_t>(o)] = dense_activation(sum, dense.activation);
  }
  v = std::move(out);
}

void classifier_activation(std::vector<double>& v) {
  if (v.size() == 1) {
    v[0] = 1.0 / (1.0 + std::exp(-v[0]));
    return;
  }
  const double top = *std::max_element(v.begin(), v.end());
  double sum = 0.0;
  for (double& x : v) sum += (x = std::exp(x - top));
  for (double& x : v) x /= sum;
}

}  // namespace

std::vector<float> finish_pooling(const PoolerConfig& pooler, const PoolingState& state, int32_t dimensions) {
  STRATA_CHECK(state.num_rows > 0);
  std::vector<double> v = state.values;
  if (pooler.pooling_type == PoolingType::kMean)
    for (double& x : v) x /= state.num_rows;
  if (pooler.head == ModelHead::kClassifier) {
    if (pooler.activation) classifier_activation(v);
  } else {
    for (const auto& dense : pooler.dense) apply_dense(*dense, v);
    if (dimensions > 0 && static_cast<size_t>(dimensions) < v.size()) v.resize(static_cast<size_t>(dimensions));
    if (pooler.normalize) l2_normalize(v);
  }
  return {v.begin(), v.end()};
}

}  // namespace strata
