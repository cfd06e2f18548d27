// Helpers of the LoRA tests.
#pragma once

#include <string>

namespace strata::test {

// A folder holding the base fixture `base` (hf/<base>) with config dtype float32: transformers
// + peft computed the LoRA references with the rotary inv_freq in f32, where the base
// fixtures' models held it in bf16 (whose rounding Strata reproduces for bf16 configs), a 0.3
// difference in logits once the adapters amplify it.
std::string f32_config_copy(const std::string& base);

}  // namespace strata::test
