// write_safetensors: host tensors to a `.safetensors` file in the standard layout (8-byte
// little-endian header length, JSON header padded with spaces to 8-byte alignment, tensor
// bytes in the order given). Used by `strata logits --out` and to build test fixtures.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "strata/core/tensor.h"

namespace strata {

// tensors: (name, contiguous host tensor of F32/F16/BF16/I32/I64/I8/U8) pairs, names
// unique. Writes `path` whole or not at all (through a temporary file renamed into place);
// throws Error naming the path or tensor on bad input or an I/O failure.
void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace strata
