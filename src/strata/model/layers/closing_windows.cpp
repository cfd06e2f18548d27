#include "strata/model/layers/closing_windows.h"

#include <algorithm>

namespace strata {

ClosingWindows closing_windows(const StepBatch& step, int64_t rate, bool overlap) {
  ClosingWindows windows;
  for (const StepRow& row : step.rows()) {
    if (row.padding) continue;
    auto slot = [&](int64_t pos) {
      return static_cast<int32_t>(row.block_table[pos / step.block_size()] * step.block_size() + pos % step.block_size());
    };
    for (int64_t p = row.num_computed_tokens; p < row.num_computed_tokens + row.q_len(); ++p) {
      if ((p + 1) % rate != 0) continue;
      const int64_t w = p / rate;
      if (overlap)
        for (int64_t j = 0; j < rate; ++j) windows.sources.push_back(w > 0 ? slot((w - 1) * rate + j) : -1);
      for (int64_t j = 0; j < rate; ++j) windows.sources.push_back(slot(w * rate + j));
      windows.entry_slots.push_back(slot(p));
      windows.positions.push_back(static_cast<int32_t>(w * rate));
    }
  }
  return windows;
}

Tensor host_i32(const std::vector<int32_t>& values, Shape shape) {
  Tensor t = Tensor::host(DType::kI32, shape);
  std::copy(values.begin(), values.end(), t.data_as<int32_t>());
  return t;
}

Tensor step_i32(const std::vector<int32_t>& values, Shape shape, ForwardContext& ctx) {
  Tensor host = host_i32(values, shape);
  if (ctx.backend.device().is_cpu()) return host;
  Tensor device = ctx.workspace.alloc(DType::kI32, shape);
  ctx.backend.copy(device, host);  // pageable source: staged before the call returns
  return device;
}

ops::AttentionMetadata attention_metadata(const StepBatch& step) {
  return {.cu_seqlens = step.device().cu_seqlens, .kv_lens = step.device().kv_lens,
          .block_tables = step.device().block_tables, .num_rows = step.num_rows(),
          .max_q_len = step.max_q_len(), .max_kv_len = step.max_kv_len()};
}

}  // namespace strata
