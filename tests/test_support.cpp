#include "test_support.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "strata/core/error.h"

namespace strata::test {

// STRATA_FIXTURES_DIR in the environment overrides the build-time path, so a test binary
// copied to another machine (the GPU runner) finds the fixtures it was shipped with.
std::string fixtures_dir() {
  const char* env = std::getenv("STRATA_FIXTURES_DIR");
  return env != nullptr && *env != 0 ? std::string(env) : std::string(STRATA_FIXTURES_DIR);
}
// The shared fixtures first, then the ones this repository adds (tests/fixtures).
std::string fixture_path(const std::string& relative) {
  const std::string shared = fixtures_dir() + "/" + relative;
  const std::string local = std::string(STRATA_LOCAL_FIXTURES_DIR) + "/" + relative;
  return std::filesystem::exists(shared) || !std::filesystem::exists(local) ? shared : local;
}

std::string temp_dir() {
  const char* env = std::getenv("STRATA_TEST_TMP_DIR");
  const std::string dir = env != nullptr && *env != 0 ? std::string(env) : std::string(STRATA_TEST_TMP_DIR);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string strata_binary() { return STRATA_BINARY; }

Tensor random_f32(Shape shape, uint32_t seed, float lo, float hi) {
  Tensor t = Tensor::host(DType::kF32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

Tensor random_bf16(Shape shape, uint32_t seed, float lo, float hi) {
  Tensor f = random_f32(shape, seed, lo, hi);
  Tensor t = Tensor::host(DType::kBF16, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<uint16_t>()[i] = f32_to_bf16(f.data_as<float>()[i]);
  return t;
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  STRATA_CHECK(a.shape() == b.shape() && a.dtype() == DType::kF32 && b.dtype() == DType::kF32);
  float m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float d = std::fabs(a.data_as<float>()[i] - b.data_as<float>()[i]);
    if (std::isnan(d)) return INFINITY;
    m = std::max(m, d);
  }
  return m;
}

}  // namespace strata::test
