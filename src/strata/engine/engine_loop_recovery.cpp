// EngineLoop's recovery: what a step that throws costs. Its requests fail (FinishReason::kError,
// logged with their ids) and free all they held; the others keep running. A sticky
// DeviceError means the device is lost: every request fails and the inbox closes for good.
#include "strata/backend/device_error.h"
#include "strata/core/logging.h"
#include "strata/engine/engine_loop.h"

namespace strata {

void EngineLoop::recover(const std::exception& error) {
  const auto* device = dynamic_cast<const DeviceError*>(&error);
  if (device != nullptr && device->sticky()) return fail_everything(error.what());
  fail_step(error.what());
}

void EngineLoop::fail_step(const std::string& message) {
  std::vector<std::shared_ptr<RequestState>> failed = std::move(step_requests_);
  step_requests_.clear();
  for (std::optional<InFlightStep>* step : {&launched_, &in_flight_}) {
    if (!*step) continue;
    for (const SampleTask& task : (*step)->ticket.tasks) failed.push_back(task.seq->request);
    try {
      batch_sampler_.discard((*step)->ticket, /*wait_for_device=*/true);
    } catch (const std::exception&) {
      batch_sampler_.discard((*step)->ticket, false);  // a lost device: the next step finds out
    }
    step->reset();
  }
  // Thrown before any row was scheduled: nothing tells whose it was, and the same throw
  // would come back every iteration, so every request fails rather than waiting forever.
  if (failed.empty())
    for (const auto& [id, seqs] : sequences_) failed.push_back(seqs.front()->request);
  for (const auto& request : failed) fail_request(*request, message);
}

void EngineLoop::fail_everything(const std::string& message) {
  spdlog::critical("the device is lost, failing every request and stopping the engine: {}", message);
  std::vector<std::shared_ptr<RequestState>> incoming;
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    fatal_error_ = message;
    incoming.swap(inbox_);
    cancels_.clear();
  }
  for (std::optional<InFlightStep>* step : {&launched_, &in_flight_}) {
    if (*step) batch_sampler_.discard((*step)->ticket, /*wait_for_device=*/false);
    step->reset();
  }
  micro_batches_.clear();  // the group is lost: no logits come back
  for (const auto& request : incoming) start_request(request);
  std::vector<std::shared_ptr<RequestState>> requests;
  for (const auto& [id, seqs] : sequences_) requests.push_back(seqs.front()->request);
  for (const auto& request : requests) fail_request(*request, message);
}

void EngineLoop::fail_request(RequestState& request, const std::string& message) {
  if (request.num_finished_choices >= request.request.n) return;  // already over
  spdlog::error("request {} failed: {}", request.request_id, message);
  request.error = message;
  auto it = sequences_.find(request.request_id);
  if (it == sequences_.end()) return;
  for (auto& seq : it->second) finish(*seq, FinishReason::kError, std::nullopt);
}

void EngineLoop::inject_fault() {
  const FaultInjection& fault = parts_.options.fault_injection;
  if (++num_steps_launched_ != fault.fail_at_step) return;
  throw DeviceError(fmt::format("injected fault in step {}", num_steps_launched_), fault.sticky);
}

}  // namespace strata
