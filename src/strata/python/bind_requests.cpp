// What one prompt asks of the engine: GenerationRequest and its SamplingParams, field for
// field (the package's SamplingParams fills them from vLLM's names).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "strata/core/error.h"
#include "strata/engine/gbnf_compiler.h"
#include "strata/engine/regex_compiler.h"
#include "strata/engine/request.h"
#include "strata/python/bindings.h"
#include "strata/python/offline_engine.h"

namespace py = pybind11;

namespace strata::python {

void bind_requests(py::module_& m) {
  py::class_<LoraRequest>(m, "LoraRequest")
      .def(py::init([](std::string name, int64_t id, std::string path) {
             return LoraRequest{.name = std::move(name), .id = id, .path = std::move(path)};
           }),
           py::arg("name"), py::arg("id"), py::arg("path"));
  py::class_<ChatPrompt>(m, "ChatPrompt")
      .def_readonly("ids", &ChatPrompt::ids)
      .def_property_readonly("num_images", [](const ChatPrompt& p) { return p.images ? p.images->images().size() : 0; });
  py::class_<SamplingParams>(m, "EngineSamplingParams")
      .def(py::init<>())
      .def_readwrite("temperature", &SamplingParams::temperature)
      .def_readwrite("top_k", &SamplingParams::top_k)
      .def_readwrite("top_p", &SamplingParams::top_p)
      .def_readwrite("min_p", &SamplingParams::min_p)
      .def_readwrite("repetition_penalty", &SamplingParams::repetition_penalty)
      .def_readwrite("presence_penalty", &SamplingParams::presence_penalty)
      .def_readwrite("frequency_penalty", &SamplingParams::frequency_penalty)
      .def_readwrite("seed", &SamplingParams::seed)
      .def_readwrite("logprobs", &SamplingParams::logprobs)
      .def("set_logit_bias", [](SamplingParams& p, const std::vector<std::pair<int32_t, float>>& bias) {
        p.logit_bias.clear();
        for (const auto& [token_id, value] : bias) p.logit_bias.push_back({.token_id = token_id, .bias = value});
      });
  py::class_<GenerationRequest>(m, "GenerationRequest")
      .def(py::init<>())
      .def_readwrite("prompt_ids", &GenerationRequest::prompt_ids)
      .def_readwrite("sampling", &GenerationRequest::sampling)
      .def_readwrite("max_tokens", &GenerationRequest::max_tokens)
      .def_readwrite("stop", &GenerationRequest::stop)
      .def_readwrite("stop_token_ids", &GenerationRequest::stop_token_ids)
      .def_readwrite("ignore_eos", &GenerationRequest::ignore_eos)
      .def_readwrite("skip_special_tokens", &GenerationRequest::skip_special_tokens)
      .def_readwrite("n", &GenerationRequest::n)
      .def_readwrite("prompt_logprobs", &GenerationRequest::prompt_logprobs)
      .def_readwrite("json_object", &GenerationRequest::json_object)
      .def("set_images", [](GenerationRequest& r, const ChatPrompt& p) { r.images = p.images; })
      // Structured outputs (the package's StructuredOutputsParams): each compiles its
      // constraint now, so a bad one raises StrataError before anything runs.
      .def("set_regex", [](GenerationRequest& r, const std::string& pattern) { r.grammar = compile_regex(pattern); })
      .def("set_choice", [](GenerationRequest& r, const std::vector<std::string>& c) { r.grammar = compile_choice(c); })
      .def("set_grammar", [](GenerationRequest& r, const std::string& gbnf) { r.grammar = compile_gbnf(gbnf); })
      .def("set_json_schema", [](GenerationRequest& r, const std::string& schema) {
        const auto parsed = nlohmann::ordered_json::parse(schema, nullptr, /*allow_exceptions=*/false);
        if (parsed.is_discarded()) fail("structured_outputs json: the schema is not JSON text");
        r.json_schema = CompiledSchema::compile(parsed);
      })
      .def("set_pooling", [](GenerationRequest& r, int32_t dimensions) {
        r.max_tokens = 0;
        r.pooling = PoolingRequest{.dimensions = dimensions};
      }, py::arg("dimensions") = 0)
      // A pair input's segments (encode_pair_types), which BERT cross-encoders read.
      .def("set_token_type_ids", [](GenerationRequest& r, std::vector<int32_t> type_ids) {
        r.token_type_ids = std::make_shared<const std::vector<int32_t>>(std::move(type_ids));
      });
}

}  // namespace strata::python
