#include "strata/server/api_key.h"

#include <algorithm>

namespace strata::server {

bool constant_time_equals(std::string_view a, std::string_view b) {
  const size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

bool authorized(std::string_view authorization, std::string_view api_key) {
  constexpr std::string_view kBearer = "Bearer ";
  const bool bearer = authorization.size() >= kBearer.size() && authorization.substr(0, kBearer.size()) == kBearer;
  const std::string_view given = bearer ? authorization.substr(kBearer.size()) : std::string_view();
  return constant_time_equals(given, api_key) && bearer;
}

bool authorized(std::string_view authorization, std::string_view x_api_key, std::string_view api_key) {
  const bool by_bearer = authorized(authorization, api_key);
  const bool by_x_api_key = !x_api_key.empty() && constant_time_equals(x_api_key, api_key);
  return by_bearer || by_x_api_key;
}

}  // namespace strata::server
