#include "strata/bench/engine_workload.h"

#include <chrono>
#include <thread>

#include "strata/core/error.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void observe(EngineRequestTiming& timing, const RequestUpdate& update, double now) {
  for (const ChoiceDelta& d : update.deltas) {
    if (!d.token_ids.empty() && timing.first_token_s < 0) timing.first_token_s = now;
    timing.output_tokens += static_cast<int64_t>(d.token_ids.size());
    if (d.finish_reason != FinishReason::kNone) timing.reason = d.finish_reason;
  }
  if (!update.error.empty()) timing.error = update.error;
  if (update.finished) timing.finish_s = now;
}

}  // namespace

EngineRun run_engine_workload(Engine& engine, std::vector<GenerationRequest> requests, double timeout_s) {
  std::vector<std::shared_ptr<RequestStream>> streams;
  EngineRun run;
  run.requests.resize(requests.size());
  const Clock::time_point t0 = Clock::now();
  for (GenerationRequest& request : requests) streams.push_back(engine.submit(std::move(request)));
  size_t open = streams.size();
  std::vector<bool> done(streams.size(), false);
  while (open > 0) {
    bool any = false;
    for (size_t i = 0; i < streams.size(); ++i) {
      if (done[i]) continue;
      std::optional<RequestUpdate> update = streams[i]->pop(std::chrono::milliseconds(0));
      if (!update) continue;
      any = true;
      observe(run.requests[i], *update, seconds_since(t0));
      if (update->finished) {
        done[i] = true;
        --open;
      }
    }
    if (!any) std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (seconds_since(t0) > timeout_s)
      fail("{} of {} requests still running after {} s; the engine is stuck or far too slow for this workload", open,
           streams.size(), timeout_s);
  }
  run.wall_s = seconds_since(t0);
  return run;
}

void check_exact_lengths(const EngineRun& run, const std::vector<int64_t>& output_tokens) {
  STRATA_CHECK(run.requests.size() == output_tokens.size());
  for (size_t i = 0; i < run.requests.size(); ++i) {
    const EngineRequestTiming& r = run.requests[i];
    if (!r.error.empty()) fail("request {} failed: {}", i, r.error);
    if (r.output_tokens != output_tokens[i] || r.reason != FinishReason::kLength)
      fail("request {} produced {} tokens (finish '{}'), expected {} ending by length", i, r.output_tokens,
           finish_reason_name(r.reason), output_tokens[i]);
  }
}

}  // namespace strata::bench
