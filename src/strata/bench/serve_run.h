// Sends a serving benchmark's requests at their arrival times, at most max_concurrency in
// flight (a request due while all slots are busy waits for one, as vLLM's semaphore does),
// one thread per request in flight on a keep-alive connection from the pool, and collects
// what each saw.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "strata/bench/bench_dataset.h"
#include "strata/bench/serve_request.h"

namespace strata::bench {

struct ServeRun {
  std::vector<RequestOutput> outputs;  // in request order
  double duration_s = 0;               // from the first send to the last answer
};

struct ServeSchedule {
  std::vector<double> arrival_offsets_s;  // one per request
  std::optional<int64_t> max_concurrency;  // unset: no cap
  std::function<void(int64_t num_done)> on_done;  // after each answer, one call at a time
};

ServeRun run_requests(const ServeEndpoint& endpoint, const std::vector<BenchRequest>& requests,
                      const ServeSchedule& schedule, ClientPool& clients);

}  // namespace strata::bench
