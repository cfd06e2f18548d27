// What the engine gives back for one prompt, read-only: the package's RequestOutput wraps it
// in vLLM's shapes (logprobs as {token_id: Logprob} per position).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "strata/engine/batch_generate.h"
#include "strata/python/bindings.h"

namespace py = pybind11;

namespace strata::python {

void bind_outputs(py::module_& m) {
  py::class_<TokenLogprob>(m, "TokenLogprob")
      .def_readonly("token_id", &TokenLogprob::token_id)
      .def_readonly("logprob", &TokenLogprob::logprob);
  py::class_<SampleResult>(m, "SampleResult")
      .def_readonly("token_id", &SampleResult::token_id)
      .def_readonly("logprob", &SampleResult::logprob)
      .def_readonly("top", &SampleResult::top);
  py::class_<PromptLogprob>(m, "PromptLogprob")
      .def_readonly("token_id", &PromptLogprob::token_id)
      .def_readonly("logprob", &PromptLogprob::logprob)
      .def_readonly("rank", &PromptLogprob::rank)
      .def_readonly("top", &PromptLogprob::top);
  py::class_<ChoiceOutput>(m, "ChoiceOutput")
      .def_readonly("text", &ChoiceOutput::text)
      .def_readonly("token_ids", &ChoiceOutput::token_ids)
      .def_readonly("logprobs", &ChoiceOutput::logprobs)
      .def_property_readonly("finish_reason",
                             [](const ChoiceOutput& c) -> std::optional<std::string> {
                               if (c.finish_reason == FinishReason::kNone) return std::nullopt;
                               return finish_reason_name(c.finish_reason);
                             })
      .def_readonly("stop_reason", &ChoiceOutput::stop_reason);
  py::class_<RequestOutput>(m, "RequestOutput")
      .def_readonly("choices", &RequestOutput::choices)
      .def_readonly("prompt_logprobs", &RequestOutput::prompt_logprobs)
      .def_readonly("pooled", &RequestOutput::pooled)
      .def_readonly("num_prompt_tokens", &RequestOutput::num_prompt_tokens)
      .def_readonly("num_cached_tokens", &RequestOutput::num_cached_tokens);
}

}  // namespace strata::python
