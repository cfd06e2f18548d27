// The --api-key check: "Authorization: Bearer <key>", compared in time independent of
// where the strings differ, so response timing does not reveal the key.
#pragma once

#include <string_view>

namespace strata::server {

bool constant_time_equals(std::string_view a, std::string_view b);

// True when `authorization` (the header value, possibly empty) carries `api_key`.
bool authorized(std::string_view authorization, std::string_view api_key);

}  // namespace strata::server
