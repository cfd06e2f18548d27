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

}  // namespace strata::server
