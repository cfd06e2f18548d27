#include "strata/weights/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "strata/core/error.h"

namespace strata {

namespace {

using json = nlohmann::json;

struct DTypeName {
  std::string_view name;
  DType dtype;
};

// BOOL is stored one byte per value, so it reads as U8.
constexpr DTypeName kDTypeNames[] = {
    {"F32", DType::kF32}, {"F16", DType::kF16}, {"BF16", DType::kBF16}, {"I32", DType::kI32},
    {"I64", DType::kI64}, {"I8", DType::kI8},   {"U8", DType::kU8},     {"BOOL", DType::kU8},
    {"F8_E4M3", DType::kF8_E4M3},
};
constexpr std::string_view kSupportedDTypes = "F32, F16, BF16, I32, I64, I8, U8, BOOL, F8_E4M3";

// Where the header and the data section lie in the file.
struct Layout {
  uint64_t header_bytes = 0;
  uint64_t data_begin = 0;  // offset of the data section in the file
  uint64_t data_bytes = 0;
};

// A tensor's byte range inside the data section, for the overlap and bounds checks.
struct Range {
  uint64_t begin = 0;
  uint64_t end = 0;
  size_t tensor = 0;  // index into tensors_
};

Layout read_layout(const MappedFile& file) {
  const uint64_t file_bytes = static_cast<uint64_t>(file.size());
  if (file_bytes < 8)
    fail("{}: the file is {} bytes, too short for a safetensors header (8-byte length, then "
         "JSON): the file is truncated or not a safetensors file",
         file.path(), file_bytes);
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | file.data()[i];
  if (header_bytes > static_cast<uint64_t>(kMaxSafetensorsHeaderBytes))
    fail("{}: header length {} is over the {}-byte limit: the file is corrupt or not a "
         "safetensors file",
         file.path(), header_bytes, kMaxSafetensorsHeaderBytes);
  if (header_bytes > file_bytes - 8)
    fail("{}: header length {} runs past the end of the file (size {}): the file is "
         "truncated; download it again",
         file.path(), header_bytes, file_bytes);
  return {header_bytes, 8 + header_bytes, file_bytes - 8 - header_bytes};
}

json parse_header(const MappedFile& file, const Layout& layout) {
  const char* begin = reinterpret_cast<const char*>(file.data()) + 8;
  std::set<std::string> keys;
  std::string duplicate;
  // nlohmann keeps the last of two equal keys; a checkpoint naming a tensor twice is corrupt.
  auto on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && duplicate.empty() &&
        !keys.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header;
  try {
    header = json::parse(begin, begin + layout.header_bytes, on_event);
  } catch (const json::exception& e) {
    fail("{}: the header is not valid JSON ({}): the file is corrupt or not a safetensors file",
         file.path(), e.what());
  }
  if (!header.is_object())
    fail("{}: the header is JSON {}, not an object: the file is corrupt or not a safetensors "
         "file",
         file.path(), header.type_name());
  if (!duplicate.empty())
    fail("{}: the header names tensor '{}' twice: the file is corrupt", file.path(), duplicate);
  return header;
}

DType parse_dtype(const std::string& path, const std::string& name, const json& value) {
  if (!value.is_string())
    fail("{}: tensor '{}' has dtype {}, not a string: the file is corrupt", path, name,
         value.dump());
  const std::string& text = value.get_ref<const std::string&>();
  for (const DTypeName& entry : kDTypeNames)
    if (entry.name == text) return entry.dtype;
  fail("{}: tensor '{}' has dtype {}, which Strata does not support (supported: {}); convert "
       "the checkpoint to one of these",
       path, name, text, kSupportedDTypes);
}

Shape parse_shape(const std::string& path, const std::string& name, const json& value) {
  if (!value.is_array())
    fail("{}: tensor '{}' has shape {}, not a list of sizes: the file is corrupt", path, name,
         value.dump());
  if (value.size() > static_cast<size_t>(kMaxRank))
    fail("{}: tensor '{}' has shape {} of rank {}, more than the {} dimensions Strata "
         "supports",
         path, name, value.dump(), value.size(), kMaxRank);
  Shape shape;
  for (const json& dim : value) {
    if (!dim.is_number_unsigned() ||
        dim.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail("{}: tensor '{}' has shape {}: sizes must be non-negative integers; the file is "
           "corrupt",
           path, name, value.dump());
    shape.dims[shape.rank++] = dim.get<int64_t>();
  }
  return shape;
}

// Bytes of `shape` x `dtype`, or nullopt when that overflows 64 bits.
std::optional<uint64_t> tensor_bytes(const Shape& shape, DType dtype) {
  uint64_t bytes = static_cast<uint64_t>(dtype_block_bytes(dtype));
  for (int i = 0; i < shape.rank; ++i)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(shape.dims[i]), &bytes))
      return std::nullopt;
  return bytes;
}

Range parse_offsets(const std::string& path, const WeightInfo& info, const json& value,
                    std::string_view dtype_text) {
  if (!value.is_array() || value.size() != 2 || !value[0].is_number_unsigned() ||
      !value[1].is_number_unsigned())
    fail("{}: tensor '{}' has data_offsets {}, not [begin, end] byte offsets: the file is "
         "corrupt",
         path, info.name, value.dump());
  const Range range{value[0].get<uint64_t>(), value[1].get<uint64_t>()};
  if (range.begin > range.end)
    fail("{}: tensor '{}' has data_offsets [{}, {}] with begin after end: the file is corrupt",
         path, info.name, range.begin, range.end);
  const std::optional<uint64_t> expected = tensor_bytes(info.shape, info.dtype);
  if (expected != range.end - range.begin)
    fail("{}: tensor '{}' has data_offsets [{}, {}] ({} bytes), but shape {} of {} needs {} "
         "bytes: the file is corrupt",
         path, info.name, range.begin, range.end, range.end - range.begin, info.shape.str(),
         dtype_text, expected ? std::to_string(*expected) : "more than 2^64");
  return range;
}

std::map<std::string, std::string> parse_metadata(const std::string& path, const json& value) {
  if (!value.is_object())
    fail("{}: __metadata__ is {}, not a map of strings: the file is corrupt", path,
         value.type_name());
  std::map<std::string, std::string> metadata;
  for (const auto& [key, entry] : value.items()) {
    if (!entry.is_string())
      fail("{}: __metadata__ key '{}' holds {}, not a string: the file is corrupt", path, key,
           entry.dump());
    metadata[key] = entry.get<std::string>();
  }
  return metadata;
}

const json& require_field(const std::string& path, const std::string& name, const json& entry,
                          const char* field) {
  const auto it = entry.find(field);
  if (it == entry.end())
    fail("{}: tensor '{}' has no '{}' in the header: the file is corrupt", path, name, field);
  return *it;
}

// Sorted by begin, every non-empty range must end inside the data section and start at
// or after the end of every range before it.
void check_ranges(const std::string& path, const Layout& layout, std::vector<Range> ranges,
                  const std::vector<WeightInfo>& tensors) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  const Range* furthest = nullptr;  // the range seen so far that ends last
  for (const Range& range : ranges) {
    if (range.begin == range.end) continue;  // empty tensors hold no bytes
    if (range.end > layout.data_bytes)
      fail("{}: tensor '{}' has data_offsets [{}, {}] past the end of the file (size {}, data "
           "section {} bytes): the file is truncated; download it again",
           path, tensors[range.tensor].name, range.begin, range.end,
           layout.data_begin + layout.data_bytes, layout.data_bytes);
    if (furthest != nullptr && range.begin < furthest->end)
      fail("{}: tensors '{}' (data_offsets [{}, {}]) and '{}' (data_offsets [{}, {}]) overlap: "
           "the file is corrupt",
           path, tensors[furthest->tensor].name, furthest->begin, furthest->end,
           tensors[range.tensor].name, range.begin, range.end);
    if (furthest == nullptr || range.end > furthest->end) furthest = &range;
  }
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(path) {
  const Layout layout = read_layout(file_);
  const json header = parse_header(file_, layout);
  std::vector<Range> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      metadata_ = parse_metadata(path, entry);
      continue;
    }
    if (!entry.is_object())
      fail("{}: tensor '{}' has header entry {}, not an object: the file is corrupt", path, name,
           entry.dump());
    WeightInfo info{.name = name, .file = path};
    const json& dtype = require_field(path, name, entry, "dtype");
    info.dtype = parse_dtype(path, name, dtype);
    info.shape = parse_shape(path, name, require_field(path, name, entry, "shape"));
    Range range = parse_offsets(path, info, require_field(path, name, entry, "data_offsets"),
                                dtype.get_ref<const std::string&>());
    range.tensor = tensors_.size();
    ranges.push_back(range);
    tensors_.push_back(std::move(info));
  }
  check_ranges(path, layout, ranges, tensors_);
  for (const Range& range : ranges) {
    tensors_[range.tensor].data = file_.data() + layout.data_begin + range.begin;
    index_.emplace(tensors_[range.tensor].name, range.tensor);
  }
}

const WeightInfo* SafetensorsFile::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

std::string_view safetensors_dtype_name(DType dtype) {
  for (const DTypeName& entry : kDTypeNames)
    if (entry.dtype == dtype) return entry.name;
  fail("safetensors cannot hold dtype {} (supported: F32, F16, BF16, I32, I64, I8, U8, F8_E4M3)",
       dtype_name(dtype));
}

}  // namespace strata
