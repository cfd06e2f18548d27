#include "strata/bench/serve_run.h"

#include <mutex>
#include <semaphore>
#include <thread>

#include "strata/core/error.h"

namespace strata::bench {

ServeRun run_requests(const ServeEndpoint& endpoint, const std::vector<BenchRequest>& requests,
                      const ServeSchedule& schedule, ClientPool& clients) {
  const std::vector<double>& arrival_offsets_s = schedule.arrival_offsets_s;
  STRATA_CHECK(arrival_offsets_s.size() == requests.size());
  using Clock = std::chrono::steady_clock;
  ServeRun run;
  run.outputs.resize(requests.size());
  const auto slots = static_cast<std::ptrdiff_t>(schedule.max_concurrency.value_or(std::max<int64_t>(1, std::ssize(requests))));
  std::counting_semaphore<> free_slots(slots);
  std::mutex done_mutex;
  int64_t num_done = 0;
  std::vector<std::thread> threads;
  threads.reserve(requests.size());
  const Clock::time_point start = Clock::now();
  for (size_t i = 0; i < requests.size(); ++i) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(arrival_offsets_s[i])));
    free_slots.acquire();
    threads.emplace_back([&, i] {
      std::unique_ptr<ServeClient> client = clients.take();
      run.outputs[i] = client->send(endpoint, requests[i], start);
      clients.give_back(std::move(client));
      free_slots.release();
      const std::lock_guard lock(done_mutex);
      ++num_done;
      if (schedule.on_done) schedule.on_done(num_done);
    });
  }
  for (std::thread& t : threads) t.join();
  run.duration_s = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

}  // namespace strata::bench
