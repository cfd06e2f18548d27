// OfflineEngine for Python: its options field for field (the package's LLM maps vLLM's engine
// arguments onto them), and generate() and close() with the GIL released while the engine works. Ctrl-C
// reaches the waiting thread through PyErr_CheckSignals, which cancels the batch.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/engine/speculative_config.h"
#include "strata/python/bindings.h"
#include "strata/python/offline_engine.h"

namespace py = pybind11;

namespace strata::python {
namespace {

std::vector<RequestOutput> generate(OfflineEngine& engine, std::vector<GenerationRequest> requests,
                                    const std::vector<std::optional<LoraRequest>>& loras) {
  bool interrupted = false;
  std::vector<RequestOutput> outputs;
  {
    py::gil_scoped_release release;
    const auto check_signals = [&interrupted] {
      py::gil_scoped_acquire acquire;
      interrupted = PyErr_CheckSignals() != 0;
      return interrupted;
    };
    try {
      outputs = engine.generate(std::move(requests), loras, {.interrupted = check_signals});
    } catch (const Error&) {
      if (!interrupted) throw;
    }
  }
  if (interrupted) throw py::error_already_set();  // the KeyboardInterrupt PyErr_CheckSignals raised
  return outputs;
}

// The request arrives as JSON text: the package serialises it with json.dumps, which keeps
// key order as the template expects. The vision tower runs here, without the GIL.
ChatPrompt encode_chat(const OfflineEngine& engine, const std::string& body_json, const std::string& chat_template,
                       bool continue_final_message) {
  const auto body = nlohmann::ordered_json::parse(body_json);
  py::gil_scoped_release release;
  return engine.encode_chat(body, {.chat_template = chat_template, .continue_final_message = continue_final_message});
}

void bind_options(py::module_& m) {
  py::class_<cli::ModelFlags>(m, "ModelFlags")
      .def(py::init<>())
      .def_readwrite("model", &cli::ModelFlags::model)
      .def_readwrite("revision", &cli::ModelFlags::revision)
      .def_readwrite("load_format", &cli::ModelFlags::load_format)
      .def_readwrite("quantization", &cli::ModelFlags::quantization)
      .def_readwrite("device", &cli::ModelFlags::device)
      .def_readwrite("threads", &cli::ModelFlags::threads)
      .def_readwrite("num_kv_blocks", &cli::ModelFlags::num_kv_blocks)
      .def_readwrite("gpu_memory_utilization", &cli::ModelFlags::gpu_memory_utilization)
      .def_readwrite("ssm_state_dtype", &cli::ModelFlags::ssm_state_dtype)
      .def_readwrite("kv_cache_dtype", &cli::ModelFlags::kv_cache_dtype)
      .def_readwrite("load_progress", &cli::ModelFlags::load_progress)
      .def_property("runner", [](const cli::ModelFlags& f) { return f.pooling.runner; },
                    [](cli::ModelFlags& f, const std::string& v) { f.pooling.runner = v; })
      .def_property("task", [](const cli::ModelFlags& f) { return f.pooling.task; },
                    [](cli::ModelFlags& f, const std::string& v) { f.pooling.task = v; })
      .def_property("pooler_config", [](const cli::ModelFlags& f) { return f.pooling.pooler_config; },
                    [](cli::ModelFlags& f, const std::string& v) { f.pooling.pooler_config = v; })
      .def_property("tensor_parallel_size", [](const cli::ModelFlags& f) { return f.tensor_parallel.size; },
                    [](cli::ModelFlags& f, int v) { f.tensor_parallel.size = v; })
      .def_property("pipeline_parallel_size", [](const cli::ModelFlags& f) { return f.pipeline_parallel.size; },
                    [](cli::ModelFlags& f, int v) { f.pipeline_parallel.size = v; })
      .def_property("enable_expert_parallel",
                    [](const cli::ModelFlags& f) { return f.tensor_parallel.expert_parallel; },
                    [](cli::ModelFlags& f, bool v) { f.tensor_parallel.expert_parallel = v; })
      .def_property("expert_dispatch",
                    [](const cli::ModelFlags& f) {
                      return f.tensor_parallel.dispatch_tokens ? "all-to-all" : "all-reduce";
                    },
                    [](cli::ModelFlags& f, const std::string& v) {
                      f.tensor_parallel.dispatch_tokens = cli::parse_expert_dispatch(v);
                    });
  py::class_<EngineOptions>(m, "EngineOptions")
      .def(py::init<>())
      .def_readwrite("max_num_batched_tokens", &EngineOptions::max_num_batched_tokens)
      .def_readwrite("max_num_seqs", &EngineOptions::max_num_seqs)
      .def_readwrite("enable_chunked_prefill", &EngineOptions::enable_chunked_prefill)
      .def_readwrite("max_model_len", &EngineOptions::max_model_len)
      .def_readwrite("enable_prefix_caching", &EngineOptions::enable_prefix_caching)
      .def_readwrite("ssm_cache_slots", &EngineOptions::ssm_cache_slots)
      .def_readwrite("ssm_snapshot_interval", &EngineOptions::ssm_snapshot_interval)
      .def_readwrite("swap_space", &EngineOptions::swap_space_gib)
      .def_readwrite("ssm_host_cache_gb", &EngineOptions::ssm_host_cache_gib)
      .def_readwrite("async_scheduling", &EngineOptions::async_scheduling)
      .def("set_speculative_config",
           [](EngineOptions& o, const std::string& json) { o.speculative = parse_speculative_config(json); });
  py::class_<OfflineEngineOptions>(m, "OfflineEngineOptions")
      .def(py::init<>())
      .def_readwrite("model", &OfflineEngineOptions::model)
      .def_readwrite("engine", &OfflineEngineOptions::engine)
      .def_readwrite("tokenizer", &OfflineEngineOptions::tokenizer)
      .def_readwrite("skip_tokenizer_init", &OfflineEngineOptions::skip_tokenizer_init)
      .def_readwrite("rank_program", &OfflineEngineOptions::rank_program)
      .def("enable_lora", [](OfflineEngineOptions& o, int32_t max_loras, int64_t max_lora_rank) {
        o.lora = LoraCapacity{.max_loras = max_loras, .max_lora_rank = max_lora_rank};
      })
      .def_property("max_images_per_prompt", [](const OfflineEngineOptions& o) { return o.images.max_images_per_prompt; },
                    [](OfflineEngineOptions& o, int32_t v) { o.images.max_images_per_prompt = v; })
      .def_property("allowed_local_media_path",
                    [](const OfflineEngineOptions& o) { return o.images.allowed_local_media_path; },
                    [](OfflineEngineOptions& o, const std::string& v) { o.images.allowed_local_media_path = v; });
}

}  // namespace

void bind_engine(py::module_& m) {
  bind_options(m);
  py::class_<OfflineEngine>(m, "OfflineEngine")
      .def(py::init<OfflineEngineOptions>(), py::call_guard<py::gil_scoped_release>())
      .def("generate", &generate, "run every request to its end; outputs in the order given")
      .def("close", &OfflineEngine::close, "stop the engine and the other ranks; free the model",
           py::call_guard<py::gil_scoped_release>())
      .def("encode", &OfflineEngine::encode, py::arg("text"), py::arg("add_special_tokens") = true,
           py::arg("max_tokens") = 0)
      .def("encode_pair_types", &OfflineEngine::encode_pair_types, py::arg("a"), py::arg("b"),
           py::arg("add_special_tokens") = true, py::arg("max_tokens") = 0)
      .def("truncation_max_tokens", &OfflineEngine::truncation_max_tokens, py::arg("truncate_prompt_tokens"))
      .def("decode", &OfflineEngine::decode, py::arg("ids"), py::arg("skip_special_tokens") = true)
      .def("encode_chat", &encode_chat, py::arg("body_json"), py::arg("chat_template"),
           py::arg("continue_final_message"))
      .def_property_readonly("model_path", &OfflineEngine::model_path)
      .def_property_readonly("max_model_len", &OfflineEngine::max_model_len)
      .def_property_readonly("vocab_size", &OfflineEngine::vocab_size)
      .def_property_readonly("task", &OfflineEngine::task)
      .def_property_readonly("num_labels", &OfflineEngine::num_labels)
      .def_property_readonly("eos_token_ids", &OfflineEngine::eos_token_ids);
}

}  // namespace strata::python
