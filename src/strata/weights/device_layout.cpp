#include "strata/weights/device_layout.h"

#include <cstring>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/weights/quant_blocks.h"

namespace strata {
namespace {

// Block is BlockF8B128 or BlockQ8_0: kValues codes `qs` and a scale `d` of the remaining bytes.
template <typename Block, int kValues, bool kToDevice>
void convert_rows(const void* src, int64_t rows, int64_t k, void* dst) {
  constexpr int64_t kScaleBytes = static_cast<int64_t>(sizeof(Block)) - kValues;
  const int64_t blocks = k / kValues, row_bytes = blocks * static_cast<int64_t>(sizeof(Block));
  parallel_for(rows, 256, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const char* in = static_cast<const char*>(src) + r * row_bytes;
      char* out = static_cast<char*>(dst) + r * row_bytes;
      for (int64_t b = 0; b < blocks; ++b) {
        if constexpr (kToDevice) {
          const Block& block = reinterpret_cast<const Block*>(in)[b];
          std::memcpy(out + b * kValues, block.qs, kValues);
          std::memcpy(out + k + b * kScaleBytes, &block.d, kScaleBytes);
        } else {
          Block& block = reinterpret_cast<Block*>(out)[b];
          std::memcpy(block.qs, in + b * kValues, kValues);
          std::memcpy(&block.d, in + k + b * kScaleBytes, kScaleBytes);
        }
      }
    }
  });
}

template <bool kToDevice>
void convert(DType dtype, const void* src, int64_t rows, int64_t k, void* dst) {
  switch (dtype) {
    case DType::kF8_E4M3_B128: return convert_rows<BlockF8B128, kFp8Block, kToDevice>(src, rows, k, dst);
    case DType::kQ8_0: return convert_rows<BlockQ8_0, kQk, kToDevice>(src, rows, k, dst);
    default: break;
  }
  STRATA_CHECK_MSG(false, "no device layout for {}", dtype_name(dtype));
}

}  // namespace

bool has_device_layout(DType dtype) { return dtype == DType::kF8_E4M3_B128 || dtype == DType::kQ8_0; }

void to_device_layout(DType dtype, const void* src, int64_t rows, int64_t k, void* dst) {
  convert<true>(dtype, src, rows, k, dst);
}

void from_device_layout(DType dtype, const void* src, int64_t rows, int64_t k, void* dst) {
  convert<false>(dtype, src, rows, k, dst);
}

}  // namespace strata
