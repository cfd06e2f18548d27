#include "test_support.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/ops/cpu/convert.h"

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

namespace {

// A sibling of `path` no other process or thread uses.
std::string private_sibling(const std::string& path) {
  static std::atomic<int> counter{0};
  return fmt::format("{}.tmp-{}-{}", path, getpid(), counter++);
}

}  // namespace

std::string make_dir_once(const std::string& dir, const std::function<void(const std::string&)>& fill) {
  namespace fs = std::filesystem;
  if (fs::exists(dir)) return dir;
  const std::string tmp = private_sibling(dir);
  fs::create_directories(tmp);
  try {
    fill(tmp);
  } catch (...) {
    fs::remove_all(tmp);
    throw;
  }
  std::error_code ec;
  fs::rename(tmp, dir, ec);  // fails when another process got there first: its copy is as good
  if (ec) fs::remove_all(tmp);
  if (!fs::exists(dir)) fail("could not make {}: {}", dir, ec.message());
  return dir;
}

std::string unpack_fixture(const std::string& relative, const std::string& name) {
  const std::string tarball = fixture_path(relative);
  return make_dir_once(temp_dir() + "/unpacked/" + name, [&](const std::string& tmp) {
    const std::string cmd = fmt::format("tar -xzf '{}' -C '{}'", tarball, tmp);
    if (std::system(cmd.c_str()) != 0) fail("could not unpack {} (is the fixture there?)", tarball);
  });
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = private_sibling(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) fail("could not write {}", tmp);
  }
  std::filesystem::rename(tmp, path);
}

std::string per_test_name(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string out = info == nullptr ? name : fmt::format("{}_{}_{}", info->test_suite_name(), info->name(), name);
  for (char& c : out)
    if (c == '/') c = '_';
  return out;
}

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

Tensor stored_as(const Tensor& f32, DType dtype) {
  Tensor t = Tensor::host(dtype, f32.shape());
  cpu::narrow_from_f32(f32.data_as<float>(), dtype, f32.numel(), t.data());
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
