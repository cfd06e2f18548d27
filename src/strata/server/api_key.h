// The --api-key check: "Authorization: Bearer <key>" or "x-api-key: <key>" (Anthropic's
// clients), compared in time independent of where the strings differ, so response timing
// does not reveal the key.
#pragma once

#include <string_view>

namespace strata::server {

bool constant_time_equals(std::string_view a, std::string_view b);

// True when `authorization` (the header value, possibly empty) carries `api_key`.
bool authorized(std::string_view authorization, std::string_view api_key);
// True when either header (each possibly empty) carries it.
bool authorized(std::string_view authorization, std::string_view x_api_key, std::string_view api_key);

}  // namespace strata::server
