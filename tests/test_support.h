// Helpers shared by tests: fixture paths, a scratch folder, random tensors.
#pragma once

#include <functional>
#include <random>
#include <string>

#include "strata/core/tensor.h"

namespace strata::test {

std::string fixtures_dir();                   // $STRATA_FIXTURES_DIR, else ../shared/fixtures
std::string fixture_path(const std::string& relative);
std::string temp_dir();                       // a scratch folder inside the build tree
std::string strata_binary();                  // the CLI built beside the tests

// ctest -j runs every test in its own process, so what tests share in temp_dir() is made
// race-free: a shared folder appears whole or not at all, and a file is replaced whole.
// `dir` made once by `fill` (writing into a fresh sibling folder that is then renamed to it).
std::string make_dir_once(const std::string& dir, const std::function<void(const std::string&)>& fill);
// temp_dir()/unpacked/<name> holding the files of the fixture tarball `relative` (.tar.gz).
std::string unpack_fixture(const std::string& relative, const std::string& name);
// Writes `bytes` to a temporary file renamed over `path`: readers never see a part.
void write_file_atomically(const std::string& path, const std::string& bytes);
// A file name unique to the running test (suite and name, '/' of parameterised tests -> '_').
std::string per_test_name(const std::string& name);

// A host tensor of f32 values uniform in [lo, hi), deterministic for a seed.
Tensor random_f32(Shape shape, uint32_t seed, float lo = -1.f, float hi = 1.f);
// Same values rounded to bf16 storage.
Tensor random_bf16(Shape shape, uint32_t seed, float lo = -1.f, float hi = 1.f);
// An f32 host tensor stored as `dtype` (a float type the CPU narrows to: f32, f16, bf16).
Tensor stored_as(const Tensor& f32, DType dtype);
// Max |a - b| over two f32 host tensors of the same shape.
float max_abs_diff(const Tensor& a, const Tensor& b);

}  // namespace strata::test
