// Byte layouts of ggml's block-quantized types, exactly as GGUF files store them
// (ggml-common.h). Scales marked f16 are IEEE half bits. Sizes are asserted against
// dtype_block_bytes so the two tables cannot drift apart.
#pragma once

#include <cstdint>

namespace strata {

inline constexpr int kQk = 32;    // elements per block of the 32-wide types
inline constexpr int kQkK = 256;  // elements per super-block of the K types

struct BlockQ4_0 {
  uint16_t d;            // f16 scale
  uint8_t qs[kQk / 2];   // element j in the low nibble of qs[j], j + 16 in the high one
};
struct BlockQ4_1 {
  uint16_t d;            // f16 scale
  uint16_t m;            // f16 minimum
  uint8_t qs[kQk / 2];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];         // fifth bit of element j is bit j of this u32
  uint8_t qs[kQk / 2];
};
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQk / 2];
};
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQk];
};
// 8 sub-blocks of 32, each with a 6-bit scale and 6-bit min packed into 12 bytes.
struct BlockQ4_K {
  uint16_t d;            // f16 scale of the sub-block scales
  uint16_t dmin;         // f16 scale of the sub-block mins
  uint8_t scales[12];
  uint8_t qs[kQkK / 2];  // per 64 elements: 32 bytes, low nibbles first, then high
};
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQkK / 8];  // fifth bits: bit 2k / 2k+1 for the low / high half of chunk k
  uint8_t qs[kQkK / 2];
};
// 16 sub-blocks of 16 with signed 8-bit scales; quants are 6 bits, stored minus 32.
struct BlockQ6_K {
  uint8_t ql[kQkK / 2];  // low 4 bits
  uint8_t qh[kQkK / 4];  // high 2 bits
  int8_t scales[kQkK / 16];
  uint16_t d;            // f16
};
struct BlockQ8_K {
  float d;               // f32 scale (not f16)
  int8_t qs[kQkK];
  int16_t bsums[kQkK / 16];  // sums of each 16 quants
};

// Strata's FP8 weight block (not a ggml type): value j is fp8_e4m3_to_f32(qs[j]) * d.
inline constexpr int kFp8Block = 128;
struct BlockF8B128 {
  uint8_t qs[kFp8Block];  // e4m3fn
  float d;                // f32 scale (a checkpoint's weight_scale_inv / weight_scale, as is)
};
static_assert(sizeof(BlockF8B128) == 132);

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
              sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_K) == 144 &&
              sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210 && sizeof(BlockQ8_K) == 292);

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K / Q5_K block: the first four
// sit in the low 6 bits of bytes 0..7, the last four are split over nibbles of bytes
// 8..11 plus the top 2 bits of bytes 0..7.
inline void unpack_scale_min_k4(int j, const uint8_t* scales, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = scales[j] & 63;
    *min = scales[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((scales[j + 4] & 0x0f) | ((scales[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
  }
}

}  // namespace strata
