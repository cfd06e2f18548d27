// Bicubic resizing exactly as Pillow's Image.resize(size, BICUBIC) does it for 8-bit RGB, which
// the Hugging Face image processors call: a separable filter (a = -0.5) widened by the
// downscale factor, coefficients in 22-bit fixed point, the horizontal pass first, each pass
// rounded and clipped to 8 bits. Matching it byte for byte keeps pixel values identical to HF's.
#pragma once

#include "strata/image/rgb_image.h"

namespace strata {

RgbImage resize_bicubic(const RgbImage& image, int32_t width, int32_t height);

}  // namespace strata
