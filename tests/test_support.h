// Helpers shared by tests: fixture paths, a scratch folder, random tensors.
#pragma once

#include <random>
#include <string>

#include "strata/core/tensor.h"

namespace strata::test {

std::string fixtures_dir();                   // $STRATA_FIXTURES_DIR, else ../shared/fixtures
std::string fixture_path(const std::string& relative);
std::string temp_dir();                       // a scratch folder inside the build tree
std::string strata_binary();                  // the CLI built beside the tests

// A host tensor of f32 values uniform in [lo, hi), deterministic for a seed.
Tensor random_f32(Shape shape, uint32_t seed, float lo = -1.f, float hi = 1.f);
// Same values rounded to bf16 storage.
Tensor random_bf16(Shape shape, uint32_t seed, float lo = -1.f, float hi = 1.f);
// Max |a - b| over two f32 host tensors of the same shape.
float max_abs_diff(const Tensor& a, const Tensor& b);

}  // namespace strata::test
