// ModelWeights: named weights as tensors on the model's device. On the CPU they are views
// of the mmap'd files (no copy); on a GPU they are copied over in bf16, except FP8 and Q8_0
// weights of 2-D linears, which stay as they are (the CUDA linear reads them). Without a source
// (`--load-format dummy`) every requested tensor is made up: random values of the right
// shape, from a fixed seed (dummy_fill.h; identical bf16 values on host and GPU).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/progress.h"
#include "strata/model/pipeline_stage.h"
#include "strata/weights/fp8.h"
#include "strata/weights/weight_source.h"

namespace strata {

// This process's part of a tensor-parallel group: layers that split over ranks load rows or
// columns [rank * n / size, (rank + 1) * n / size) of their projections (weight_shards.cpp).
struct TensorShard {
  int rank = 0;
  int size = 1;
  // MoE layers split their experts by range (--enable-expert-parallel) instead of every expert's
  // intermediate columns (vLLM's default); layers without experts ignore it (layers/expert_split.h).
  bool expert_parallel = false;
  // With expert_parallel: each rank routes its slice of the tokens and sends each pair to its
  // expert's rank (--expert-dispatch all-to-all) instead of every rank seeing every token.
  bool dispatch_tokens = false;
  // [begin, end) of n entries on this rank; throws an Error naming `what` unless size divides n.
  std::pair<int64_t, int64_t> range(int64_t n, const std::string& what) const;
};

// Rows [rows.first, rows.second) and columns [cols.first, cols.second) of matrix `index` of the
// tensor `name` stored with `shape` ([rows, cols], or [n, rows, cols]): one expert's share of a
// projection under tensor parallelism.
struct MatrixPart {
  std::string name;
  Shape shape;
  int64_t index = 0;
  std::pair<int64_t, int64_t> rows, cols;
};

struct ModelWeightsOptions {
  DType dummy_dtype = DType::kBF16;  // of dummy weights (source == nullptr)
  uint64_t seed = 1234;              // of dummy weights
  bool shapes_only = false;          // tensors carry shapes and no data (`strata info` on huge models)
  // Dummy weights quantized as a checkpoint loaded with this quantization would be (the
  // source's own weights arrive quantized through Fp8WeightSource).
  WeightQuantization quantization = WeightQuantization::kNone;
  ProgressReporter* progress = nullptr;  // advanced by the bytes of each tensor loaded
  TensorShard shard;
  // This process's layers under pipeline parallelism: the tensors of other layers carry shapes
  // and no data (their layers are built, then dropped by Model::set_pipeline_stage).
  PipelineStage pipeline;
  bool tie_word_embeddings = false;  // the last stage then loads the embedding as its head
};

class ModelWeights {
 public:
  // source == nullptr: dummy weights.
  ModelWeights(const WeightSource* source, Backend& backend, const ModelWeightsOptions& options);

  // The tensor `name` with exactly `shape`; throws an Error naming tensor and shapes.
  Tensor get(const std::string& name, const Shape& shape) const;
  // As get, but a GPU widens even FP8 / Q8_0 to bf16: for tables read by lookup, not by linear.
  Tensor get_widened(const std::string& name, const Shape& shape) const;
  // nullopt when the source has no such tensor (never for dummy weights unless `dummy_absent`).
  std::optional<Tensor> find(const std::string& name, const Shape& shape, bool dummy_absent = false) const;
  // Tensors `names[i]` (each `part_shape`) stacked along a new leading dimension.
  Tensor stacked(const std::vector<std::string>& names, const Shape& part_shape) const;
  // Rows of several tensors concatenated along dimension 0 (e.g. fused gate+up).
  Tensor concat_rows(const std::vector<std::string>& names, const std::vector<Shape>& shapes) const;
  // Whether concat_rows can fuse these tensors: all present in the source with one stored
  // dtype (GGUF files often mix quant types across q, k, v), or dummy weights.
  bool can_concat(const std::vector<std::string>& names) const;
  // Rows rows[i] of tensor `name` (shape `shape`) in that order: regroups fused projections
  // at load so the forward pass reads contiguous slices.
  Tensor gathered_rows(const std::string& name, const Shape& shape, const std::vector<int64_t>& rows) const;
  // Columns [begin, end) of the 2-D tensor `name` [rows, cols]: a row-parallel projection's part
  // (block-quantized rows only at block boundaries). Defined in weight_shards.cpp.
  Tensor column_range(const std::string& name, const Shape& shape, int64_t begin, int64_t end) const;
  // The parts' rows one after another, reshaped to `shape` (its element count theirs), in their
  // common stored dtype; a column range must keep the dtype's blocks whole. In weight_shards.cpp.
  Tensor matrix_parts(const std::vector<MatrixPart>& parts, const Shape& shape) const;
  // The dtype `name` is stored in (dummy weights: as they would be made).
  DType stored_dtype(const std::string& name, const Shape& shape) const;
  // As gathered_rows, widened to f32: a recurrent layer's small parameters (conv channels, per-head
  // values) of this rank's heads. Defined in weight_shards.cpp.
  Tensor gathered_rows_f32(const std::string& name, const Shape& shape, const std::vector<int64_t>& rows) const;
  // Rows [begin, end) of the 2-D table `name` [vocab, hidden]; rows from vocab on are zeros (a
  // vocabulary shard's padding, layers/vocab_parallel.h). widened: as get_widened. In weight_shards.cpp.
  Tensor padded_rows(const std::string& name, const Shape& shape, int64_t begin, int64_t end, bool widened) const;
  const TensorShard& shard() const { return shard_; }
  const PipelineStage& pipeline() const { return pipeline_; }
  // The same source and options read whole: no tensor-parallel shard, no pipeline stage, no
  // progress. For what one rank runs alone (a split target's MTP module); must not outlive this.
  std::unique_ptr<ModelWeights> unsplit() const;
  // The tensor widened to f32 on the model's device (small parameters the recurrent kernels
  // read in f32: A_log, D, dt_bias, conv weights, gated-norm weights).
  Tensor get_f32(const std::string& name, const Shape& shape) const;
  // An integer table (i32 or i64 in the checkpoint) as i32 on the host: lookups the CPU does
  // (DeepSeek-V4's tid2eid). Throws an Error for a float tensor or a value past i32.
  Tensor get_i32_table(const std::string& name, const Shape& shape) const;

  // Experts [begin, end) of those stored [E, in, out] with `name` (any float dtype), or as MXFP4
  // `name`_blocks / `name`_scales ([E, out, in / 32, 16], [E, out, in / 32]), read as bf16
  // [end - begin, |columns|, inputs.second - inputs.first]: row j of an expert is output column
  // columns[j] (gpt-oss: gate and up interleaved) over inputs [first, second). In expert_columns.cpp.
  Tensor expert_columns(const std::string& name, const Shape& stored, const std::vector<int64_t>& columns,
                        std::pair<int64_t, int64_t> experts, std::pair<int64_t, int64_t> inputs) const;
  // Columns `columns` of tensor `name` [rows, cols] (or entries of a [cols] vector), widened to
  // f32: [rows, |columns|] (or [|columns|]); with `row_range` [begin, end) only those rows are read
  // (a tensor-parallel rank's part of a large weight), [end - begin, |columns|].
  Tensor columns_f32(const std::string& name, const Shape& shape, const std::vector<int64_t>& columns,
                     std::optional<std::pair<int64_t, int64_t>> row_range = std::nullopt) const;

  bool is_dummy() const { return source_ == nullptr; }
  // Later loads advance no progress reporter (the one given may be gone).
  void stop_progress() { progress_ = nullptr; }
  // The source's tensor names that start with `prefix` (none for dummy weights): which layout a
  // checkpoint uses, and the parts an architecture leaves unread (a vision tower, MTP layers).
  std::vector<std::string> names_under(const std::string& prefix) const;
  std::string description() const;
  int64_t num_parameters() const { return num_parameters_; }
  // Bytes the loaded weights take on the model's device (a GPU holds most formats as bf16).
  int64_t num_bytes() const { return num_bytes_; }
  // The dtypes the loaded tensors were stored in (before any widening for the GPU).
  const std::set<DType>& dtypes() const { return dtypes_; }
  Backend& backend() const { return backend_; }

 private:
  // keep_quantized: a 2-D FP8 or GGUF block-quantized linear weight stays quantized on a GPU (where
  // keeps_device_layout); else it is widened to bf16.
  Tensor load(const WeightInfo& info, bool keep_quantized = true) const;
  // Whether `name` is made without data: a shapes-only build, or a layer of another pipeline stage.
  bool skips(const std::string& name) const;
  Tensor concat_rows_as(const std::vector<std::string>& names, const std::vector<Shape>& shapes, bool keep_quantized) const;
  bool dummy_fp8(const std::string& name, const Shape& shape) const;
  static Tensor widened_to_bf16(const Tensor& fp8);
  // bf16 device values into FP8 device blocks (dummy weights under --quantization fp8).
  Tensor quantized_on_device(const Tensor& bf16) const;
  const WeightInfo& checked_info(const std::string& name, const Shape& shape) const;
  Tensor make_dummy(const std::string& name, const Shape& shape) const;
  Tensor make_dummy_host(const std::string& name, const Shape& shape) const;
  // Dummy values of `name` written as bf16 into device memory at dst.
  void fill_dummy_device(const std::string& name, const Shape& shape, void* dst) const;
  Tensor concat_dummy_device(const std::vector<std::string>& names, const std::vector<Shape>& shapes) const;
  Tensor host_tensor(const std::string& name, const Shape& shape) const;
  // Expert e of expert_columns into out (bf16 [|columns|, in]).
  // Counts a tensor loaded: its parameters and bytes, and the progress shown.
  void count_loaded(int64_t numel, DType dtype) const;
  void expert_rows(const std::string& name, const Shape& stored, const std::vector<int64_t>& columns, int64_t e,
                   std::pair<int64_t, int64_t> inputs, uint16_t* out) const;

  const WeightSource* source_;
  Backend& backend_;
  DType dummy_dtype_;
  uint64_t seed_;
  bool shapes_only_;
  WeightQuantization quantization_;
  ProgressReporter* progress_;
  TensorShard shard_;
  PipelineStage pipeline_;
  bool tie_word_embeddings_;
  mutable int64_t num_parameters_ = 0;
  mutable int64_t num_bytes_ = 0;
  mutable std::set<DType> dtypes_;
};

// A name prefix over ModelWeights: scope("model.layers.3").get("mlp.up_proj.weight", ...).
class WeightScope {
 public:
  WeightScope(const ModelWeights& weights, std::string prefix)
      : weights_(&weights), prefix_(std::move(prefix)) {}
  WeightScope scope(const std::string& sub) const { return {*weights_, name(sub)}; }
  std::string name(const std::string& leaf) const { return prefix_.empty() ? leaf : prefix_ + "." + leaf; }
  const std::string& prefix() const { return prefix_; }  // names the layer in load errors
  Device device() const { return weights_->backend().device(); }
  Tensor get(const std::string& leaf, const Shape& shape) const { return weights_->get(name(leaf), shape); }
  Tensor get_widened(const std::string& leaf, const Shape& shape) const {
    return weights_->get_widened(name(leaf), shape);
  }
  std::optional<Tensor> find(const std::string& leaf, const Shape& shape) const {
    return weights_->find(name(leaf), shape);
  }
  Tensor get_f32(const std::string& leaf, const Shape& shape) const {
    return weights_->get_f32(name(leaf), shape);
  }
  std::vector<std::string> names(const std::vector<std::string>& leaves) const {
    std::vector<std::string> out;
    for (const std::string& leaf : leaves) out.push_back(name(leaf));
    return out;
  }
  // Fused weights for the accelerator backends (one GEMM instead of several), or undefined
  // on the CPU, under tensor parallelism or when the parts cannot be concatenated; callers then
  // keep the parts.
  Tensor fused_rows(const std::vector<std::string>& leaves, const std::vector<Shape>& shapes) const {
    if (weights_->backend().device().is_cpu() || shard().size > 1 || !weights_->can_concat(names(leaves))) return {};
    return weights_->concat_rows(names(leaves), shapes);
  }
  const ModelWeights& weights() const { return *weights_; }
  const TensorShard& shard() const { return weights_->shard(); }
  // This rank's rows of `leaf` [n, ...] (a column-parallel projection: heads or MLP columns), or
  // the whole tensor without tensor parallelism. `what` names the split dimension in errors.
  Tensor row_shard(const std::string& leaf, const Shape& shape, const std::string& what) const;
  // Rows [begin, end) of `leaf` (the whole tensor when that is all of it).
  Tensor row_range(const std::string& leaf, const Shape& shape, int64_t begin, int64_t end) const;
  // This rank's columns of `leaf` [rows, n] (a row-parallel projection), or the whole tensor.
  Tensor column_shard(const std::string& leaf, const Shape& shape, const std::string& what) const;
  // Rows `rows` of `leaf` [n, ...] in that order, as stored or widened to f32; the whole tensor
  // (no copy) when `rows` is 0..n-1. Fused projections take each part's rows of this rank.
  Tensor rows(const std::string& leaf, const Shape& shape, const std::vector<int64_t>& rows) const;
  Tensor rows_f32(const std::string& leaf, const Shape& shape, const std::vector<int64_t>& rows) const;

 private:
  const ModelWeights* weights_;
  std::string prefix_;
};

}  // namespace strata
