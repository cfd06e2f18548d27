// Jinja fuzz target: parses the input as a template and renders it against a fixed chat
// context, with tighter render limits so one input stays fast. Only strata::Error (syntax
// and runtime errors) may come out; anything else escaping is a finding.
#include <cstdint>
#include <string>

#include "strata/core/error.h"
#include "strata/text/jinja/template.h"

namespace {

using nlohmann::ordered_json;

const ordered_json& context() {
  static const ordered_json ctx = ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "Hi <b>there</b> \u00e9\u65e5 \ud83d\ude00"},
      {"role": "assistant", "content": "", "reasoning_content": "think",
       "tool_calls": [{"type": "function", "function": {"name": "get", "arguments": {"x": 1, "y": [1.5, null, true]}}}]},
      {"role": "tool", "content": "{\"ok\": true}"},
      {"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "get", "description": "d",
               "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}}],
    "documents": null, "add_generation_prompt": true, "enable_thinking": false,
    "bos_token": "<s>", "eos_token": "</s>", "n": 3, "f": -2.5, "big": 9223372036854775807
  })");
  return ctx;
}

const strata::jinja::RenderOptions& options() {
  static const strata::jinja::RenderOptions opts = [] {
    strata::jinja::RenderOptions o;
    o.limits = {.max_output_bytes = size_t{1} << 20, .max_loop_iterations = 100'000, .max_macro_depth = 50};
    // render_chat's strftime_now, with a fixed clock so runs reproduce.
    o.functions["strftime_now"] = [](const strata::jinja::CallArgs&) { return strata::jinja::Value("26 Jul 2024"); };
    return o;
  }();
  return opts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  try {
    const auto tmpl = strata::jinja::Template::parse(source);
    tmpl.render(context(), options());
  } catch (const strata::Error&) {
  }
  return 0;
}
