// Images to a Qwen-VL vision tower's input, as transformers' Qwen2VLImageProcessor (PIL backend)
// makes it: smart resize to multiples of patch x merge within [min_pixels, max_pixels] (bicubic),
// rescale to [0, 1], normalise per channel, then patches in merge-block order with each patch
// repeated temporal_patch_size times (a still image is a clip of identical frames).
#pragma once

#include <array>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "strata/core/tensor.h"
#include "strata/image/rgb_image.h"

namespace strata {

struct ImageProcessorConfig {
  int32_t patch_size = 16;
  int32_t temporal_patch_size = 2;
  int32_t merge_size = 2;
  int64_t min_pixels = 56 * 56;          // size.shortest_edge
  int64_t max_pixels = 28 * 28 * 1280;   // size.longest_edge
  double rescale_factor = 1.0 / 255.0;
  std::array<float, 3> image_mean = {0.48145466f, 0.4578275f, 0.40821073f};  // OpenAI CLIP's
  std::array<float, 3> image_std = {0.26862954f, 0.26130258f, 0.27577711f};
  bool do_resize = true, do_rescale = true, do_normalize = true;

  int32_t factor() const { return patch_size * merge_size; }
};

// preprocessor_config.json's fields (size or min_pixels / max_pixels); throws strata::Error for a
// resampling other than bicubic or sizes that cannot work.
ImageProcessorConfig image_processor_config(const nlohmann::json& json);
ImageProcessorConfig read_image_processor_config(const std::string& model_dir);

// (height, width) multiples of `factor` nearest the image's within the pixel bounds (transformers'
// smart_resize, Python's round-half-even included). Throws for an aspect ratio past 200.
std::pair<int32_t, int32_t> smart_resize(int32_t height, int32_t width, int32_t factor, int64_t min_pixels,
                                         int64_t max_pixels);

struct ProcessedImage {
  Tensor pixel_values;              // [t * h * w, 3 * temporal * patch²] f32 host
  std::array<int32_t, 3> grid_thw;  // patches per (frame, row, column)
};

ProcessedImage process_image(const RgbImage& image, const ImageProcessorConfig& config);

}  // namespace strata
