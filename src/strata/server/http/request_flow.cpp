// The EventLoop's handling of one connection's requests, in order: parse what has arrived,
// answer inline or hand the request to a worker, move the worker's answer to the socket,
// then keep the connection for the next request or close it (lingering, so a client still
// sending does not reset the answer).
#include <sys/socket.h>

#include "strata/server/http/event_loop.h"
#include "strata/server/http/response_bytes.h"

namespace strata::server::http {
namespace {

// Most clients send a whole body before they read the answer: discard up to 16 MiB of a body
// refused early (413), so they read the error instead of a reset; a longer one is cut off.
constexpr std::chrono::milliseconds kLingerTime{1000};
constexpr int64_t kMaxLingerBytes = int64_t{16} << 20;

}  // namespace

void EventLoop::service(Connection& c, Clock::time_point now) {
  if (c.phase != Phase::kLinger) advance(c, now);
  if (!write_pending(c, now)) return close_connection(c.id);
  settle(c, now);
}

void EventLoop::advance(Connection& c, Clock::time_point now) {
  while (true) {
    if (c.phase == Phase::kBusy) {
      if (!pump(c, now)) return;
      continue;
    }
    if (c.close_after_write || c.num_unsent() > kMaxUnsentBytes || c.in.empty()) return;
    if (!parse_some(c, now)) return;
  }
}

bool EventLoop::parse_some(Connection& c, Clock::time_point now) {
  c.in.erase(0, c.parser.feed(c.in));
  const RequestParser::State state = c.parser.state();
  if (state == RequestParser::State::kHead && c.phase == Phase::kIdle) {
    c.phase = Phase::kHead;
    if (c.served_any) c.deadline = now + options_.header_timeout;  // a new connection's counts from accept
  }
  const bool head_read = state == RequestParser::State::kBody || state == RequestParser::State::kDone;
  if (head_read && (c.phase == Phase::kIdle || c.phase == Phase::kHead)) {
    c.phase = Phase::kBody;
    c.deadline = now + options_.body_timeout;
    if (state == RequestParser::State::kBody && c.parser.expects_continue()) queue_bytes(c, kContinue, now);
  }
  if (state == RequestParser::State::kFailed) {
    refuse(c, c.parser.error(), now);
    return false;
  }
  if (state != RequestParser::State::kDone) return false;
  dispatch(c, c.parser.take(), now);
  return true;
}

void EventLoop::dispatch(Connection& c, HttpRequest request, Clock::time_point now) {
  c.served_any = true;
  const bool head = request.method == "HEAD";
  // HEAD is only answered inline, without the body (a worker's answer would carry one).
  const bool keep_alive = request.keep_alive && !stopping_;
  std::optional<HttpResponse> answer;
  try {
    answer = handlers_.answer_inline(request);
  } catch (const std::exception& e) {
    answer = error_response(ApiError(500, std::string("internal error: ") + e.what(), "server_error"));
  }
  if (!answer && head)
    answer = error_response(ApiError(405, "HEAD is not allowed on " + request.path, "invalid_request_error"));
  if (answer) {
    answer->omit_body = answer->omit_body || head;
    queue_bytes(c, response_bytes(*answer, keep_alive), now);
    return end_answer(c, keep_alive, now);
  }
  auto exchange = std::make_shared<Exchange>(std::move(request), [this, id = c.id] { notify(id); });
  c.exchange = exchange;
  c.phase = Phase::kBusy;
  c.deadline = Clock::time_point::max();  // answering: only the send deadline applies
  workers_.post([this, exchange] {
    if (!exchange->client().gone()) {
      try {
        handlers_.answer(*exchange);
      } catch (...) {
        // The handlers answer every failure themselves; anything else just closes.
      }
    }
    exchange->finish(false);  // a no-op when the handler finished it
  });
}

bool EventLoop::pump(Connection& c, Clock::time_point now) {
  if (c.num_unsent() > kMaxUnsentBytes) return false;  // taken again once the client reads
  Exchange::Taken taken = c.exchange->take();
  queue_bytes(c, taken.bytes, now);
  if (!taken.finished) return false;
  c.exchange.reset();
  end_answer(c, taken.keep_alive && !stopping_, now);
  return true;
}

void EventLoop::end_answer(Connection& c, bool keep_alive, Clock::time_point now) {
  c.phase = Phase::kIdle;
  c.close_after_write = c.close_after_write || !keep_alive;
  c.deadline = c.close_after_write ? Clock::time_point::max() : now + options_.keep_alive_timeout;
}

void EventLoop::refuse(Connection& c, const FramingError& error, Clock::time_point now) {
  queue_bytes(c, response_bytes(framing_error_response(error), false), now);
  c.close_after_write = true;
  c.deadline = Clock::time_point::max();
}

// After reads and writes: linger, close, or wait for the next event.
void EventLoop::settle(Connection& c, Clock::time_point now) {
  if (c.phase == Phase::kLinger) {
    if (c.peer_closed || c.num_lingered_bytes > kMaxLingerBytes) return close_connection(c.id);
    return watch(c);
  }
  if (c.close_after_write && c.num_unsent() == 0) {
    if (c.peer_closed || stopping_) return close_connection(c.id);
    shutdown(c.fd, SHUT_WR);
    c.phase = Phase::kLinger;
    c.in.clear();
    c.deadline = now + kLingerTime;
    return watch(c);
  }
  if (c.peer_closed) {
    // A client that shuts its side is gone: its exchange is cancelled; what is queued for
    // it is still written.
    if (c.phase == Phase::kBusy || c.num_unsent() == 0) return close_connection(c.id);
    c.close_after_write = true;
  }
  watch(c);
}

}  // namespace strata::server::http
