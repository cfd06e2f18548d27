#include "strata/weights/safetensors_source.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "strata/core/error.h"

namespace strata {

namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {}", path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::exception& e) {
    fail("{}: not valid JSON ({}): the file is corrupt; download it again", path, e.what());
  }
}

// weight_map: tensor name -> shard file name, checked to be plain names in the same folder.
std::map<std::string, std::string> read_weight_map(const std::string& index_path) {
  const json index = read_json(index_path);
  const auto it = index.is_object() ? index.find("weight_map") : index.end();
  if (it == index.end() || !it->is_object())
    fail("{}: no \"weight_map\" object mapping tensor names to shard files", index_path);
  std::map<std::string, std::string> weight_map;
  for (const auto& [name, shard] : it->items()) {
    if (!shard.is_string())
      fail("{}: weight_map entry '{}' is {}, not a shard file name", index_path, name,
           shard.dump());
    const std::string& file = shard.get_ref<const std::string&>();
    if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos)
      fail("{}: weight_map sends tensor '{}' to '{}', which is not a file name in the same "
           "folder",
           index_path, name, file);
    weight_map[name] = file;
  }
  if (weight_map.empty()) fail("{}: weight_map lists no tensors", index_path);
  return weight_map;
}

}  // namespace

std::unique_ptr<SafetensorsSource> SafetensorsSource::open(const std::string& path) {
  std::unique_ptr<SafetensorsSource> source(new SafetensorsSource());
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const fs::path dir(path);
    if (is_file(dir / kSafetensorsIndexName)) {
      source->open_index((dir / kSafetensorsIndexName).string());
    } else if (is_file(dir / kSafetensorsFileName)) {
      source->open_single((dir / kSafetensorsFileName).string());
    } else {
      fail("{} holds neither {} nor {}: is it a Hugging Face model folder?", path,
           kSafetensorsFileName, kSafetensorsIndexName);
    }
  } else if (ends_with(path, ".json")) {
    source->open_index(path);
  } else {
    source->open_single(path);
  }
  return source;
}

void SafetensorsSource::open_single(const std::string& path) {
  files_.push_back(std::make_unique<SafetensorsFile>(path));
  for (const WeightInfo& info : files_.back()->tensors()) tensors_.emplace(info.name, &info);
  description_ = path;
}

void SafetensorsSource::open_index(const std::string& index_path) {
  const std::map<std::string, std::string> weight_map = read_weight_map(index_path);
  const fs::path dir = fs::path(index_path).parent_path();
  std::map<std::string, const SafetensorsFile*> shards;
  for (const auto& [name, shard] : weight_map) {
    auto it = shards.find(shard);
    if (it == shards.end()) {
      const std::string shard_path = (dir / shard).string();
      if (!is_file(shard_path))
        fail("{}: shard {} (holding tensor '{}') is missing: download it again", index_path,
             shard_path, name);
      files_.push_back(std::make_unique<SafetensorsFile>(shard_path));
      it = shards.emplace(shard, files_.back().get()).first;
    }
    const WeightInfo* info = it->second->find(name);
    if (info == nullptr)
      fail("{}: tensor '{}' is listed in shard {}, but that file has no such tensor: the "
           "index and shards do not match; download them again",
           index_path, name, it->second->path());
    tensors_.emplace(name, info);
  }
  description_ = fmt::format("{} ({} shards)", index_path, files_.size());
}

const WeightInfo* SafetensorsSource::find(std::string_view name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second;
}

std::vector<std::string> SafetensorsSource::names() const {
  std::vector<std::string> names;
  names.reserve(tensors_.size());
  for (const auto& [name, info] : tensors_) names.push_back(name);
  return names;
}

std::string SafetensorsSource::description() const { return description_; }

bool has_safetensors(const std::string& dir) {
  return is_file(fs::path(dir) / kSafetensorsFileName) ||
         is_file(fs::path(dir) / kSafetensorsIndexName);
}

}  // namespace strata
