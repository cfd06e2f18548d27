#include "strata/weights/safetensors_writer.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "strata/core/error.h"
#include "strata/weights/safetensors.h"

namespace strata {

namespace {

void check_tensor(const std::string& path, const std::string& name, const Tensor& tensor) {
  if (name.empty() || name == "__metadata__")
    fail("{}: cannot write a tensor named '{}'", path, name);
  if (!tensor.device().is_cpu())
    fail("{}: tensor '{}' is on a GPU; copy it to the host before writing", path, name);
  if (tensor.data() == nullptr && tensor.nbytes() > 0)
    fail("{}: tensor '{}' has no data", path, name);
  if (is_quantized(tensor.dtype()))
    fail("{}: tensor '{}' has dtype {}, which safetensors cannot hold (F32, F16, BF16, I32, I64, "
         "I8, U8): dequantize it first",
         path, name, dtype_name(tensor.dtype()));
}

// The JSON header, padded with spaces to a multiple of 8 bytes.
std::string build_header(const std::string& path,
                         const std::vector<std::pair<std::string, Tensor>>& tensors,
                         const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> seen;
  int64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    check_tensor(path, name, tensor);
    if (!seen.insert(name).second) fail("{}: tensor '{}' is given twice", path, name);
    std::vector<int64_t> shape(tensor.shape().dims.begin(),
                               tensor.shape().dims.begin() + tensor.rank());
    header[name] = {{"dtype", safetensors_dtype_name(tensor.dtype())},
                    {"shape", shape},
                    {"data_offsets", {offset, offset + tensor.nbytes()}}};
    offset += tensor.nbytes();
  }
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');
  return text;
}

void write_all(std::FILE* out, const std::string& path, const void* data, size_t bytes) {
  if (bytes > 0 && std::fwrite(data, 1, bytes, out) != bytes)
    fail("cannot write {}: {}", path, std::strerror(errno));
}

}  // namespace

void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  const std::string header = build_header(path, tensors, metadata);
  const std::string temp_path = path + ".tmp";
  std::FILE* out = std::fopen(temp_path.c_str(), "wb");
  if (out == nullptr) fail("cannot create {}: {}", temp_path, std::strerror(errno));
  try {
    uint8_t length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(header.size() >> (8 * i));
    write_all(out, temp_path, length, sizeof(length));
    write_all(out, temp_path, header.data(), header.size());
    for (const auto& [name, tensor] : tensors)
      write_all(out, temp_path, tensor.data(), static_cast<size_t>(tensor.nbytes()));
    if (std::fclose(out) != 0) {
      out = nullptr;
      fail("cannot write {}: {}", temp_path, std::strerror(errno));
    }
    out = nullptr;
    if (std::rename(temp_path.c_str(), path.c_str()) != 0)
      fail("cannot rename {} to {}: {}", temp_path, path, std::strerror(errno));
  } catch (...) {
    if (out != nullptr) std::fclose(out);
    std::remove(temp_path.c_str());
    throw;
  }
}

}  // namespace strata
