// ControlInbox: ranks 1..n-1 of a pipeline-parallel group read rank 0's messages on a thread of
// their own, as soon as rank 0 sends them, into a queue their worker takes in order. Each round of
// the control channel reaches every rank, so without it rank 0 could send nothing while a later
// stage runs a step; with it rank 0 keeps one micro-batch in flight per stage.
#pragma once

#include <memory>
#include <thread>

#include "strata/parallel/step_message.h"

namespace strata {

class ControlInbox {
 public:
  // control: the group's message channel; this rank reads nothing else from it meanwhile, except
  // after a kLoadLora message, until resume().
  explicit ControlInbox(Communicator& control);
  // Joins the thread, interrupting its wait for rank 0 when this rank failed (the channel then fails).
  ~ControlInbox();
  ControlInbox(const ControlInbox&) = delete;
  ControlInbox& operator=(const ControlInbox&) = delete;

  // The next message, waited for; throws what receiving it threw (rank 0 gone).
  RankMessage pop();
  // After a kLoadLora message, whose agreement rounds the worker runs on the channel itself: the
  // thread reads on.
  void resume();

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace strata
