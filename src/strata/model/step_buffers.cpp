#include "strata/model/step_buffers.h"

#include <algorithm>
#include <cstring>

#include "strata/core/error.h"

namespace strata {

void StepBuffers::reserve(const Fields& fields) {
  bool fits = device_.defined();
  for (int f = 0; f < kNumFields && fits; ++f) fits = static_cast<int64_t>(fields[f].size()) <= capacity_[f];
  if (fits) return;
  for (auto& mark : copied_)
    if (mark) mark->wait();  // the old halves are freed below
  total_ = 0;
  for (int f = 0; f < kNumFields; ++f) {
    const int64_t need = static_cast<int64_t>(fields[f].size());
    if (need > capacity_[f]) capacity_[f] = std::max<int64_t>({need, 2 * capacity_[f], 1024});
    offset_[f] = total_;
    total_ += capacity_[f];
  }
  device_ = backend_.empty(DType::kI32, {total_});
  for (Tensor& half : staging_) half = backend_.pinned_host(DType::kI32, {total_});
  ++generation_;
}

std::array<Tensor, StepBuffers::kNumFields> StepBuffers::upload(const Fields& fields) {
  reserve(fields);
  const int half = next_half_;
  next_half_ ^= 1;
  if (copied_[half]) copied_[half]->wait();
  int32_t* staged = staging_[half].data_as<int32_t>();
  int32_t* device = device_.data_as<int32_t>();
  std::array<Tensor, kNumFields> views;
  int64_t end = 0;
  for (int f = 0; f < kNumFields; ++f) {
    const int64_t n = static_cast<int64_t>(fields[f].size());
    views[f] = Tensor::with_storage(nullptr, device + offset_[f], DType::kI32, {n}, backend_.device());
    if (n == 0) continue;
    std::memcpy(staged + offset_[f], fields[f].data(), static_cast<size_t>(n) * 4);
    end = offset_[f] + n;
  }
  if (end > 0) backend_.copy_async(device_.slice_rows(0, end), staging_[half].slice_rows(0, end));
  copied_[half] = backend_.mark();
  return views;
}

}  // namespace strata
