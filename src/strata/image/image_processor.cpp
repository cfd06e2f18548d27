#include "strata/image/image_processor.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "strata/core/error.h"
#include "strata/image/resize_bicubic.h"

namespace strata {
namespace {

constexpr int kPilBicubic = 3;

std::array<float, 3> channels(const nlohmann::json& json, const char* key, std::array<float, 3> fallback) {
  if (!json.contains(key)) return fallback;
  const nlohmann::json& v = json[key];
  if (v.is_number()) return {v.get<float>(), v.get<float>(), v.get<float>()};
  if (!v.is_array() || v.size() != 3) fail("preprocessor_config.json: {} must be a number or 3 numbers", key);
  return {v[0].get<float>(), v[1].get<float>(), v[2].get<float>()};
}

}  // namespace

ImageProcessorConfig image_processor_config(const nlohmann::json& json) {
  ImageProcessorConfig c;
  c.patch_size = json.value("patch_size", c.patch_size);
  c.temporal_patch_size = json.value("temporal_patch_size", c.temporal_patch_size);
  c.merge_size = json.value("merge_size", c.merge_size);
  c.min_pixels = json.value("min_pixels", c.min_pixels);
  c.max_pixels = json.value("max_pixels", c.max_pixels);
  if (json.contains("size") && json["size"].is_object()) {
    c.min_pixels = json["size"].value("shortest_edge", c.min_pixels);
    c.max_pixels = json["size"].value("longest_edge", c.max_pixels);
  }
  c.rescale_factor = json.value("rescale_factor", c.rescale_factor);
  c.image_mean = channels(json, "image_mean", c.image_mean);
  c.image_std = channels(json, "image_std", c.image_std);
  c.do_resize = json.value("do_resize", true);
  c.do_rescale = json.value("do_rescale", true);
  c.do_normalize = json.value("do_normalize", true);
  if (json.value("resample", kPilBicubic) != kPilBicubic)
    fail("preprocessor_config.json: resample {} is not supported; Strata resizes images bicubically (3)",
         json["resample"].dump());
  if (c.patch_size < 1 || c.merge_size < 1 || c.temporal_patch_size < 1 || c.min_pixels < 1 ||
      c.max_pixels < c.min_pixels)
    fail("preprocessor_config.json: patch_size {}, merge_size {}, temporal_patch_size {} must be positive and "
         "min_pixels {} <= max_pixels {}", c.patch_size, c.merge_size, c.temporal_patch_size, c.min_pixels,
         c.max_pixels);
  return c;
}

ImageProcessorConfig read_image_processor_config(const std::string& model_dir) {
  const std::string path = model_dir + "/preprocessor_config.json";
  if (!std::filesystem::exists(path)) return {};
  std::ifstream in(path);
  try {
    return image_processor_config(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: {}", path, e.what());
  }
}

std::pair<int32_t, int32_t> smart_resize(int32_t height, int32_t width, int32_t factor, int64_t min_pixels,
                                         int64_t max_pixels) {
  const double h = height, w = width, f = factor;
  if (std::max(h, w) / std::min(h, w) > 200)
    fail("the image is {}x{}: its aspect ratio must be under 200", width, height);
  double h_bar = std::nearbyint(h / f) * f, w_bar = std::nearbyint(w / f) * f;  // ties to even, as Python
  if (h_bar * w_bar > static_cast<double>(max_pixels)) {
    const double beta = std::sqrt(h * w / static_cast<double>(max_pixels));
    h_bar = std::max(f, std::floor(h / beta / f) * f);
    w_bar = std::max(f, std::floor(w / beta / f) * f);
  } else if (h_bar * w_bar < static_cast<double>(min_pixels)) {
    const double beta = std::sqrt(static_cast<double>(min_pixels) / (h * w));
    h_bar = std::ceil(h * beta / f) * f;
    w_bar = std::ceil(w * beta / f) * f;
  }
  return {static_cast<int32_t>(h_bar), static_cast<int32_t>(w_bar)};
}

ProcessedImage process_image(const RgbImage& image, const ImageProcessorConfig& c) {
  RgbImage resized = image;
  if (c.do_resize) {
    const auto [h, w] = smart_resize(image.height, image.width, c.factor(), c.min_pixels, c.max_pixels);
    resized = resize_bicubic(image, w, h);
  }
  if (resized.height % c.factor() != 0 || resized.width % c.factor() != 0)
    fail("the image is {}x{}; without resizing its sides must be multiples of {}", resized.width, resized.height,
         c.factor());
  const int32_t p = c.patch_size, m = c.merge_size, t = c.temporal_patch_size;
  const int32_t grid_h = resized.height / p, grid_w = resized.width / p;
  const int64_t dim = 3LL * t * p * p;
  Tensor out = Tensor::host(DType::kF32, {static_cast<int64_t>(grid_h) * grid_w, dim});
  float* dst = out.data_as<float>();
  for (int32_t bh = 0; bh < grid_h / m; ++bh)
    for (int32_t bw = 0; bw < grid_w / m; ++bw)
      for (int32_t mh = 0; mh < m; ++mh)
        for (int32_t mw = 0; mw < m; ++mw)
          for (int ch = 0; ch < 3; ++ch)
            for (int32_t frame = 0; frame < t; ++frame)
              for (int32_t y = 0; y < p; ++y)
                for (int32_t x = 0; x < p; ++x) {
                  // as numpy: uint8 widened to f64, times the factor, narrowed to f32, then normalised in f32
                  float v = resized.at((bh * m + mh) * p + y, (bw * m + mw) * p + x, ch);
                  if (c.do_rescale) v = static_cast<float>(static_cast<double>(v) * c.rescale_factor);
                  if (c.do_normalize) v = (v - c.image_mean[ch]) / c.image_std[ch];
                  *dst++ = v;
                }
  return {.pixel_values = std::move(out), .grid_thw = {1, grid_h, grid_w}};
}

}  // namespace strata
