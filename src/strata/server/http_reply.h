// What an endpoint handler returns, independent of the HTTP library: a status and a JSON
// body, or an event stream the HTTP layer drains into server-sent events. Dropping the
// EventSource (the client left, or the server stops) cancels its engine requests.
#pragma once

#include <memory>
#include <string>

namespace strata::server {

class EventSource {
 public:
  virtual ~EventSource() = default;
  // Appends the next events (possibly none, after a short wait) to `out`; false once the
  // stream is complete and `out` holds its last events.
  virtual bool next(std::string& out) = 0;
};

struct HttpReply {
  int status = 200;
  std::string body;                     // JSON, when events is null
  std::shared_ptr<EventSource> events;  // text/event-stream
};

}  // namespace strata::server
