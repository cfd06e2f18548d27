#include "strata/weights/fp8_source.h"

#include <cstring>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/weights/dequantize.h"
#include "strata/weights/fp8.h"
#include "strata/weights/quant_blocks.h"

namespace strata {

namespace {

bool is_scale_name(std::string_view name) {
  return name.ends_with(".weight_scale_inv") || name.ends_with(".weight_scale") || name.ends_with(".input_scale");
}

bool is_float(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16; }

// compressed-tensors: every config group must quantize weights to 8-bit floats.
void check_compressed_tensors(const nlohmann::json& q) {
  const auto groups = q.find("config_groups");
  if (groups == q.end() || !groups->is_object() || groups->empty())
    fail("compressed-tensors checkpoint without config_groups; only FP8 compressed-tensors checkpoints load");
  for (const auto& [name, group] : groups->items()) {
    const nlohmann::json weights = group.value("weights", nlohmann::json::object());
    if (weights.value("type", "") != "float" || weights.value("num_bits", 0) != 8)
      fail("compressed-tensors group '{}' quantizes weights to {} {}-bit; Strata loads only 8-bit float (FP8) "
           "compressed-tensors checkpoints", name, weights.value("type", "?"), weights.value("num_bits", 0));
  }
}

}  // namespace

std::optional<Fp8SourceOptions> fp8_checkpoint_options(const nlohmann::json& config) {
  const auto q = config.find("quantization_config");
  if (q == config.end() || q->is_null()) return std::nullopt;
  const std::string method = q->value("quant_method", "");
  if (method == "mxfp4") return std::nullopt;
  Fp8SourceOptions options;
  if (method == "fp8") {
    if (const auto block = q->find("weight_block_size"); block != q->end() && !block->is_null()) {
      if (!block->is_array() || block->size() != 2) fail("quantization_config.weight_block_size must be [rows, cols]");
      options.block_rows = (*block)[0].get<int64_t>();
      options.block_cols = (*block)[1].get<int64_t>();
    }
    if (options.block_rows <= 0 || options.block_cols <= 0 || options.block_cols % 128 != 0)
      fail("FP8 weight_block_size [{}, {}]: Strata needs a column block that is a multiple of 128",
           options.block_rows, options.block_cols);
    return options;
  }
  if (method == "compressed-tensors") {
    check_compressed_tensors(*q);
    return options;
  }
  fail("quantization_config.quant_method '{}' is not supported; Strata loads bf16/f16/f32, FP8 (fp8, "
       "compressed-tensors FP8), MXFP4 (gpt-oss) and GGUF checkpoints", method);
}

Fp8WeightSource::Fp8WeightSource(std::unique_ptr<WeightSource> inner, Fp8SourceOptions options)
    : inner_(std::move(inner)), options_(options) {}

std::string Fp8WeightSource::description() const { return inner_->description(); }

std::vector<std::string> Fp8WeightSource::names() const {
  std::vector<std::string> out;
  for (std::string& name : inner_->names())
    if (!is_scale_name(name)) out.push_back(std::move(name));
  return out;
}

const WeightInfo* Fp8WeightSource::find(std::string_view name) const {
  if (is_scale_name(name)) return nullptr;
  const WeightInfo* info = inner_->find(name);
  if (info == nullptr) return nullptr;
  const bool checkpoint_fp8 = info->dtype == DType::kF8_E4M3;
  const bool quantize = options_.quantize && is_float(info->dtype) && fp8_quantizable(name, info->shape);
  if (!checkpoint_fp8 && !quantize) return info;
  std::lock_guard lock(mutex_);
  if (auto it = converted_.find(name); it != converted_.end()) return &it->second.info;
  return checkpoint_fp8 ? &scaled_checkpoint_weight(*info) : &quantized_weight(*info);
}

const WeightInfo& Fp8WeightSource::keep(const WeightInfo& weight, Tensor data) const {
  WeightInfo info = weight;
  info.dtype = DType::kF8_E4M3_B128;
  info.data = data.data();
  Converted& slot = converted_[weight.name];
  slot = {std::move(info), std::move(data)};
  return slot.info;
}

// weight: e4m3 [N, K]; its scale: [ceil(N / br), ceil(K / bc)] blocks, [N] or [N, 1] per channel,
// or one value. Each 128-wide row block takes the scale that covers it.
const WeightInfo& Fp8WeightSource::scaled_checkpoint_weight(const WeightInfo& weight) const {
  const WeightInfo* scale = inner_->find(weight.name + "_scale_inv");
  if (scale == nullptr) scale = inner_->find(weight.name + "_scale");
  if (scale == nullptr) fail("FP8 tensor '{}' in {} has no '{}_scale_inv' or '{}_scale'", weight.name, weight.file,
                             weight.name, weight.name);
  if (weight.shape.rank != 2 || weight.shape[1] % kFp8Block != 0)
    fail("FP8 tensor '{}' has shape {}; Strata needs 2-D weights with rows a multiple of 128 wide", weight.name,
         weight.shape.str());
  const int64_t n = weight.shape[0], k = weight.shape[1], br = options_.block_rows, bc = options_.block_cols;
  std::vector<float> scales(static_cast<size_t>(scale->shape.numel()));
  dequantize_row(scale->dtype, scale->data, scales.data(), scale->shape.numel());
  const int64_t block_grid_cols = (k + bc - 1) / bc;
  const bool per_tensor = scale->shape.numel() == 1;
  const bool per_channel = !per_tensor && scale->shape[0] == n && scale->shape.numel() == n;
  const bool per_block = !per_tensor && !per_channel && scale->shape.rank == 2 &&
                         scale->shape[0] == (n + br - 1) / br && scale->shape[1] == block_grid_cols;
  if (!per_tensor && !per_channel && !per_block)
    fail("FP8 scale '{}' has shape {}: expected one value, [{}] per channel or [{}, {}] blocks of {} x {}",
         scale->name, scale->shape.str(), n, (n + br - 1) / br, block_grid_cols, br, bc);
  Tensor out = Tensor::host(DType::kF8_E4M3_B128, weight.shape);
  const int64_t blocks = k / kFp8Block;
  parallel_for(n, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      auto* dst = static_cast<BlockF8B128*>(out.data()) + r * blocks;
      for (int64_t b = 0; b < blocks; ++b) {
        std::memcpy(dst[b].qs, static_cast<const uint8_t*>(weight.data) + r * k + b * kFp8Block, kFp8Block);
        dst[b].d = per_tensor ? scales[0] : per_channel ? scales[r] : scales[r / br * block_grid_cols + b * kFp8Block / bc];
      }
    }
  });
  return keep(weight, std::move(out));
}

const WeightInfo& Fp8WeightSource::quantized_weight(const WeightInfo& weight) const {
  const int64_t n = weight.shape[0], k = weight.shape[1];
  Tensor out = Tensor::host(DType::kF8_E4M3_B128, weight.shape);
  const int64_t row_bytes = dtype_bytes(weight.dtype, k), out_row_bytes = dtype_bytes(DType::kF8_E4M3_B128, k);
  parallel_for(n, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t r = begin; r < end; ++r) {
      dequantize_row(weight.dtype, static_cast<const char*>(weight.data) + r * row_bytes, row.data(), k);
      quantize_row_fp8_b128(row.data(), k, static_cast<char*>(out.data()) + r * out_row_bytes);
    }
  });
  return keep(weight, std::move(out));
}

}  // namespace strata
