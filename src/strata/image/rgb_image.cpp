#include "strata/image/rgb_image.h"

#include <cstring>
#include <limits>

#include "strata/core/error.h"

#if defined(STRATA_WITH_STB_IMAGE)
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_NO_STDIO
#include <stb/stb_image.h>
#endif
#if defined(STRATA_WITH_WEBP)
#include <webp/decode.h>
#endif

namespace strata {

#if !defined(STRATA_WITH_STB_IMAGE)
RgbImage decode_image(std::span<const uint8_t>, int64_t) {
  fail("this Strata was built without stb_image, so it cannot decode images; install libstb-dev "
       "(scripts/setup.sh) and rebuild");
}
#else
namespace {

void check_pixels(int width, int height, int64_t max_pixels) {
  if (static_cast<int64_t>(width) * height > max_pixels)
    throw ImageTooLarge(fmt::format("the image is {}x{} pixels, more than the limit of {} pixels", width, height,
                                    max_pixels));
}

bool is_webp(std::span<const uint8_t> bytes) {
  return bytes.size() >= 12 && std::memcmp(bytes.data(), "RIFF", 4) == 0 && std::memcmp(bytes.data() + 8, "WEBP", 4) == 0;
}

RgbImage decode_webp(std::span<const uint8_t> bytes, int64_t max_pixels) {
#if defined(STRATA_WITH_WEBP)
  int width = 0, height = 0;
  if (WebPGetInfo(bytes.data(), bytes.size(), &width, &height) == 0) fail("could not read the WebP image's header");
  check_pixels(width, height, max_pixels);
  uint8_t* data = WebPDecodeRGB(bytes.data(), bytes.size(), &width, &height);
  if (data == nullptr) fail("could not decode the WebP image");
  RgbImage image{.width = width, .height = height};
  image.pixels.assign(data, data + static_cast<size_t>(width) * height * 3);
  WebPFree(data);
  return image;
#else
  (void)bytes, (void)max_pixels;
  fail("this Strata was built without libwebp, so it cannot decode WebP images; send JPEG or PNG, or install "
       "libwebp-dev (scripts/setup.sh) and rebuild");
#endif
}

}  // namespace

RgbImage decode_image(std::span<const uint8_t> bytes, int64_t max_pixels) {
  if (bytes.empty()) fail("the image is empty (0 bytes); send a JPEG, PNG or WebP file");
  if (is_webp(bytes)) return decode_webp(bytes, max_pixels);
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    fail("the image is {} bytes, more than the decoder takes", bytes.size());
  int width = 0, height = 0, channels = 0;
  if (stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &width, &height, &channels) == 0)
    fail("could not read the image's header ({}); send a JPEG, PNG or WebP file", stbi_failure_reason());
  check_pixels(width, height, max_pixels);
  stbi_uc* data = stbi_load_from_memory(bytes.data(), static_cast<int>(bytes.size()), &width, &height, &channels, 3);
  if (data == nullptr)
    fail("could not decode the image ({}); send a JPEG, PNG or WebP file", stbi_failure_reason());
  RgbImage image{.width = width, .height = height};
  image.pixels.assign(data, data + static_cast<size_t>(width) * height * 3);
  stbi_image_free(data);
  return image;
}
#endif

}  // namespace strata
