// What the engine benchmarks load: a backend by name (--device cpu|cuda, --threads), the
// model (real or --load-format dummy weights) and an id tokenizer of its vocabulary.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <thread>

#include "strata/core/error.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "strata/weights/fp8.h"

namespace strata {

struct BenchModel {
  std::unique_ptr<Backend> backend;  // declared first: the model's tensors live on it
  LoadedModel loaded;
  std::unique_ptr<text::Tokenizer> tokenizer;
};

struct BenchModelFlags {
  std::string model;  // a config (and weights) folder or a .gguf
  std::string load_format = "auto";
  std::string device = "cpu";
  int threads = 0;  // CPU threads, 0: every core
  std::string quantization = "none";  // fp8: the linears quantized at load (--quantization fp8)

  void add_to(CLI::App& app) {
    app.add_option("--model", model, "model folder or .gguf");
    app.add_option("--load-format", load_format, "auto | dummy (random weights for a config folder)");
    app.add_option("--device", device, "cpu | cuda");
    app.add_option("--threads", threads, "CPU threads (0: every core)");
    app.add_option("--quantization", quantization, "none | fp8 (quantize the linears at load)");
  }
};

// Throws strata::Error when --device cuda finds no GPU.
inline BenchModel load_bench_model(const BenchModelFlags& flags) {
  BenchModel m;
  const int num_threads = flags.threads > 0 ? flags.threads : static_cast<int>(std::thread::hardware_concurrency());
  m.backend = flags.device == "cuda" ? make_cuda_backend(0) : make_cpu_backend(num_threads);
  if (!m.backend) fail("--device {}: no CUDA device", flags.device);
  m.loaded = load_model({.model_path = flags.model,
                         .load_format = parse_load_format(flags.load_format),
                         .quantization = parse_weight_quantization(flags.quantization)},
                        *m.backend);
  m.tokenizer = text::make_id_tokenizer(static_cast<int32_t>(m.loaded.config.vocab_size));
  return m;
}

}  // namespace strata
