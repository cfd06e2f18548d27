// Chat rendering: builds the transformers context and renders with its Jinja settings.
#include "strata/text/chat_template.h"

#include <ctime>

#include "strata/core/error.h"
#include "strata/text/jinja/template.h"

namespace strata {
namespace {

jinja::Value strftime_now(const jinja::CallArgs& args) {
  const jinja::Value* format = args.get(0, "format");
  if (!format || !format->is_string()) throw jinja::RuntimeError("strftime_now needs a format string");
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[256];
  const size_t n = std::strftime(buf, sizeof(buf), format->as_string().c_str(), &local);
  return jinja::Value(std::string(buf, n));
}

}  // namespace

std::string render_chat(const std::string& chat_template, const ChatRenderRequest& request) {
  if (!request.messages.is_array()) fail("chat messages must be a JSON array");
  if (!request.extra.is_object() && !request.extra.is_null()) {
    fail("chat template extra variables must be a JSON object");
  }
  // The extra variables first, the standard ones only where the extras leave them out (extras
  // win): setting each extra on an ordered_json would search its keys every time.
  nlohmann::ordered_json context = request.extra.is_object() ? request.extra : nlohmann::ordered_json::object();
  const auto set_unless_given = [&context](const char* key, nlohmann::ordered_json value) {
    if (!context.contains(key)) context[key] = std::move(value);
  };
  set_unless_given("messages", request.messages);
  set_unless_given("tools", request.tools);
  set_unless_given("documents", nullptr);
  set_unless_given("add_generation_prompt", request.add_generation_prompt);
  set_unless_given("bos_token", request.bos_token);
  set_unless_given("eos_token", request.eos_token);
  jinja::RenderOptions options;
  options.functions["strftime_now"] = strftime_now;
  return jinja::Template::parse(chat_template).render(context, options);
}

}  // namespace strata
