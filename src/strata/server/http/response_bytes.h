// The bytes of answers on the wire: the status line and headers, whole bodies, the chunked
// framing of event streams, and the OpenAI error body of every refusal the HTTP layer makes.
#pragma once

#include <string>
#include <string_view>

#include "strata/server/api_error.h"
#include "strata/server/http/http_request.h"

namespace strata::server::http {

const char* reason_phrase(int status);

// A whole answer with Content-Length; "Connection: close" unless keep_alive.
std::string response_bytes(const HttpResponse& response, bool keep_alive);
// The head of a streamed answer: chunked when `chunked` (HTTP/1.1), else delimited by the
// connection's close; `headers` are added as they are.
std::string stream_head(int status, std::string_view content_type, bool chunked, bool keep_alive,
                        const HeaderList& headers = {});
// One chunk of a chunked body (never empty: an empty chunk would end the body).
std::string chunk_bytes(std::string_view data);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";
inline constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// {"error": {...}} (or Anthropic's shape) with the error's status.
HttpResponse error_response(const ApiError& error, ErrorShape shape = ErrorShape::kOpenAi);
// The answer to bytes that are not a request (400, 408, 413, 431, 501, 505).
HttpResponse framing_error_response(const FramingError& error);

}  // namespace strata::server::http
