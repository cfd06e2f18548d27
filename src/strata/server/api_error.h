// ApiError: a request the server refuses, carried as an exception from wherever it is found
// to the HTTP layer, which answers with its status and an OpenAI-style error body
// {"error": {"message", "type", "param", "code"}} (or Anthropic's shape on its routes).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace strata::server {

struct ApiError : std::runtime_error {
  int status;
  std::string type;   // "invalid_request_error", "authentication_error", "server_error", ...
  std::string param;  // the offending field, or empty
  std::string code;   // e.g. "model_not_found", or empty

  ApiError(int status, std::string message, std::string type, std::string param = {}, std::string code = {})
      : std::runtime_error(std::move(message)), status(status), type(std::move(type)),
        param(std::move(param)), code(std::move(code)) {}
};

// 400 invalid_request_error naming `param`.
ApiError bad_request(std::string message, std::string param = {});

// The body for an error: param and code are null when empty.
nlohmann::ordered_json error_body(const ApiError& error);

// The same error in Anthropic's shape, {"type": "error", "error": {"type", "message"}}, its
// type named after the status as Anthropic names them (invalid_request_error, not_found_error...).
nlohmann::ordered_json anthropic_error_body(const ApiError& error);

// Which shape a route answers errors in.
enum class ErrorShape : uint8_t { kOpenAi, kAnthropic };
nlohmann::ordered_json error_body(const ApiError& error, ErrorShape shape);

}  // namespace strata::server
