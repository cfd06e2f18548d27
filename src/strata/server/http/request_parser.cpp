#include "strata/server/http/request_parser.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

namespace strata::server::http {
namespace {

constexpr size_t kMaxContentLengthDigits = 18;

bool is_token_char(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_token_char); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The comma-separated elements of every value of header `name`, trimmed and lower-cased.
std::vector<std::string> header_list(const HttpRequest& request, std::string_view name) {
  std::vector<std::string> items;
  for (const auto& [key, value] : request.headers) {
    if (key != name) continue;
    std::string_view rest = value;
    while (true) {
      const size_t comma = rest.find(',');
      items.push_back(lower(trim(rest.substr(0, comma))));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return items;
}

FramingError bad(std::string message) { return FramingError{.status = 400, .message = std::move(message)}; }

std::optional<FramingError> parse_request_line(std::string_view line, HttpRequest& request) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return bad("the request line is not 'METHOD TARGET HTTP/1.1'");
  const std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method) || target.empty() ||
      std::any_of(target.begin(), target.end(), [](char c) { return c <= ' ' || c == 0x7f; }))
    return bad("the request line is not 'METHOD TARGET HTTP/1.1'");
  if (version == "HTTP/1.1" || version == "HTTP/1.0") {
    request.version_minor = version.back() - '0';
  } else if (version.starts_with("HTTP/")) {
    return FramingError{.status = 505, .message = fmt::format("{} is not supported; use HTTP/1.1", version.substr(0, 16))};
  } else {
    return bad("the request line is not 'METHOD TARGET HTTP/1.1'");
  }
  request.method = method;
  request.target = target;
  request.path = target.substr(0, target.find('?'));
  return std::nullopt;
}

std::optional<FramingError> parse_header_line(std::string_view line, HttpRequest& request) {
  if (line.front() == ' ' || line.front() == '\t') return bad("folded header lines are not accepted");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
    return bad(fmt::format("bad header line '{}'", line.substr(0, 40)));
  const std::string_view value = trim(line.substr(colon + 1));
  if (std::any_of(value.begin(), value.end(), [](char c) { return (c < ' ' && c != '\t') || c == 0x7f; }))
    return bad(fmt::format("header '{}' holds a control character", line.substr(0, colon)));
  request.headers.emplace_back(lower(line.substr(0, colon)), std::string(value));
  return std::nullopt;
}

}  // namespace

void RequestParser::fail(FramingError error) {
  state_ = State::kFailed;
  error_ = std::move(error);
}

size_t RequestParser::feed(std::string_view data) {
  size_t used = 0;
  if (state_ == State::kIdle) {
    while (used < data.size() && (data[used] == '\r' || data[used] == '\n')) ++used;
    if (used == data.size()) return used;
    state_ = State::kHead;
  }
  if (state_ == State::kHead) used += feed_head(data.substr(used));
  if (state_ == State::kBody) used += feed_body(data.substr(used));
  return used;
}

size_t RequestParser::feed_head(std::string_view data) {
  const size_t before = head_.size();
  const size_t room = static_cast<size_t>(limits_.max_header_bytes) + 1 - std::min(before, static_cast<size_t>(limits_.max_header_bytes));
  head_.append(data.substr(0, std::min(room, data.size())));
  for (; scanned_ < head_.size(); ++scanned_) {
    if (head_[scanned_] != '\n') continue;
    const size_t length = scanned_ - line_start_;
    const bool blank = length == 0 || (length == 1 && head_[line_start_] == '\r');
    line_start_ = scanned_ + 1;
    if (!blank) continue;
    const size_t end = scanned_ + 1;
    if (end > static_cast<size_t>(limits_.max_header_bytes)) break;
    head_.resize(end);
    end_head();
    return end - before;
  }
  if (head_.size() > static_cast<size_t>(limits_.max_header_bytes))
    fail({.status = 431, .message = fmt::format("the request head is over the server's limit of {} bytes",
                                                limits_.max_header_bytes)});
  return head_.size() - before;
}

void RequestParser::end_head() {
  std::string_view rest = head_;
  bool first = true;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the blank line that ends the head
    std::optional<FramingError> error = first ? parse_request_line(line, request_) : parse_header_line(line, request_);
    if (error) return fail(std::move(*error));
    first = false;
  }
  if (std::optional<FramingError> error = read_framing()) return fail(std::move(*error));
  state_ = State::kBody;
  if (!chunked_ && body_remaining_ == 0) state_ = State::kDone;
}

std::optional<FramingError> RequestParser::read_framing() {
  const std::vector<std::string> connection = header_list(request_, "connection");
  const auto has = [&](const char* token) { return std::find(connection.begin(), connection.end(), token) != connection.end(); };
  request_.keep_alive = request_.version_minor == 1 ? !has("close") : has("keep-alive");
  const std::vector<std::string> expect = header_list(request_, "expect");
  expects_continue_ = std::find(expect.begin(), expect.end(), "100-continue") != expect.end();

  const std::vector<std::string> codings = header_list(request_, "transfer-encoding");
  const std::vector<std::string> lengths = header_list(request_, "content-length");
  if (!codings.empty()) {
    if (!lengths.empty()) return bad("a request cannot carry both Content-Length and Transfer-Encoding");
    if (codings.back() != "chunked") return bad("Transfer-Encoding must end in 'chunked'");
    if (codings.size() > 1)
      return FramingError{.status = 501, .message = "only the 'chunked' transfer coding is supported"};
    chunked_.emplace(limits_.max_body_bytes);
    return std::nullopt;
  }
  if (lengths.empty()) return std::nullopt;
  for (const std::string& value : lengths) {
    if (value.empty() || value.size() > kMaxContentLengthDigits ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return bad(fmt::format("Content-Length '{}' is not a byte count", value.substr(0, 24)));
    if (value != lengths.front()) return bad("the request carries Content-Length values that disagree");
  }
  body_remaining_ = std::stoll(lengths.front());
  if (body_remaining_ > limits_.max_body_bytes)
    return FramingError{.status = 413, .message = fmt::format("the request body is over the server's limit of {} bytes",
                                                              limits_.max_body_bytes)};
  // Grown as bytes arrive: a client announcing a large body has to send it to cost memory.
  request_.body.reserve(static_cast<size_t>(std::min<int64_t>(body_remaining_, 64 << 10)));
  return std::nullopt;
}

size_t RequestParser::feed_body(std::string_view data) {
  if (chunked_) {
    const size_t used = chunked_->feed(data, request_.body);
    if (chunked_->error()) fail(*chunked_->error());
    else if (chunked_->done()) state_ = State::kDone;
    return used;
  }
  const size_t n = static_cast<size_t>(std::min<int64_t>(body_remaining_, static_cast<int64_t>(data.size())));
  request_.body.append(data.substr(0, n));
  body_remaining_ -= static_cast<int64_t>(n);
  if (body_remaining_ == 0) state_ = State::kDone;
  return n;
}

HttpRequest RequestParser::take() {
  HttpRequest out = std::move(request_);
  request_ = HttpRequest{};
  state_ = State::kIdle;
  head_.clear();
  scanned_ = line_start_ = 0;
  expects_continue_ = false;
  body_remaining_ = 0;
  chunked_.reset();
  return out;
}

}  // namespace strata::server::http
