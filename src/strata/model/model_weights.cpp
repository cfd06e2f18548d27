#include "strata/model/model_weights.h"

#include <algorithm>

#include <cmath>
#include <cstring>
#include <random>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/model/dummy_fill.h"
#include "strata/ops/cpu/convert.h"
#include "strata/weights/device_layout.h"
#if defined(STRATA_WITH_CUDA)
#include "strata/ops/cuda/fp8_convert.h"
#endif

namespace strata {

ModelWeights::ModelWeights(const WeightSource* source, Backend& backend, const ModelWeightsOptions& options)
    : source_(source), backend_(backend), dummy_dtype_(options.dummy_dtype), seed_(options.seed),
      shapes_only_(options.shapes_only), quantization_(options.quantization),
      progress_(options.progress), shard_(options.shard), pipeline_(options.pipeline),
      tie_word_embeddings_(options.tie_word_embeddings) {}

std::unique_ptr<ModelWeights> ModelWeights::unsplit() const {
  return std::make_unique<ModelWeights>(source_, backend_,
                                        ModelWeightsOptions{.dummy_dtype = dummy_dtype_, .seed = seed_,
                                                            .shapes_only = shapes_only_, .quantization = quantization_,
                                                            .tie_word_embeddings = tie_word_embeddings_});
}

bool ModelWeights::skips(const std::string& name) const {
  if (shapes_only_) return true;
  return pipeline_.count > 1 && !stage_holds_tensor(pipeline_, name, tie_word_embeddings_);
}

void ModelWeights::count_loaded(int64_t numel, DType dtype) const {
  const int64_t bytes = dtype_bytes(dtype, numel);
  dtypes_.insert(dtype);
  num_parameters_ += numel;
  num_bytes_ += bytes;
  if (progress_ != nullptr) progress_->advance(bytes);
}

std::string ModelWeights::description() const {
  return source_ != nullptr ? source_->description() : "dummy weights";
}

std::vector<std::string> ModelWeights::names_under(const std::string& prefix) const {
  std::vector<std::string> names;
  if (source_ == nullptr) return names;
  for (const std::string& name : source_->names())
    if (name.starts_with(prefix)) names.push_back(name);
  return names;
}

const WeightInfo& ModelWeights::checked_info(const std::string& name, const Shape& shape) const {
  const WeightInfo* info = source_->find(name);
  if (info == nullptr) fail("missing tensor '{}' (shape {}) in {}", name, shape.str(), description());
  if (!(info->shape == shape))
    fail("tensor '{}' in {} has shape {}, expected {} from config.json", name, info->file,
         info->shape.str(), shape.str());
  return *info;
}

Tensor ModelWeights::get(const std::string& name, const Shape& shape) const {
  if (source_ == nullptr) return make_dummy(name, shape);
  return load(checked_info(name, shape));
}

Tensor ModelWeights::get_widened(const std::string& name, const Shape& shape) const {
  if (source_ == nullptr) return make_dummy(name, shape);
  return load(checked_info(name, shape), false);
}

std::optional<Tensor> ModelWeights::find(const std::string& name, const Shape& shape,
                                         bool dummy_absent) const {
  if (source_ == nullptr) {
    if (dummy_absent) return std::nullopt;
    return make_dummy(name, shape);
  }
  if (source_->find(name) == nullptr) return std::nullopt;
  return get(name, shape);
}

Tensor ModelWeights::host_tensor(const std::string& name, const Shape& shape) const {
  if (source_ == nullptr) return make_dummy_host(name, shape);
  const WeightInfo& info = checked_info(name, shape);
  return Tensor::view(const_cast<void*>(info.data), info.dtype, info.shape);
}

Tensor ModelWeights::stacked(const std::vector<std::string>& names, const Shape& part_shape) const {
  std::vector<Shape> shapes(names.size(), part_shape);
  Tensor flat = concat_rows(names, shapes);
  Shape shape;
  shape.rank = part_shape.rank + 1;
  shape[0] = static_cast<int64_t>(names.size());
  for (int i = 0; i < part_shape.rank; ++i) shape.dims[i + 1] = part_shape.dims[i];
  return flat.reshape(shape);
}

bool ModelWeights::can_concat(const std::vector<std::string>& names) const {
  if (source_ == nullptr) return true;
  const WeightInfo* first = source_->find(names.front());
  for (const std::string& name : names) {
    const WeightInfo* info = source_->find(name);
    if (info == nullptr || first == nullptr || info->dtype != first->dtype) return false;
  }
  return true;
}

Tensor ModelWeights::concat_rows(const std::vector<std::string>& names,
                                 const std::vector<Shape>& shapes) const {
  return concat_rows_as(names, shapes, true);
}

Tensor ModelWeights::concat_rows_as(const std::vector<std::string>& names, const std::vector<Shape>& shapes,
                                    bool keep_quantized) const {
  if (skips(names[0])) {
    Shape shape = shapes[0];
    shape[0] = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      shape[0] += shapes[i][0];
      if (source_ != nullptr) checked_info(names[i], shapes[i]);
    }
    return load({.name = names[0], .dtype = dummy_dtype_, .shape = shape});
  }
  if (source_ == nullptr && !backend_.device().is_cpu()) {
    Tensor device = concat_dummy_device(names, shapes);
    return keep_quantized && dummy_fp8(names[0], device.shape()) ? quantized_on_device(device) : device;
  }
  std::vector<Tensor> parts;
  int64_t rows = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    parts.push_back(host_tensor(names[i], shapes[i]));
    rows += shapes[i][0];
    STRATA_CHECK(parts.back().dtype() == parts.front().dtype());
  }
  Shape shape = shapes[0];
  shape[0] = rows;
  Tensor host = Tensor::host(parts[0].dtype(), shape);
  char* dst = static_cast<char*>(host.data());
  for (const Tensor& p : parts) {
    std::memcpy(dst, p.data(), p.nbytes());
    dst += p.nbytes();
  }
  const bool cpu = backend_.device().is_cpu();  // the CPU's kernels read FP8 rows as they are
  if (!cpu && !keep_quantized && host.dtype() == DType::kF8_E4M3_B128) host = widened_to_bf16(host);
  WeightInfo info{.name = names[0], .dtype = host.dtype(), .shape = shape, .data = host.data()};
  if (cpu) {
    load(info);  // counts the parameters
    return host;
  }
  return load(info, keep_quantized);
}

Tensor ModelWeights::concat_dummy_device(const std::vector<std::string>& names,
                                         const std::vector<Shape>& shapes) const {
  Shape shape = shapes[0];
  shape[0] = 0;
  for (const Shape& part : shapes) shape[0] += part[0];
  Tensor device = backend_.empty(DType::kBF16, shape);
  char* dst = static_cast<char*>(device.data());
  for (size_t i = 0; i < names.size(); ++i) {
    fill_dummy_device(names[i], shapes[i], dst);
    dst += dtype_bytes(DType::kBF16, shapes[i].numel());
  }
  count_loaded(shape.numel(), DType::kBF16);
  return device;
}

Tensor ModelWeights::gathered_rows(const std::string& name, const Shape& shape,
                                   const std::vector<int64_t>& rows) const {
  Shape out_shape = shape;
  out_shape[0] = static_cast<int64_t>(rows.size());
  if (skips(name)) {
    if (source_ != nullptr) checked_info(name, shape);
    return load({.name = name, .dtype = dummy_dtype_, .shape = out_shape});
  }
  const Tensor src = host_tensor(name, shape);
  Tensor host = Tensor::host(src.dtype(), out_shape);
  const int64_t row_bytes = src.row_bytes();
  for (size_t i = 0; i < rows.size(); ++i) {
    STRATA_CHECK(rows[i] >= 0 && rows[i] < shape[0]);
    std::memcpy(static_cast<char*>(host.data()) + i * row_bytes,
                static_cast<const char*>(src.data()) + rows[i] * row_bytes, row_bytes);
  }
  WeightInfo info{.name = name, .dtype = host.dtype(), .shape = out_shape, .data = host.data()};
  if (backend_.device().is_cpu()) {
    load(info);  // counts the parameters
    return host;
  }
  return load(info);
}

Tensor ModelWeights::get_f32(const std::string& name, const Shape& shape) const {
  if (skips(name)) return get(name, shape);
  const Tensor src = host_tensor(name, shape);
  Tensor host = Tensor::host(DType::kF32, shape);
  cpu::widen_to_f32(src.data(), src.dtype(), src.numel(), host.data_as<float>());
  count_loaded(src.numel(), src.dtype());
  return backend_.device().is_cpu() ? host : backend_.from_host(host);
}

Tensor ModelWeights::get_i32_table(const std::string& name, const Shape& shape) const {
  Tensor table = Tensor::host(DType::kI32, shape);
  std::fill_n(table.data_as<int32_t>(), table.numel(), 0);  // dummy weights: every choice expert 0
  if (skips(name) || source_ == nullptr) return table;
  const Tensor src = host_tensor(name, shape);
  count_loaded(src.numel(), src.dtype());
  if (src.dtype() != DType::kI32 && src.dtype() != DType::kI64)
    fail("{}: an integer table (I32 or I64) is expected, the checkpoint stores {}", name, dtype_name(src.dtype()));
  for (int64_t i = 0; i < src.numel(); ++i) {
    const int64_t v = src.dtype() == DType::kI64 ? src.data_as<int64_t>()[i] : src.data_as<int32_t>()[i];
    if (v < INT32_MIN || v > INT32_MAX) fail("{}: value {} at {} does not fit in 32 bits", name, v, i);
    table.data_as<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return table;
}

namespace {

// 2-D FP8 and GGUF block-quantized weights (weights/device_layout.h) stay quantized on the GPU: the CUDA linear reads them.
bool stays_quantized_on_gpu(const WeightInfo& info) {
  return info.shape.rank == 2 && keeps_device_layout(info.dtype, info.shape[1]);
}

}  // namespace

Tensor ModelWeights::load(const WeightInfo& info, bool keep_quantized) const {
  const int64_t numel = info.shape.numel();
  if (skips(info.name)) {
    if (shapes_only_) count_loaded(numel, info.dtype);  // `strata info` counts them; another stage's are not here
    return Tensor::view(nullptr, info.dtype, info.shape);
  }
  count_loaded(numel, info.dtype);
  if (backend_.device().is_cpu())
    return Tensor::view(const_cast<void*>(info.data), info.dtype, info.shape);
  if (keep_quantized && stays_quantized_on_gpu(info))
    return backend_.from_host(Tensor::view(const_cast<void*>(info.data), info.dtype, info.shape));
  // GPU weights are bf16: widen on the host in row chunks, narrow, copy.
  num_bytes_ += dtype_bytes(DType::kBF16, numel) - dtype_bytes(info.dtype, numel);  // held as bf16
  Tensor host = Tensor::host(DType::kBF16, info.shape);
  const int64_t cols = info.shape[info.shape.rank - 1];
  const int64_t rows = numel / cols;
  const int64_t src_row_bytes = dtype_bytes(info.dtype, cols);
  parallel_for(rows, 64, [&](int64_t begin, int64_t end) {
    std::vector<float> row(cols);
    for (int64_t r = begin; r < end; ++r) {
      cpu::widen_to_f32(static_cast<const char*>(info.data) + r * src_row_bytes, info.dtype, cols,
                        row.data());
      cpu::narrow_from_f32(row.data(), DType::kBF16, cols, host.data_as<uint16_t>() + r * cols);
    }
  });
  return backend_.from_host(host);
}

Tensor ModelWeights::make_dummy(const std::string& name, const Shape& shape) const {
  if (skips(name)) return load({.name = name, .dtype = dummy_dtype_, .shape = shape});
  if (backend_.device().is_cpu()) {
    Tensor host = make_dummy_host(name, shape);
    load({.name = name, .dtype = host.dtype(), .shape = shape, .data = host.data()});  // counts it
    return host;
  }
  // GPU weights are bf16 and filled on the device: no 16 GB detour through host memory.
  Tensor device = backend_.empty(DType::kBF16, shape);
  fill_dummy_device(name, shape, device.data());
  count_loaded(shape.numel(), DType::kBF16);
  return dummy_fp8(name, shape) ? quantized_on_device(device) : device;
}

// FP8 rows as bf16 (rounded from their exact f32 values), for kernels that read bf16 only.
Tensor ModelWeights::widened_to_bf16(const Tensor& fp8) {
  const int64_t cols = fp8.dim(fp8.rank() - 1), rows = fp8.numel() / cols;
  Tensor out = Tensor::host(DType::kBF16, fp8.shape());
  parallel_for(rows, 64, [&](int64_t begin, int64_t end) {
    std::vector<float> row(cols);
    for (int64_t r = begin; r < end; ++r) {
      cpu::widen_to_f32(static_cast<const char*>(fp8.data()) + r * dtype_bytes(fp8.dtype(), cols), fp8.dtype(), cols,
                        row.data());
      cpu::narrow_from_f32(row.data(), DType::kBF16, cols, out.data_as<uint16_t>() + r * cols);
    }
  });
  return out;
}

bool ModelWeights::dummy_fp8(const std::string& name, const Shape& shape) const {
  return source_ == nullptr && quantization_ == WeightQuantization::kFp8 && fp8_quantizable(name, shape);
}

Tensor ModelWeights::quantized_on_device(const Tensor& bf16) const {
  Tensor fp8 = backend_.empty(DType::kF8_E4M3_B128, bf16.shape());
#if defined(STRATA_WITH_CUDA)
  cuda::quantize_bf16_to_fp8_b128(bf16.data(), bf16.dim(0), bf16.dim(1), fp8.data());
#else
  STRATA_CHECK_MSG(false, "GPU dummy weights in a build without CUDA");
#endif
  num_bytes_ += fp8.nbytes() - bf16.nbytes();
  return fp8;
}

void ModelWeights::fill_dummy_device(const std::string& name, const Shape& shape, void* dst) const {
#if defined(STRATA_WITH_CUDA)
  cuda::fill_dummy_bf16(dummy_fill_for(name, shape.rank, shape[shape.rank - 1], seed_), shape.numel(), dst);
#else
  (void)name, (void)shape, (void)dst;
  STRATA_CHECK_MSG(false, "GPU dummy weights in a build without CUDA");
#endif
}

Tensor ModelWeights::make_dummy_host(const std::string& name, const Shape& shape) const {
  Tensor host = Tensor::host(dummy_dtype_, shape);
  fill_dummy_host(dummy_fill_for(name, shape.rank, shape[shape.rank - 1], seed_), dummy_dtype_,
                  shape.numel(), host.data());
  if (!dummy_fp8(name, shape)) return host;
  Tensor fp8 = Tensor::host(DType::kF8_E4M3_B128, shape);
  parallel_for(shape[0], 16, [&](int64_t begin, int64_t end) {
    std::vector<float> row(shape[1]);
    for (int64_t r = begin; r < end; ++r) {
      cpu::widen_to_f32(static_cast<const char*>(host.data()) + r * host.row_bytes(), host.dtype(), shape[1], row.data());
      quantize_row_fp8_b128(row.data(), shape[1], static_cast<char*>(fp8.data()) + r * fp8.row_bytes());
    }
  });
  return fp8;
}

}  // namespace strata
