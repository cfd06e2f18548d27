// A decoded image: 8-bit RGB, rows top to bottom. Decoding takes JPEG and PNG (stb_image, from
// Debian's libstb-dev) and WebP (libwebp-dev); other channel layouts become RGB as PIL's
// convert("RGB") makes them (grey replicated, alpha dropped).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "strata/core/error.h"

namespace strata {

struct RgbImage {
  int32_t width = 0, height = 0;
  std::vector<uint8_t> pixels;  // [height, width, 3]

  uint8_t at(int32_t y, int32_t x, int c) const { return pixels[(static_cast<size_t>(y) * width + x) * 3 + c]; }
};

// Over the pixel limit that decode_image was given (said by the header, before decoding).
struct ImageTooLarge : Error {
  using Error::Error;
};

// Throws strata::Error naming the problem when the bytes are not a JPEG, PNG or WebP image it can
// read, ImageTooLarge when the header says it has more than max_pixels pixels.
RgbImage decode_image(std::span<const uint8_t> bytes, int64_t max_pixels = int64_t{1} << 40);

}  // namespace strata
