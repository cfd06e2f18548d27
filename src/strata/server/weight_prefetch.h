// Reads a model's weight files once before loading, so the page cache holds them when the
// mmap'd tensors are first touched, and reports how far it got ("reading weight files" in
// `strata serve`'s start-up).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/core/progress.h"

namespace strata::server {

// The .gguf itself, or the model*.safetensors files of a model folder (none for other paths).
std::vector<std::string> weight_files(const std::string& model_path);

// Starts, updates and finishes `progress` as it reads; unreadable files are skipped (the
// loader reports them properly).
void prefetch_files(const std::vector<std::string>& files, ProgressReporter& progress);

}  // namespace strata::server
