// Reads a model's weight files once before loading, so the page cache holds them when the
// mmap'd tensors are first touched, and reports how far it got: the "loading weights x%"
// that `strata serve` shows (a bar on a terminal, percentage lines otherwise).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace strata::server {

// The .gguf itself, or the model*.safetensors files of a model folder (none for other paths).
std::vector<std::string> weight_files(const std::string& model_path);

// Calls on_progress(bytes_done, bytes_total) as it reads; unreadable files are skipped
// (the loader reports them properly).
void prefetch_files(const std::vector<std::string>& files,
                    const std::function<void(int64_t, int64_t)>& on_progress);

}  // namespace strata::server
