#include "strata/server/http/response_bytes.h"

#include <fmt/format.h>

#include "strata/core/error.h"

namespace strata::server::http {

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Internal Server Error";
  }
}

std::string response_bytes(const HttpResponse& response, bool keep_alive) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n", response.status,
                                reason_phrase(response.status), response.content_type, response.body.size());
  for (const auto& [name, value] : response.headers) out += fmt::format("{}: {}\r\n", name, value);
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (!response.omit_body) out += response.body;
  return out;
}

std::string stream_head(int status, std::string_view content_type, bool chunked, bool keep_alive,
                        const HeaderList& headers) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nCache-Control: no-cache\r\n", status,
                                reason_phrase(status), content_type);
  for (const auto& [name, value] : headers) out += fmt::format("{}: {}\r\n", name, value);
  out += fmt::format("{}Connection: {}\r\n\r\n", chunked ? "Transfer-Encoding: chunked\r\n" : "",
                     keep_alive ? "keep-alive" : "close");
  return out;
}

std::string chunk_bytes(std::string_view data) {
  STRATA_CHECK(!data.empty());
  return fmt::format("{:x}\r\n{}\r\n", data.size(), data);
}

HttpResponse error_response(const ApiError& error, ErrorShape shape) {
  // Messages may quote client bytes: invalid UTF-8 is replaced, never thrown on.
  const std::string body = error_body(error, shape).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return HttpResponse{.status = error.status, .body = body};
}

HttpResponse framing_error_response(const FramingError& error) {
  const char* code = error.status == 413 ? "request_too_large" : error.status == 408 ? "request_timeout" : "";
  return error_response(ApiError(error.status, error.message, "invalid_request_error", "", code));
}

}  // namespace strata::server::http
