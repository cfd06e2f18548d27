#include "strata/model/layers/hyper_connection.h"

#include <algorithm>

#include "strata/ops/elementwise.h"
#include "strata/ops/linear.h"
#include "strata/ops/rms_norm.h"

namespace strata {
namespace {

Tensor ones(int64_t n, Backend& backend) {
  Tensor t = Tensor::host(DType::kF32, {n});
  std::fill_n(t.data_as<float>(), n, 1.0f);
  return backend.device().is_cpu() ? t : backend.from_host(t);
}

// mixes = linear(rms_norm(streams), fn): [T, fn rows] f32, in f32 as transformers computes them
// (the streams widened first where they are bf16).
Tensor stream_mixes(const Tensor& streams, const Tensor& ones, const Tensor& fn, float eps, ForwardContext& ctx) {
  Tensor normed = ctx.temp_f32(streams.shape());
  if (streams.dtype() != DType::kF32) ops::convert(streams, normed);
  ops::rms_norm(streams.dtype() == DType::kF32 ? streams : normed, ones, normed, {.eps = eps});
  Tensor mixes = ctx.temp_f32({streams.dim(0), fn.dim(0)});
  ops::linear(normed, fn, Tensor(), mixes);
  return mixes;
}

Shape as_streams(const Tensor& streams, int64_t n) { return {streams.dim(0), n, streams.dim(1) / n}; }

}  // namespace

HyperConnection::HyperConnection(const HyperConnectionOptions& options, const WeightScope& w, const std::string& prefix)
    : options_(options) {
  ops::check_hyper_connection_supported(w.device(), options.weights.num_streams, w.prefix());
  const int64_t n = options.weights.num_streams, width = (2 + n) * n;
  fn_ = w.get_f32(prefix + "_fn", {width, n * options.hidden_size});
  base_ = w.get_f32(prefix + "_base", {width});
  scale_ = w.get_f32(prefix + "_scale", {3});
  ones_ = ones(n * options.hidden_size, w.weights().backend());
}

HyperConnection::Mix HyperConnection::collapse(const Tensor& streams, const Tensor& collapsed, ForwardContext& ctx) const {
  const int64_t t = streams.dim(0), n = options_.weights.num_streams;
  const Tensor mixes = stream_mixes(streams, ones_, fn_, options_.rms_norm_eps, ctx);
  Tensor pre = ctx.temp_f32({t, n});
  Mix mix{.post = ctx.temp_f32({t, n}), .comb = ctx.temp_f32({t, n, n})};
  ops::hyper_connection_weights(mixes, base_, scale_, options_.weights, pre, mix.post, mix.comb);
  ops::hyper_collapse(streams.reshape(as_streams(streams, n)), pre, collapsed);
  return mix;
}

void HyperConnection::expand(const Tensor& streams, const Tensor& block_out, const Mix& mix) const {
  ops::hyper_expand(streams.reshape(as_streams(streams, options_.weights.num_streams)), block_out, mix.post, mix.comb);
}

HyperHead::HyperHead(const HyperConnectionOptions& options, const WeightScope& w) : options_(options) {
  ops::check_hyper_connection_supported(w.device(), options.weights.num_streams, w.prefix());
  const int64_t n = options.weights.num_streams;
  fn_ = w.get_f32("hc_fn", {n, n * options.hidden_size});
  base_ = w.get_f32("hc_base", {n});
  scale_ = w.get_f32("hc_scale", {1});
  ones_ = ones(n * options.hidden_size, w.weights().backend());
}

void HyperHead::collapse(const Tensor& streams, const Tensor& out, ForwardContext& ctx) const {
  const int64_t n = options_.weights.num_streams;
  const Tensor mixes = stream_mixes(streams, ones_, fn_, options_.rms_norm_eps, ctx);
  Tensor pre = ctx.temp_f32({streams.dim(0), n});
  ops::hyper_head_weights(mixes, base_, scale_, options_.weights.eps, pre);
  ops::hyper_collapse(streams.reshape(as_streams(streams, n)), pre, out);
}

}  // namespace strata
