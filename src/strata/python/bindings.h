// The parts of the module strata._engine, one file each; module.cpp calls them in order.
#pragma once

#include <pybind11/pybind11.h>

namespace strata::python {

void bind_requests(pybind11::module_& m);  // GenerationRequest and the engine's SamplingParams
void bind_outputs(pybind11::module_& m);   // RequestOutput, ChoiceOutput, logprobs
void bind_engine(pybind11::module_& m);    // OfflineEngine and its options

}  // namespace strata::python
