// The routes under /v1/responses/{id} that read the ResponseStore: GET (the response object
// as create answered it), DELETE (OpenAI's deletion object), GET .../input_items (a page of
// the request's input items) and POST .../cancel (only background responses can be
// cancelled, and none are run). An id the store does not hold is a 404.
#pragma once

#include <string_view>

#include "strata/server/http_reply.h"
#include "strata/server/response_store.h"

namespace strata::server {

// `path_rest`: the request path after "/v1/responses/"; `target`: the whole target, for its query.
HttpReply get_stored_response(const ResponseStore& store, std::string_view path_rest, std::string_view target);
HttpReply delete_stored_response(ResponseStore& store, std::string_view path_rest, std::string_view target);
HttpReply cancel_stored_response(const ResponseStore& store, std::string_view path_rest, std::string_view target);

}  // namespace strata::server
