// One place that turns a user-given path into a Tokenizer: a tokenizer.json, or a model
// folder that holds one. Other formats are rejected with a message saying what is accepted.
#pragma once

#include <memory>
#include <string>

#include "strata/text/tokenizer.h"

namespace strata::text {

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);

}  // namespace strata::text
