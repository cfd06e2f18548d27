// GGUF fuzz target: writes the input to a scratch file (GgufFile reads only from a path),
// opens it, then goes through what the loaders read from it: every metadata value through
// each typed getter, every tensor's first and last byte, the architecture config
// (gguf_to_hf_config -> ModelConfig) and the tokenizer (vocab_spec_from_gguf -> Tokenizer).
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "strata/core/error.h"
#include "strata/core/model_config.h"
#include "strata/text/gguf_vocab.h"
#include "strata/text/tokenizer.h"
#include "strata/weights/gguf_config.h"
#include "strata/weights/gguf_file.h"

namespace {

// Each getter either returns or throws strata::Error for a type that does not fit.
template <typename Get>
void try_get(Get&& get) {
  try {
    get();
  } catch (const strata::Error&) {
  }
}

void touch_metadata(const strata::GgufFile& file) {
  for (const std::string& key : file.keys()) {
    FUZZ_CHECK(file.find(key) != nullptr, "keys() lists a key find() does not know");
    try_get([&] { return file.get_string(key); });
    try_get([&] { return file.get_int(key); });
    try_get([&] { return file.get_float(key); });
    try_get([&] { return file.get_bool(key); });
    try_get([&] { return file.get_string_array(key); });
    try_get([&] { return file.get_float_array(key); });
    try_get([&] { return file.get_int_array(key); });
  }
}

uint32_t touch_tensors(const strata::GgufFile& file) {
  uint32_t sum = 0;
  for (const strata::GgufTensorInfo& t : file.tensors()) {
    FUZZ_CHECK(file.find_tensor(t.name) == &t, "find_tensor does not find a listed tensor");
    FUZZ_CHECK(t.nbytes >= 0 && t.offset >= 0, "negative tensor size or offset");
    FUZZ_CHECK(file.data_offset() + t.offset + t.nbytes <= file.file_bytes(), "tensor data past the end");
    if (t.nbytes > 0) {
      const auto* bytes = static_cast<const uint8_t*>(t.data);
      sum += bytes[0] + bytes[t.nbytes - 1];  // faults if the range is not mapped
    }
  }
  return sum;
}

void load_config_and_tokenizer(const strata::GgufFile& file) {
  try {
    strata::ModelConfig::from_json(strata::gguf_to_hf_config(file));
  } catch (const strata::Error&) {
  }
  try {
    const auto tokenizer = strata::text::Tokenizer::from_vocab(strata::text::vocab_spec_from_gguf(file));
    const auto ids = tokenizer->encode("Hello world, <|im_start|> \xe6\x97\xa5 123", true);
    tokenizer->decode(ids, false);
  } catch (const strata::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = strata::fuzz::scratch_dir() + "/input.gguf";
  strata::fuzz::write_file(path, data, size);
  try {
    const strata::GgufFile file(path);
    touch_metadata(file);
    volatile uint32_t sink = touch_tensors(file);
    (void)sink;
    load_config_and_tokenizer(file);
  } catch (const strata::Error&) {
  }
  return 0;
}
