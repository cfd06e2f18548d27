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
      RankMessage message;
      try {
        message = receive_from_first_rank(control);
      } catch (...) {
        const std::lock_guard lock(mutex);
        error = std::current_exception();
        finished = true;
        changed.notify_all();
        return;
      }
      std::unique_lock lock(mutex);
      const RankMessage::Kind kind = message.kind;
      messages.push_back(std::move(message));
      paused = kind == RankMessage::Kind::kLoadLora;
      changed.notify_all();
      changed.wait(lock, [&] { return !paused || closing; });
      if (kind == RankMessage::Kind::kStop || closing) {
        finished = true;
        return;
      }
    }
  }
};

ControlInbox::ControlInbox(Communicator& control) : state_(std::make_shared<State>(control)) {
  thread_ = std::thread([state = state_] { state->relay(); });
}

ControlInbox::~ControlInbox() {
  bool finished = false;
  {
    const std::lock_guard lock(state_->mutex);
    state_->closing = true;
    finished = state_->finished || state_->paused;
    state_->changed.notify_all();
  }
  if (finished) {
    thread_.join();
  } else {
    thread_.detach();  // blocked on rank 0, which lives on after this rank failed
  }
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
