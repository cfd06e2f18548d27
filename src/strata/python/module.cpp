// strata._engine: the C++ half of the Python package `strata` (python/strata/ holds the
// vLLM-style API over it). strata::Error becomes strata.StrataError, a ValueError carrying
// the engine's message, as vLLM raises ValueError for requests it refuses.
#include <pybind11/pybind11.h>

#include "strata/core/error.h"
#include "strata/core/logging.h"
#include "strata/python/bindings.h"

PYBIND11_MODULE(_engine, m) {
  m.doc() = "Strata's engine, in-process: see the package strata (LLM, SamplingParams)";
  strata::log_to_stderr();
  pybind11::register_exception<strata::Error>(m, "StrataError", PyExc_ValueError);
  strata::python::bind_requests(m);
  strata::python::bind_outputs(m);
  strata::python::bind_engine(m);
}
