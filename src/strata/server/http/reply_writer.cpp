#include "strata/server/http/reply_writer.h"

#include "strata/server/http/response_bytes.h"

namespace strata::server::http {

void write_reply(HttpReply reply, Exchange& exchange) {
  const HttpRequest& request = exchange.request();
  if (!reply.events) {
    const HttpResponse response{.status = reply.status, .content_type = reply.content_type,
                                .body = std::move(reply.body), .headers = std::move(reply.headers)};
    exchange.send(response_bytes(response, request.keep_alive));
    return exchange.finish(request.keep_alive);
  }
  const bool chunked = request.version_minor >= 1;
  const bool keep_alive = request.keep_alive && chunked;
  const std::shared_ptr<EventSource> events = std::move(reply.events);
  if (!exchange.send(stream_head(reply.status, "text/event-stream", chunked, keep_alive, reply.headers))) return;
  std::string out;
  // next() returns within a short wait even while the request is queued or prefilling, so a
  // client that leaves is noticed here before any token exists.
  while (!exchange.client().gone()) {
    out.clear();
    bool more = false;
    try {
      more = events->next(out);
    } catch (const std::exception&) {
      return;  // the connection closes without the last chunk: the client sees a cut stream
    }
    if (!out.empty() && !exchange.send(chunked ? chunk_bytes(out) : out)) return;
    if (!more) {
      if (chunked) exchange.send(kLastChunk);
      return exchange.finish(keep_alive);
    }
  }
}

}  // namespace strata::server::http
