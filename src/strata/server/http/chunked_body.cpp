#include "strata/server/http/chunked_body.h"

#include <algorithm>

#include <fmt/format.h>

namespace strata::server::http {
namespace {

constexpr size_t kMaxSizeLineBytes = 1024;       // hex digits plus extensions
constexpr int64_t kMaxTrailerBytes = 16 << 10;
constexpr size_t kMaxSizeDigits = 15;            // stays inside int64_t

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void ChunkedBody::fail(int status, std::string message) {
  state_ = State::kFailed;
  error_ = FramingError{.status = status, .message = std::move(message)};
}

bool ChunkedBody::take_line(std::string_view data, size_t& used) {
  const size_t end = data.find('\n', used);
  const size_t stop = end == std::string_view::npos ? data.size() : end;
  line_.append(data.substr(used, stop - used));
  used = end == std::string_view::npos ? data.size() : end + 1;
  if (end == std::string_view::npos) {
    if (state_ == State::kSizeLine && line_.size() > kMaxSizeLineBytes)
      fail(400, "a chunk size line of the chunked body is too long");
    if (state_ == State::kDataEnd && line_.size() > 1)
      fail(400, "a chunk of the chunked body is longer than its size line says");
    if (state_ == State::kTrailer && trailer_bytes_ + static_cast<int64_t>(line_.size()) > kMaxTrailerBytes)
      fail(431, "the trailers of the chunked body are too large");
    return false;
  }
  // Chunked framing is read strictly: every line ends in CRLF.
  if (line_.empty() || line_.back() != '\r') {
    fail(400, "a line of the chunked body does not end in CRLF");
    return false;
  }
  line_.pop_back();
  return true;
}

void ChunkedBody::end_size_line(const std::string& body) {
  size_t digits = 0;
  int64_t size = 0;
  while (digits < line_.size() && hex_value(line_[digits]) >= 0) {
    if (digits == kMaxSizeDigits) return fail(400, "a chunk size of the chunked body is too large");
    size = size * 16 + hex_value(line_[digits++]);
  }
  size_t rest = digits;
  while (rest < line_.size() && (line_[rest] == ' ' || line_[rest] == '\t')) ++rest;
  if (digits == 0 || (rest < line_.size() && line_[rest] != ';'))
    return fail(400, fmt::format("bad chunk size line '{}' in the chunked body", line_.substr(0, 40)));
  if (size > max_body_bytes_ - static_cast<int64_t>(body.size()))
    return fail(413, fmt::format("the request body is over the server's limit of {} bytes", max_body_bytes_));
  chunk_remaining_ = size;
  state_ = size == 0 ? State::kTrailer : State::kData;
}

size_t ChunkedBody::feed(std::string_view data, std::string& body) {
  size_t used = 0;
  while (used < data.size() && state_ != State::kDone && state_ != State::kFailed) {
    switch (state_) {
      case State::kSizeLine:
        if (take_line(data, used)) {
          end_size_line(body);
          line_.clear();
        }
        break;
      case State::kData: {
        const size_t n = static_cast<size_t>(std::min<int64_t>(chunk_remaining_, static_cast<int64_t>(data.size() - used)));
        body.append(data.substr(used, n));
        used += n;
        chunk_remaining_ -= static_cast<int64_t>(n);
        if (chunk_remaining_ == 0) state_ = State::kDataEnd;
        break;
      }
      case State::kDataEnd:
        if (take_line(data, used)) {
          if (!line_.empty()) fail(400, "a chunk of the chunked body is longer than its size line says");
          else state_ = State::kSizeLine;
          line_.clear();
        }
        break;
      case State::kTrailer:
        if (take_line(data, used)) {
          trailer_bytes_ += static_cast<int64_t>(line_.size()) + 2;
          if (line_.empty()) state_ = State::kDone;
          else if (trailer_bytes_ > kMaxTrailerBytes) fail(431, "the trailers of the chunked body are too large");
          line_.clear();
        }
        break;
      case State::kDone:
      case State::kFailed:
        break;
    }
  }
  return used;
}

}  // namespace strata::server::http
