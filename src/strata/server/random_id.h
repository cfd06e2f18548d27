// Random identifiers for responses ("chatcmpl-...", "cmpl-...", "call_..."): unique enough
// that clients can tell responses apart, not secrets.
#pragma once

#include <string>

namespace strata::server {

std::string random_alnum(int length);  // [A-Za-z0-9]{length}

}  // namespace strata::server
