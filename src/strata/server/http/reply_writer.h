// Writes a handler's HttpReply through its exchange: a whole body with Content-Length, or
// server-sent events as a chunked body (close-delimited for HTTP/1.0 clients) pulled from
// the EventSource until it ends or the client is gone. The EventSource is dropped on
// return, which cancels whatever its engine requests still had to do.
#pragma once

#include "strata/server/http/exchange.h"
#include "strata/server/http_reply.h"

namespace strata::server::http {

void write_reply(HttpReply reply, Exchange& exchange);

}  // namespace strata::server::http
