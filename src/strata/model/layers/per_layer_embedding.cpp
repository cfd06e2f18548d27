#include "strata/model/layers/per_layer_embedding.h"

#include <fmt/format.h>

#include <algorithm>

#include "strata/model/layers/ssm_segments.h"
#include "strata/ops/causal_conv1d.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/embedding.h"
#include "strata/ops/gated_residual.h"
#include "strata/ops/linear.h"

namespace strata {

PerLayerEmbedding::PerLayerEmbedding(const PerLayerEmbeddingOptions& options, const WeightScope& w)
    : options_(options) {
  ops::check_per_layer_embedding_supported(w.device(), options.hash, w.prefix());
  ops::check_causal_conv1d_supported(w.device(), conv_taps(), w.prefix());
  load_table(w);
  key_proj_ = w.get("key_proj.weight", {width(), options.embed_dim});
  value_proj_ = w.get("value_proj.weight", {options.hidden_size, options.embed_dim});
  norm_key_ = w.get_f32("norm_key.weight", {width()});
  norm_query_ = w.get_f32("norm_query.weight", {width()});
  norm_conv_ = w.get_f32("norm_conv.weight", {width()});
  load_conv(w);
}

// The released checkpoints split the table into split_ngram_parts shards of rows, as torch.chunk
// does (equal parts of ceil(rows / parts), the last one shorter); save_pretrained writes the same.
void PerLayerEmbedding::load_table(const WeightScope& w) {
  const int64_t dim = options_.embed_dim / options_.hash.num_heads(), rows = options_.table_rows;
  const WeightScope table = w.scope("ple_embedding.ngram_embedding");
  if (std::optional<Tensor> whole = table.find("weight", {rows, dim})) {
    table_ = *whole;
    return;
  }
  const int64_t part = (rows + options_.split_parts - 1) / options_.split_parts;
  std::vector<std::string> names;
  std::vector<Shape> shapes;
  for (int64_t first = 0, i = 0; first < rows; first += part, ++i) {
    names.push_back(table.name(fmt::format("shard_{}.weight", i)));
    shapes.push_back({std::min(part, rows - first), dim});
  }
  table_ = w.weights().concat_rows(names, shapes);
}

// conv1d.weight [n hidden, 1, kernel] with dilation d becomes one causal conv of
// (kernel - 1) d + 1 taps: tap i * d holds weight i, the others zero.
void PerLayerEmbedding::load_conv(const WeightScope& w) {
  const int64_t kernel = options_.conv_kernel, dilation = options_.hash.ngram_size;
  Backend& backend = w.weights().backend();
  const Tensor loaded = w.get_f32("conv1d.weight", {width(), 1, kernel});
  conv_weight_ = Tensor::host(DType::kF32, {width(), conv_taps()});
  if (loaded.data() == nullptr) return;  // shapes only (`strata info`): nothing runs
  const Tensor weight = loaded.device().is_cpu() ? loaded : backend.to_host(loaded);
  float* dst = conv_weight_.data_as<float>();
  std::fill_n(dst, conv_weight_.numel(), 0.0f);
  for (int64_t c = 0; c < width(); ++c)
    for (int64_t i = 0; i < kernel; ++i) dst[c * conv_taps() + i * dilation] = weight.data_as<float>()[c * kernel + i];
  if (!backend.device().is_cpu()) conv_weight_ = backend.from_host(conv_weight_);
}

SsmLayerShape PerLayerEmbedding::carry() const {
  return {.h_state_elems = options_.hash.carry_elems(), .conv_state_elems = width() * (conv_taps() - 1)};
}

// One segment of the step: its tokens' n-gram rows, the gated values and the conv, with the
// segment's carry (both parts advance together, so a snapshot between segments holds both).
void PerLayerEmbedding::add_segment(const SsmSegment& s, const Tensor& streams, ForwardContext& ctx) const {
  const int64_t t = s.end - s.begin, n = options_.num_streams, hidden = options_.hidden_size;
  const int64_t heads = options_.hash.num_heads(), taps = conv_taps();
  Tensor ids = ctx.workspace.alloc(DType::kI32, {t, heads});
  ops::ngram_ids(options_.hash, {.token_ids = ctx.token_ids.slice_rows(s.begin, s.end), .carry = s.h_state, .out = ids,
                                 .intermediate_states = s.h_intermediates, .state_slots = s.state_slots});
  // Activation dtype (bf16 on a GPU) wherever a tensor feeds a linear or joins the streams.
  Tensor rows = ctx.temp({t, options_.embed_dim});
  ops::embedding(table_, ids.reshape({t * heads}), rows.reshape({t * heads, options_.embed_dim / heads}));
  const ops::RmsNormParams norm{.eps = options_.rms_norm_eps, .unit_offset = true};
  Tensor key = ctx.temp({t, width()}), query = ctx.temp({t, width()}), value = ctx.temp({t, hidden});
  ops::linear(rows, key_proj_, Tensor(), key);
  ops::stream_rms_norm(key, norm_key_, hidden, norm, key);
  ops::linear(rows, value_proj_, Tensor(), value);
  ops::stream_rms_norm(streams, norm_query_, hidden, norm, query);
  Tensor gated = ctx.temp({t, width()}), conv = ctx.temp({t, width()});
  ops::ple_gate(key.reshape({t, n, hidden}), query.reshape({t, n, hidden}), value, gated.reshape({t, n, hidden}));
  ops::stream_rms_norm(gated, norm_conv_, hidden, norm, conv);
  ops::causal_conv1d({.x = conv, .weight = conv_weight_, .conv_state = s.conv_state_as({width(), taps - 1}),
                      .out = conv,
                      .intermediate_states = s.conv_intermediates.defined()
                          ? s.conv_intermediates.reshape({t, width(), taps - 1}) : Tensor(),
                      .state_slots = s.state_slots});
  ops::add(streams, gated);
  ops::add(streams, conv);
}

void PerLayerEmbedding::add_to(const StepBatch& step, const Tensor& streams, ForwardContext& ctx) const {
  for_each_ssm_segment(step, ctx, ctx.carry_layer, [&](const SsmSegment& s) {
    add_segment(s, streams.slice_rows(s.begin, s.end), ctx);
  });
}

}  // namespace strata
