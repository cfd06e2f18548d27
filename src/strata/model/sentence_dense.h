// sentence-transformers' Dense module (a folder such as 2_Dense/: config.json with in_features,
// out_features, bias and activation_function, and the weights in model.safetensors as
// linear.weight / linear.bias), read into a PoolerDense the engine applies after pooling.
#pragma once

#include <string>

#include "strata/core/model_config.h"

namespace strata {

// Throws an Error naming the file for a missing or unsupported part (weights only as
// pytorch_model.bin, an activation other than Identity, Tanh, ReLU, Sigmoid or GELU).
PoolerDense load_sentence_dense(const std::string& dir);

}  // namespace strata
