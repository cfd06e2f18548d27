// ChunkedBody: decodes a chunked request body (RFC 9112 section 7.1) as bytes arrive: hex
// size lines (extensions ignored), data, CRLF, then trailers up to an empty line (ignored).
// Each chunk's size is checked against the body limit before its data is taken, so a client
// can never make the server hold more than the limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "strata/server/http/http_request.h"

namespace strata::server::http {

class ChunkedBody {
 public:
  explicit ChunkedBody(int64_t max_body_bytes) : max_body_bytes_(max_body_bytes) {}

  // Takes bytes from the front of `data`, appending what they decode to `body`; returns how
  // many it used. Stops at the end of the body or at the first error.
  size_t feed(std::string_view data, std::string& body);
  bool done() const { return state_ == State::kDone; }
  const std::optional<FramingError>& error() const { return error_; }

 private:
  enum class State { kSizeLine, kData, kDataEnd, kTrailer, kDone, kFailed };
  // A size or trailer line: true once `line_` holds a whole line (without its CRLF).
  bool take_line(std::string_view data, size_t& used);
  void end_size_line(const std::string& body);
  void fail(int status, std::string message);

  int64_t max_body_bytes_;
  State state_ = State::kSizeLine;
  int64_t chunk_remaining_ = 0;
  std::string line_;
  int64_t trailer_bytes_ = 0;
  std::optional<FramingError> error_;
};

}  // namespace strata::server::http
