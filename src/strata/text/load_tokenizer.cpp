// Path resolution for tokenizers: a tokenizer.json, a model folder holding one, or a .gguf
// whose tokenizer.ggml.* metadata describes the vocabulary.
#include "strata/text/load_tokenizer.h"

#include <filesystem>

#include "strata/core/error.h"
#include "strata/text/gguf_vocab.h"

namespace strata::text {

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p = path;
  if (!fs::exists(p)) fail("tokenizer path {} does not exist", path);
  if (fs::is_directory(p)) {
    if (fs::is_regular_file(p / "tokenizer.json")) return Tokenizer::from_file((p / "tokenizer.json").string());
    fail("folder {} has no tokenizer.json (pass a tokenizer.json or a model folder holding one)", path);
  }
  if (p.extension() == ".json") return Tokenizer::from_file(path);
  if (p.extension() == ".gguf") return Tokenizer::from_vocab(vocab_spec_from_gguf(GgufFile(path)));
  fail("cannot load a tokenizer from {}: pass a tokenizer.json, a model folder holding one, or a .gguf",
       path);
}

}  // namespace strata::text
