#include "strata/model/dummy_fill.h"

#include <cmath>
#include <vector>

#include "strata/core/parallel.h"
#include "strata/ops/cpu/convert.h"

namespace strata {

DummyFill dummy_fill_for(const std::string& name, int rank, int64_t last_dim, uint64_t seed) {
  const bool is_norm = rank == 1 || name.find("norm") != std::string::npos;
  DummyFill fill;
  fill.scale = is_norm ? 0.1f : 1.0f / std::sqrt(static_cast<float>(last_dim));
  fill.offset = is_norm && name.find("bias") == std::string::npos ? 1.0f : 0.0f;
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a: stable across builds, unlike std::hash
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  fill.seed = dummy_mix(h ^ seed);
  return fill;
}

void fill_dummy_host(const DummyFill& fill, DType dtype, int64_t n, void* dst, int64_t first) {
  parallel_for(n, 1 << 16, [&](int64_t begin, int64_t end) {
    std::vector<float> chunk(end - begin);
    for (int64_t i = begin; i < end; ++i) chunk[i - begin] = dummy_value(fill, first + i);
    cpu::narrow_from_f32(chunk.data(), dtype, end - begin,
                         static_cast<char*>(dst) + dtype_bytes(dtype, begin));
  });
}

}  // namespace strata
