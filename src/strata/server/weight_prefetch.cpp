#include "strata/server/weight_prefetch.h"

#include <cstdio>
#include <filesystem>

namespace strata::server {

std::vector<std::string> weight_files(const std::string& model_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_regular_file(model_path, ec)) {
    if (fs::path(model_path).extension() == ".gguf") files.push_back(model_path);
    return files;
  }
  if (!fs::is_directory(model_path, ec)) return files;
  // Hugging Face names weight files model.safetensors / model-0000i-of-0000n.safetensors.
  for (const auto& entry : fs::directory_iterator(model_path, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".safetensors" &&
        entry.path().filename().string().rfind("model", 0) == 0)
      files.push_back(entry.path().string());
  return files;
}

void prefetch_files(const std::vector<std::string>& files, ProgressReporter& progress) {
  int64_t total = 0;
  std::error_code ec;
  for (const std::string& f : files) total += static_cast<int64_t>(std::filesystem::file_size(f, ec));
  int64_t done = 0;
  progress.start(total);
  std::vector<char> buffer(8 << 20);
  for (const std::string& f : files) {
    std::FILE* file = std::fopen(f.c_str(), "rb");
    if (file == nullptr) continue;
    size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), file)) > 0) {
      done += static_cast<int64_t>(n);
      progress.update(std::min(done, total));
    }
    std::fclose(file);
  }
  progress.finish();
}

}  // namespace strata::server
