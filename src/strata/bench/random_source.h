// The benchmarks' random numbers: mt19937_64 (specified bit for bit by the standard) with
// our own mappings to ranges and distributions, because std's distributions differ between
// standard libraries and a seed must give the same prompts and schedule everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <utility>
#include <vector>

namespace strata::bench {

class RandomSource {
 public:
  explicit RandomSource(uint64_t seed) : engine_(seed) {}

  double uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)

  // An integer in [lo, hi]; the modulo bias is below 2^-40 for any range used here.
  int64_t uniform_int(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(engine_() % static_cast<uint64_t>(hi - lo + 1));
  }

  double normal() {  // Box-Muller
    const double u = 1.0 - uniform01(), v = uniform01();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
  }

  // Gamma(shape, scale = 1), Marsaglia and Tsang; shape < 1 through the boost u^(1/shape).
  double gamma(double shape) {
    if (shape < 1.0) return gamma(shape + 1.0) * std::pow(1.0 - uniform01(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    while (true) {
      const double x = normal(), v = std::pow(1.0 + c * x, 3);
      if (v <= 0) continue;
      if (std::log(1.0 - uniform01()) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }

  template <typename T>
  void shuffle(std::vector<T>& items) {  // Fisher-Yates
    for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[uniform_int(0, static_cast<int64_t>(i) - 1)]);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace strata::bench
