// When each request of a serving benchmark is sent, as `vllm bench serve` paces them: gaps
// drawn from a gamma distribution (shape = burstiness, mean = 1 / request_rate; burstiness 1
// is a Poisson process), summed, then scaled so the last request goes out at exactly
// num_requests / request_rate. An infinite rate sends everything at once.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::bench {

struct ArrivalOptions {
  int64_t num_requests = 0;
  double request_rate = 0;  // requests per second; +inf: all at t = 0
  double burstiness = 1.0;  // < 1 burstier than Poisson, > 1 more even
  uint64_t seed = 0;
};

// Seconds from the benchmark's start, one per request, non-decreasing.
std::vector<double> arrival_offsets_s(const ArrivalOptions& options);

}  // namespace strata::bench
