// Tensor-parallel parts of weights: a rank loads its rows (column-parallel projections: q, k, v,
// gate, up) or its columns (row-parallel: o, down) of the checkpoint's whole tensor, so that the
// ranks together hold each projection once.
#include <algorithm>
#include <cstring>

#include "strata/core/error.h"
#include "strata/model/dummy_fill.h"
#include "strata/model/model_weights.h"
#include "strata/ops/cpu/convert.h"

namespace strata {

std::pair<int64_t, int64_t> TensorShard::range(int64_t n, const std::string& what) const {
  if (n % size != 0) fail("--tensor-parallel-size {} does not divide {} ({}); choose a size that does", size, what, n);
  const int64_t part = n / size;
  return {rank * part, (rank + 1) * part};
}

Tensor ModelWeights::column_range(const std::string& name, const Shape& shape, int64_t begin, int64_t end) const {
  STRATA_CHECK(shape.rank == 2 && begin >= 0 && begin < end && end <= shape[1]);
  const Shape out_shape{shape[0], end - begin};
  if (skips(name)) {
    if (source_ != nullptr) checked_info(name, shape);
    return load({.name = name, .dtype = dummy_dtype_, .shape = out_shape});
  }
  const Tensor src = host_tensor(name, shape);
  const DType dtype = src.dtype();
  const int64_t block = dtype_block_elems(dtype);
  if (begin % block != 0 || end % block != 0)
    fail("tensor '{}' is stored in blocks of {} values, which columns [{}, {}) of a tensor-parallel part split; "
         "choose a --tensor-parallel-size that keeps blocks whole",
         name, block, begin, end);
  const int64_t src_row = dtype_bytes(dtype, shape[1]), skip = dtype_bytes(dtype, begin);
  const int64_t out_row = dtype_bytes(dtype, end - begin);
  Tensor host = Tensor::host(dtype, out_shape);
  for (int64_t r = 0; r < shape[0]; ++r)
    std::memcpy(static_cast<char*>(host.data()) + r * out_row,
                static_cast<const char*>(src.data()) + r * src_row + skip, out_row);
  WeightInfo info{.name = name, .dtype = dtype, .shape = out_shape, .data = host.data()};
  if (backend_.device().is_cpu()) {
    load(info);  // counts the parameters
    return host;
  }
  return load(info);
}

DType ModelWeights::stored_dtype(const std::string& name, const Shape& shape) const {
  if (source_ != nullptr) return checked_info(name, shape).dtype;
  return dummy_fp8(name, shape) ? DType::kF8_E4M3_B128 : dummy_dtype_;
}

Tensor ModelWeights::matrix_parts(const std::vector<MatrixPart>& parts, const Shape& shape) const {
  STRATA_CHECK(!parts.empty());
  if (shapes_only_) {
    if (source_ != nullptr)
      for (const MatrixPart& p : parts) checked_info(p.name, p.shape);
    return load({.name = parts[0].name, .dtype = dummy_dtype_, .shape = shape});
  }
  std::vector<Tensor> sources;  // each part's whole tensor, host-side (a view of the file)
  int64_t bytes = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const MatrixPart& p = parts[i];
    const bool same = i > 0 && p.name == parts[i - 1].name;  // stacked experts: one tensor, many parts
    sources.push_back(same ? sources.back() : host_tensor(p.name, p.shape));
    STRATA_CHECK(p.index >= 0 && p.index < (p.shape.rank == 3 ? p.shape[0] : 1));
    const DType dtype = sources.back().dtype();
    STRATA_CHECK(dtype == sources.front().dtype() && p.shape.rank >= 2 && p.shape.rank <= 3);
    const int64_t block = dtype_block_elems(dtype);
    if (p.cols.first % block != 0 || p.cols.second % block != 0)
      fail("tensor '{}' is stored in blocks of {} values, which columns [{}, {}) of a tensor-parallel part split; "
           "choose a --tensor-parallel-size that keeps blocks whole", p.name, block, p.cols.first, p.cols.second);
    bytes += (p.rows.second - p.rows.first) * dtype_bytes(dtype, p.cols.second - p.cols.first);
  }
  const DType dtype = sources.front().dtype();
  STRATA_CHECK(dtype_bytes(dtype, shape.numel()) == bytes);
  Tensor host = Tensor::host(dtype, shape);
  char* dst = static_cast<char*>(host.data());
  for (size_t i = 0; i < parts.size(); ++i) {
    const MatrixPart& p = parts[i];
    const int64_t rows = p.shape[p.shape.rank - 2], cols = p.shape[p.shape.rank - 1];
    const int64_t row_bytes = dtype_bytes(dtype, cols), skip = dtype_bytes(dtype, p.cols.first);
    const int64_t out_row = dtype_bytes(dtype, p.cols.second - p.cols.first);
    STRATA_CHECK(0 <= p.rows.first && p.rows.first < p.rows.second && p.rows.second <= rows);
    STRATA_CHECK(0 <= p.cols.first && p.cols.first < p.cols.second && p.cols.second <= cols);
    const char* matrix = static_cast<const char*>(sources[i].data()) + p.index * rows * row_bytes;
    for (int64_t r = p.rows.first; r < p.rows.second; ++r, dst += out_row)
      std::memcpy(dst, matrix + r * row_bytes + skip, out_row);
  }
  // Loaded as 2-D rows, so that a GPU keeps quantized experts in their device layout, as stacked does.
  const int64_t cols = shape[shape.rank - 1];
  WeightInfo info{.name = parts[0].name, .dtype = dtype, .shape = {shape.numel() / cols, cols}, .data = host.data()};
  if (backend_.device().is_cpu()) {
    load(info);  // counts the parameters
    return host;
  }
  return load(info).reshape(shape);
}

Tensor ModelWeights::padded_rows(const std::string& name, const Shape& shape, int64_t begin, int64_t end,
                                 bool widened) const {
  STRATA_CHECK(shape.rank == 2 && begin >= 0 && begin < end);
  const Shape out_shape{end - begin, shape[1]};
  const int64_t num_padding = end - std::max(begin, std::min(end, shape[0]));
  if (shapes_only_) {
    if (source_ != nullptr) checked_info(name, shape);
    return load({.name = name, .dtype = dummy_dtype_, .shape = out_shape});
  }
  // Dummy weights make only these rows (a real table's would be gigabytes of host memory).
  const bool dummy_rows = source_ == nullptr && !dummy_fp8(name, shape);
  const Tensor src = dummy_rows ? Tensor() : host_tensor(name, shape);
  Tensor host = Tensor::host(dummy_rows ? dummy_dtype_ : src.dtype(), out_shape);
  const int64_t row_bytes = host.row_bytes(), num_rows = out_shape[0] - num_padding;
  char* dst = static_cast<char*>(host.data());
  if (dummy_rows) {
    fill_dummy_host(dummy_fill_for(name, shape.rank, shape[1], seed_), host.dtype(), num_rows * shape[1], dst,
                    begin * shape[1]);
  } else if (num_rows > 0) {
    std::memcpy(dst, static_cast<const char*>(src.data()) + begin * row_bytes, num_rows * row_bytes);
  }
  // Zero bytes are zeros in every dtype (block formats: zero scales).
  std::memset(dst + num_rows * row_bytes, 0, num_padding * row_bytes);
  const WeightInfo info{.name = name, .dtype = host.dtype(), .shape = out_shape, .data = host.data()};
  const Tensor loaded = load(info, /*keep_quantized=*/!widened);  // counted; on the CPU a view of host
  num_parameters_ -= num_padding * shape[1];  // padding takes memory, but holds no parameters
  return backend_.device().is_cpu() ? host : loaded;
}

Tensor WeightScope::row_shard(const std::string& leaf, const Shape& shape, const std::string& what) const {
  const auto [begin, end] = shard().range(shape[0], what);
  return row_range(leaf, shape, begin, end);
}

Tensor WeightScope::row_range(const std::string& leaf, const Shape& shape, int64_t begin, int64_t end) const {
  if (begin == 0 && end == shape[0]) return get(leaf, shape);
  std::vector<int64_t> rows;
  for (int64_t r = begin; r < end; ++r) rows.push_back(r);
  return weights().gathered_rows(name(leaf), shape, rows);
}

Tensor WeightScope::column_shard(const std::string& leaf, const Shape& shape, const std::string& what) const {
  const TensorShard& s = shard();
  if (s.size == 1) return get(leaf, shape);
  const auto [begin, end] = s.range(shape[1], what);
  return weights().column_range(name(leaf), shape, begin, end);
}

namespace {

bool all_rows_in_order(const Shape& shape, const std::vector<int64_t>& rows) {
  if (static_cast<int64_t>(rows.size()) != shape[0]) return false;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i] != static_cast<int64_t>(i)) return false;
  return true;
}

}  // namespace

Tensor ModelWeights::gathered_rows_f32(const std::string& name, const Shape& shape,
                                       const std::vector<int64_t>& rows) const {
  Shape out_shape = shape;
  out_shape[0] = static_cast<int64_t>(rows.size());
  if (skips(name)) {
    if (source_ != nullptr) checked_info(name, shape);
    return load({.name = name, .dtype = DType::kF32, .shape = out_shape});
  }
  const Tensor src = host_tensor(name, shape);
  Tensor host = Tensor::host(DType::kF32, out_shape);
  const int64_t row_elems = shape.numel() / shape[0];
  for (size_t i = 0; i < rows.size(); ++i) {
    STRATA_CHECK(rows[i] >= 0 && rows[i] < shape[0]);
    cpu::widen_to_f32(static_cast<const char*>(src.data()) + rows[i] * src.row_bytes(), src.dtype(), row_elems,
                      host.data_as<float>() + i * row_elems);
  }
  count_loaded(host.numel(), src.dtype());
  return backend_.device().is_cpu() ? host : backend_.from_host(host);
}

Tensor WeightScope::rows(const std::string& leaf, const Shape& shape, const std::vector<int64_t>& rows) const {
  if (all_rows_in_order(shape, rows)) return get(leaf, shape);
  return weights().gathered_rows(name(leaf), shape, rows);
}

Tensor WeightScope::rows_f32(const std::string& leaf, const Shape& shape, const std::vector<int64_t>& rows) const {
  if (all_rows_in_order(shape, rows)) return get_f32(leaf, shape);
  return weights().gathered_rows_f32(name(leaf), shape, rows);
}

}  // namespace strata
