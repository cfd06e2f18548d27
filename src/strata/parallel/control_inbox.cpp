#include "strata/parallel/control_inbox.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>

namespace strata {

struct ControlInbox::State {
  explicit State(Communicator& channel) : control(channel) {}
  Communicator& control;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<RankMessage> messages;
  std::exception_ptr error;
  bool paused = false;    // after kLoadLora, until resume()
  bool closing = false;   // the worker is gone
  bool finished = false;  // the thread reads no more

  // Reads until kStop or an error; pauses after kLoadLora while the worker uses the channel.
  void relay() {
    for (;;) {
      {
        const std::lock_guard lock(mutex);
        if (closing) return end();
      }
      RankMessage message;
      try {
        message = receive_from_first_rank(control);
      } catch (...) {
        const std::lock_guard lock(mutex);
        error = std::current_exception();
        return end();
      }
      std::unique_lock lock(mutex);
      const RankMessage::Kind kind = message.kind;
      messages.push_back(std::move(message));
      paused = kind == RankMessage::Kind::kLoadLora;
      changed.notify_all();
      changed.wait(lock, [&] { return !paused || closing; });
      if (kind == RankMessage::Kind::kStop || closing) return end();
    }
  }
  void end() {  // with the mutex held
    finished = true;
    changed.notify_all();
  }
};

ControlInbox::ControlInbox(Communicator& control) : state_(std::make_shared<State>(control)) {
  thread_ = std::thread([state = state_] { state->relay(); });
}

ControlInbox::~ControlInbox() {
  bool waiting_on_rank_zero = false;
  {
    const std::lock_guard lock(state_->mutex);
    state_->closing = true;
    waiting_on_rank_zero = !state_->finished && !state_->paused;
    state_->changed.notify_all();
  }
  try {
    if (waiting_on_rank_zero) state_->control.interrupt();  // this rank failed; rank 0 lives on
  } catch (const std::exception&) {  // a channel that cannot be interrupted: the thread ends with the process
    thread_.detach();
    return;
  }
  thread_.join();
}

RankMessage ControlInbox::pop() {
  std::unique_lock lock(state_->mutex);
  state_->changed.wait(lock, [&] { return !state_->messages.empty() || state_->error; });
  if (state_->messages.empty()) std::rethrow_exception(state_->error);
  RankMessage message = std::move(state_->messages.front());
  state_->messages.pop_front();
  return message;
}

void ControlInbox::resume() {
  const std::lock_guard lock(state_->mutex);
  state_->paused = false;
  state_->changed.notify_all();
}

}  // namespace strata
