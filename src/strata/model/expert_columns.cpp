// ModelWeights for experts stored the gpt-oss way: one [E, in, out] tensor per projection
// (or its MXFP4 blocks and scales), re-laid out at load to the [E, out, in] rows the grouped
// linears read, with the output columns in a chosen order. One expert at a time, so a
// 120B checkpoint never needs a whole layer's experts in f32 on the host.
#include <cstring>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/model/model_weights.h"
#include "strata/ops/cpu/convert.h"
#include "strata/weights/mxfp4.h"

namespace strata {

void ModelWeights::expert_rows(const std::string& name, const Shape& stored, const std::vector<int64_t>& columns,
                               int64_t e, std::pair<int64_t, int64_t> inputs, uint16_t* out) const {
  const int64_t in = stored[1], out_cols = stored[2], rows = static_cast<int64_t>(columns.size());
  const auto [first, last] = inputs;
  const int64_t width = last - first;  // of each row written
  if (source_->find(name) != nullptr) {
    const Tensor src = host_tensor(name, stored);
    std::vector<float> slab(static_cast<size_t>(in * out_cols));  // expert e, [in, out] in f32
    cpu::widen_to_f32(static_cast<const char*>(src.data()) + e * in * out_cols * dtype_bytes(src.dtype(), 1),
                      src.dtype(), in * out_cols, slab.data());
    parallel_for(rows, 16, [&](int64_t begin, int64_t end) {
      std::vector<float> row(width);
      for (int64_t j = begin; j < end; ++j) {
        for (int64_t a = 0; a < width; ++a) row[a] = slab[(first + a) * out_cols + columns[j]];
        cpu::narrow_from_f32(row.data(), DType::kBF16, width, out + j * width);
      }
    });
    return;
  }
  const int64_t groups = in / 32;
  const std::string blocks_name = name + "_blocks", scales_name = name + "_scales";
  if (source_->find(blocks_name) == nullptr || in % 32 != 0)
    fail("missing tensor '{}' (shape {}), or its MXFP4 '{}' and '{}', in {}", name, stored.str(), blocks_name,
         scales_name, description());
  const Tensor blocks = host_tensor(blocks_name, {stored[0], out_cols, groups, 16});
  const Tensor scales = host_tensor(scales_name, {stored[0], out_cols, groups});
  STRATA_CHECK(blocks.dtype() == DType::kU8 && scales.dtype() == DType::kU8);
  // Whole rows are dequantized, so an input range need not keep MXFP4's 32-value blocks whole.
  parallel_for(rows, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> row(in);
    for (int64_t j = begin; j < end; ++j) {
      const int64_t r = e * out_cols + columns[j];
      dequantize_mxfp4_row(blocks.data_as<const uint8_t>() + r * groups * 16, scales.data_as<const uint8_t>() + r * groups,
                           groups, row.data());
      cpu::narrow_from_f32(row.data() + first, DType::kBF16, width, out + j * width);
    }
  });
}

Tensor ModelWeights::expert_columns(const std::string& name, const Shape& stored, const std::vector<int64_t>& columns,
                                    std::pair<int64_t, int64_t> experts, std::pair<int64_t, int64_t> inputs) const {
  STRATA_CHECK(stored.rank == 3);
  const auto [first, end] = experts;
  STRATA_CHECK(0 <= first && first < end && end <= stored[0]);
  STRATA_CHECK(0 <= inputs.first && inputs.first < inputs.second && inputs.second <= stored[1]);
  const int64_t in = inputs.second - inputs.first, rows = static_cast<int64_t>(columns.size());
  for (int64_t c : columns) STRATA_CHECK(c >= 0 && c < stored[2]);
  const Shape out_shape{end - first, rows, in};
  if (source_ == nullptr) return make_dummy(name, out_shape);  // random either way: no re-layout
  if (skips(name)) return load({.name = name, .dtype = DType::kBF16, .shape = out_shape});
  const bool cpu = backend_.device().is_cpu();
  Tensor result = cpu ? Tensor::host(DType::kBF16, out_shape) : backend_.empty(DType::kBF16, out_shape);
  std::vector<uint16_t> staging(cpu ? 0 : static_cast<size_t>(rows * in));
  for (int64_t e = first; e < end; ++e) {
    uint16_t* dst = cpu ? result.data_as<uint16_t>() + (e - first) * rows * in : staging.data();
    expert_rows(name, stored, columns, e, inputs, dst);
    if (!cpu)
      backend_.copy(result.slice_rows(e - first, e - first + 1),
                    Tensor::view(staging.data(), DType::kBF16, {1, rows, in}));
  }
  count_loaded(out_shape.numel(), DType::kBF16);
  return result;
}

Tensor ModelWeights::columns_f32(const std::string& name, const Shape& shape, const std::vector<int64_t>& columns,
                                std::optional<std::pair<int64_t, int64_t>> row_range) const {
  STRATA_CHECK(shape.rank == 1 || shape.rank == 2);
  const int64_t rows = shape.rank == 2 ? shape[0] : 1, cols = shape[shape.rank - 1];
  const auto [first_row, end_row] = row_range.value_or(std::pair<int64_t, int64_t>{0, rows});
  STRATA_CHECK(0 <= first_row && first_row < end_row && end_row <= rows && (shape.rank == 2 || !row_range));
  const int64_t n = static_cast<int64_t>(columns.size()), out_rows = end_row - first_row;
  const Shape out_shape = shape.rank == 2 ? Shape{out_rows, n} : Shape{n};
  if (skips(name)) {
    if (source_ != nullptr) checked_info(name, shape);
    return load({.name = name, .dtype = DType::kF32, .shape = out_shape});
  }
  const Tensor src = host_tensor(name, shape);
  Tensor host = Tensor::host(DType::kF32, out_shape);
  const int64_t elem = dtype_bytes(src.dtype(), 1);
  for (int64_t r = 0; r < out_rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      STRATA_CHECK(columns[j] >= 0 && columns[j] < cols);
      cpu::widen_to_f32(static_cast<const char*>(src.data()) + ((first_row + r) * cols + columns[j]) * elem,
                        src.dtype(), 1, host.data_as<float>() + r * n + j);
    }
  count_loaded(out_rows * cols, src.dtype());
  return backend_.device().is_cpu() ? host : backend_.from_host(host);
}

}  // namespace strata
