#include "strata/core/dtype.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "strata/core/error.h"

namespace strata {

namespace {

struct DTypeInfo {
  std::string_view name;
  int64_t block_elems;
  int64_t block_bytes;
};

constexpr DTypeInfo info(DType dtype) {
  switch (dtype) {
    case DType::kF32: return {"f32", 1, 4};
    case DType::kF16: return {"f16", 1, 2};
    case DType::kBF16: return {"bf16", 1, 2};
    case DType::kI32: return {"i32", 1, 4};
    case DType::kI64: return {"i64", 1, 8};
    case DType::kI8: return {"i8", 1, 1};
    case DType::kU8: return {"u8", 1, 1};
    case DType::kQ4_0: return {"q4_0", 32, 18};
    case DType::kQ4_1: return {"q4_1", 32, 20};
    case DType::kQ5_0: return {"q5_0", 32, 22};
    case DType::kQ5_1: return {"q5_1", 32, 24};
    case DType::kQ8_0: return {"q8_0", 32, 34};
    case DType::kQ4_K: return {"q4_k", 256, 144};
    case DType::kQ5_K: return {"q5_k", 256, 176};
    case DType::kQ6_K: return {"q6_k", 256, 210};
    case DType::kQ8_K: return {"q8_k", 256, 292};
    case DType::kF8_E4M3: return {"f8_e4m3", 1, 1};
    case DType::kF8_E4M3_B128: return {"fp8_b128", 128, 132};
  }
  return {"?", 1, 1};
}

}  // namespace

std::string_view dtype_name(DType dtype) { return info(dtype).name; }
bool is_quantized(DType dtype) { return info(dtype).block_elems > 1; }
int64_t dtype_block_elems(DType dtype) { return info(dtype).block_elems; }
int64_t dtype_block_bytes(DType dtype) { return info(dtype).block_bytes; }

int64_t dtype_bytes(DType dtype, int64_t num_elems) {
  const DTypeInfo i = info(dtype);
  STRATA_CHECK_MSG(num_elems % i.block_elems == 0, "{} elements of {}", num_elems, i.name);
  return num_elems / i.block_elems * i.block_bytes;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do { mant <<= 1; ++e; } while ((mant & 0x400) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

uint16_t f32_to_f16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint32_t sign = (bits >> 16) & 0x8000;
  const int32_t exp = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mant = bits & 0x7fffff;
  if (((bits >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - exp;
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | static_cast<uint32_t>(exp) << 10 | mant >> 13;
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(half);
}

float fp8_e4m3_to_f32(uint8_t v) {
  const int exp = (v >> 3) & 0xf, mant = v & 0x7;
  float magnitude;
  if (exp == 0xf && mant == 0x7) {
    magnitude = std::numeric_limits<float>::quiet_NaN();
  } else if (exp == 0) {
    magnitude = std::ldexp(static_cast<float>(mant), -9);  // subnormal: mant * 2^-6 / 8
  } else {
    magnitude = std::ldexp(static_cast<float>(8 + mant), exp - 10);  // (1 + mant / 8) * 2^(exp - 7)
  }
  return (v & 0x80) ? -magnitude : magnitude;
}

uint8_t f32_to_fp8_e4m3(float f) {
  if (std::isnan(f)) return 0x7f;
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const float a = std::fabs(f);
  if (a >= 448.f) return sign | 0x7e;
  int code;
  if (a < 0x1p-6f) {
    code = static_cast<int>(std::nearbyint(a * 0x1p9f));  // steps of 2^-9; 8 is the smallest normal
  } else {
    int e2;
    const float m = std::frexp(a, &e2);  // a = m * 2^e2, m in [0.5, 1)
    const int steps = static_cast<int>(std::nearbyint(m * 16.f)) - 8;  // 3 mantissa bits, ties to even
    code = ((e2 - 1 + 7) << 3) + steps;  // steps == 8 carries into the exponent
  }
  return static_cast<uint8_t>(sign | std::min(code, 0x7e));
}

}  // namespace strata
