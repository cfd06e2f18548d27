// Preprocessing against transformers' Qwen2VLImageProcessor (PIL backend) on the qwen3_5_vision
// fixture's PNGs: decoding, Pillow's bicubic resize, rescale, normalise and patchify give the
// same pixel values exactly (the same f32 operations in the same order), and smart_resize
// rounds as Python does.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "model/vision_fixture_support.h"
#include "strata/core/error.h"
#include "strata/image/image_processor.h"

namespace strata::test {
namespace {

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ImageProcessor, FixturePngsGiveTheHfProcessorsPixelValues) {
  const VisionFixture fixture = load_vision_fixture();
  const ImageProcessorConfig config = read_image_processor_config(fixture.dir);
  EXPECT_EQ(config.patch_size, 16);
  EXPECT_EQ(config.image_mean[0], 0.5f);
  for (size_t j = 0; j < fixture.images.size(); ++j) {
    const RgbImage image = decode_image(read_bytes(fixture.dir + "/image_" + std::to_string(j) + ".png"));
    const ProcessedImage got = process_image(image, config);
    const VisionImage& want = fixture.images[j];
    EXPECT_EQ(got.grid_thw, want.grid_thw) << j;
    ASSERT_EQ(got.pixel_values.shape(), want.pixel_values.shape()) << j;
    float worst = 0;
    for (int64_t i = 0; i < got.pixel_values.numel(); ++i)
      worst = std::max(worst, std::fabs(got.pixel_values.data_as<float>()[i] - want.pixel_values.data_as<float>()[i]));
    EXPECT_EQ(worst, 0.0f) << "image " << j;
  }
}

TEST(ImageProcessor, SmartResizeRoundsAsTransformers) {
  // 70 x 45 rounds to 64 x 32, under min_pixels 3136: scaled up, then ceil to multiples of 32.
  EXPECT_EQ(smart_resize(70, 45, 32, 3136, 65536), (std::pair<int32_t, int32_t>{96, 64}));
  // 80 / 32 = 2.5 rounds to even (2), as Python's round does; 112 / 32 = 3.5 rounds to 4.
  EXPECT_EQ(smart_resize(80, 112, 32, 32 * 32, 1 << 20), (std::pair<int32_t, int32_t>{64, 128}));
  // Past max_pixels: scaled down, floor to multiples of 32.
  EXPECT_EQ(smart_resize(1000, 1000, 32, 3136, 256 * 256), (std::pair<int32_t, int32_t>{256, 256}));
  EXPECT_THROW(smart_resize(10, 2100, 32, 3136, 65536), Error);
}

// A lossless WebP of image 0 (written by Pillow) decodes to the PNG's pixels, byte for byte.
TEST(ImageProcessor, LosslessWebpDecodesToThePngsPixels) {
  const std::string dir = load_vision_fixture().dir;
  const RgbImage png = decode_image(read_bytes(dir + "/image_0.png"));
  const RgbImage webp = decode_image(read_bytes(dir + "/image_0.webp"));
  EXPECT_EQ(webp.width, 45);
  EXPECT_EQ(webp.height, 70);
  EXPECT_EQ(webp.pixels, png.pixels);
  EXPECT_THROW(decode_image(read_bytes(dir + "/image_0.webp"), /*max_pixels=*/45 * 70 - 1), Error);
}

// stb_image's JPEG decoding against Pillow's (libjpeg-turbo) on a quality-75 4:2:0 JPEG: the
// IDCT and chroma upsampling differ by a few levels (measured at most 3 of 255, mean 0.07).
TEST(ImageProcessor, JpegDecodesWithinThreeLevelsOfPillow) {
  const std::string dir = load_vision_fixture().dir;
  const RgbImage jpeg = decode_image(read_bytes(dir + "/image_1.jpg"));
  const RgbImage pillow = decode_image(read_bytes(dir + "/image_1_jpg_pillow.png"));
  ASSERT_EQ(jpeg.pixels.size(), pillow.pixels.size());
  int worst = 0;
  double total = 0;
  for (size_t k = 0; k < jpeg.pixels.size(); ++k) {
    const int d = std::abs(static_cast<int>(jpeg.pixels[k]) - static_cast<int>(pillow.pixels[k]));
    worst = std::max(worst, d);
    total += d;
  }
  EXPECT_LE(worst, 3);
  EXPECT_LT(total / static_cast<double>(jpeg.pixels.size()), 0.1);
}

TEST(ImageProcessor, BytesThatAreNoImageAreRefused) {
  EXPECT_THROW(decode_image({}), Error);
  const std::vector<uint8_t> text = {'n', 'o', 't', ' ', 'a', 'n', ' ', 'i', 'm', 'a', 'g', 'e'};
  EXPECT_THROW(decode_image(text), Error);
  std::vector<uint8_t> png = read_bytes(load_vision_fixture().dir + "/image_0.png");
  png.resize(png.size() / 2);  // truncated
  EXPECT_THROW(decode_image(png), Error);
}

}  // namespace
}  // namespace strata::test
