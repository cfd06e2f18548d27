// RequestParser: reads requests off a connection's byte stream one at a time, with the
// limits applied as bytes arrive: a head over max_header_bytes is a 431 before its end is
// seen, a body over max_body_bytes (Content-Length or chunked) a 413 before the excess is
// read. Framing two readers could take differently (Content-Lengths that disagree, one with
// chunked) is a 400. A request with neither header has no body.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "strata/server/http/chunked_body.h"
#include "strata/server/http/http_request.h"

namespace strata::server::http {

struct ParserLimits {
  int64_t max_header_bytes = 64 << 10;  // request line and headers
  int64_t max_body_bytes = 4 << 20;
};

class RequestParser {
 public:
  // kIdle: nothing of the next request yet (blank lines between requests are skipped).
  enum class State { kIdle, kHead, kBody, kDone, kFailed };

  explicit RequestParser(ParserLimits limits) : limits_(limits) {}

  // Takes bytes from the front of `data`, up to the end of one request; returns how many it
  // used. Call again with the rest after take().
  size_t feed(std::string_view data);
  State state() const { return state_; }
  // Set once the head is read: the client waits for "100 Continue" before sending the body.
  bool expects_continue() const { return expects_continue_; }
  // The complete request (state kDone); the parser then waits for the next one.
  HttpRequest take();
  const FramingError& error() const { return error_; }

 private:
  size_t feed_head(std::string_view data);
  size_t feed_body(std::string_view data);
  void end_head();
  // Body framing from the parsed headers: a fixed length, chunked, or none.
  std::optional<FramingError> read_framing();
  void fail(FramingError error);

  ParserLimits limits_;
  State state_ = State::kIdle;
  std::string head_;
  size_t scanned_ = 0;      // head_ bytes already searched for the blank line
  size_t line_start_ = 0;   // where the line being scanned starts
  HttpRequest request_;
  bool expects_continue_ = false;
  int64_t body_remaining_ = 0;
  std::optional<ChunkedBody> chunked_;
  FramingError error_;
};

}  // namespace strata::server::http
