// One HTTP/1.x request as read off a connection: method, path, headers (names lower-cased,
// values without surrounding blanks), the whole decoded body, and whether the client keeps
// the connection open for another request.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::server::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;
  std::string target;       // as sent: the path and any query
  std::string path;         // the target up to '?'
  int version_minor = 1;    // HTTP/1.0 or HTTP/1.1
  HeaderList headers;
  std::string body;
  bool keep_alive = true;   // HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with keep-alive

  // The first value of a header (name in lower case), or nullptr.
  const std::string* header(std::string_view name) const {
    for (const auto& [key, value] : headers)
      if (key == name) return &value;
    return nullptr;
  }
};

// Why bytes are not a request: the status to answer with (400, 413, 431, 501, 505) and a
// message for the client. The connection is closed after the answer.
struct FramingError {
  int status = 400;
  std::string message;
};

// An answer with a whole body; the event loop writes these itself (errors, /health).
struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  HeaderList headers;  // extra, e.g. Allow
  bool omit_body = false;  // HEAD, 304: the headers of the whole answer (its Content-Length), no body bytes
};

}  // namespace strata::server::http
