#include "strata/server/api_error.h"

namespace strata::server {

ApiError bad_request(std::string message, std::string param) {
  return ApiError(400, std::move(message), "invalid_request_error", std::move(param));
}

nlohmann::ordered_json error_body(const ApiError& error) {
  nlohmann::ordered_json body;
  body["error"]["message"] = error.what();
  body["error"]["type"] = error.type;
  body["error"]["param"] = error.param.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(error.param);
  body["error"]["code"] = error.code.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(error.code);
  return body;
}

nlohmann::ordered_json anthropic_error_body(const ApiError& error) {
  const char* type = "api_error";
  switch (error.status) {
    case 400: case 405: case 408: case 422: type = "invalid_request_error"; break;
    case 401: type = "authentication_error"; break;
    case 403: type = "permission_error"; break;
    case 404: type = "not_found_error"; break;
    case 413: type = "request_too_large"; break;
    case 429: type = "rate_limit_error"; break;
    case 503: type = "overloaded_error"; break;
    default: break;
  }
  nlohmann::ordered_json body;
  body["type"] = "error";
  body["error"]["type"] = type;
  body["error"]["message"] = error.what();
  return body;
}

nlohmann::ordered_json error_body(const ApiError& error, ErrorShape shape) {
  return shape == ErrorShape::kAnthropic ? anthropic_error_body(error) : error_body(error);
}

}  // namespace strata::server
