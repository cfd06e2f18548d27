// A tiny GGUF writer for tests: metadata of any type and tensors given as raw block bytes.
// Header-only because only *_test.cpp files are globbed into the test binary.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "strata/weights/gguf_file.h"

namespace strata::test {

class GgufTestWriter {
 public:
  struct Tensor {
    std::string name;
    uint32_t ggml_type;
    std::vector<int64_t> ne;  // ggml order
    std::vector<uint8_t> data;
  };

  template <typename T> void add_scalar(const std::string& key, GgufType type, T value) {
    std::vector<uint8_t> payload(sizeof(T));
    std::memcpy(payload.data(), &value, sizeof(T));
    add_raw(key, type, payload);
  }
  void add_u32(const std::string& key, uint32_t v) { add_scalar(key, GgufType::kUint32, v); }
  void add_i32(const std::string& key, int32_t v) { add_scalar(key, GgufType::kInt32, v); }
  void add_u64(const std::string& key, uint64_t v) { add_scalar(key, GgufType::kUint64, v); }
  void add_f32(const std::string& key, float v) { add_scalar(key, GgufType::kFloat32, v); }
  void add_f64(const std::string& key, double v) { add_scalar(key, GgufType::kFloat64, v); }
  void add_bool(const std::string& key, bool v) { add_scalar(key, GgufType::kBool, uint8_t{v}); }
  void add_string(const std::string& key, const std::string& v) {
    std::vector<uint8_t> payload;
    put_string(payload, v);
    add_raw(key, GgufType::kString, payload);
  }
  void add_string_array(const std::string& key, const std::vector<std::string>& values) {
    std::vector<uint8_t> payload;
    put<uint32_t>(payload, static_cast<uint32_t>(GgufType::kString));
    put<uint64_t>(payload, values.size());
    for (const std::string& s : values) put_string(payload, s);
    add_raw(key, GgufType::kArray, payload);
  }
  template <typename T>
  void add_array(const std::string& key, GgufType element_type, const std::vector<T>& values) {
    std::vector<uint8_t> payload;
    put<uint32_t>(payload, static_cast<uint32_t>(element_type));
    put<uint64_t>(payload, values.size());
    for (const T& v : values) put<T>(payload, v);
    add_raw(key, GgufType::kArray, payload);
  }
  void add_raw(const std::string& key, GgufType type, const std::vector<uint8_t>& payload) {
    kvs_.push_back({key, type, payload});
  }
  void add_tensor(Tensor t) { tensors_.push_back(std::move(t)); }

  std::vector<uint8_t> bytes(uint32_t version = 3, int64_t alignment = 32) const {
    std::vector<uint8_t> out;
    put<uint32_t>(out, 0x46554747);
    put<uint32_t>(out, version);
    put<uint64_t>(out, tensors_.size());
    put<uint64_t>(out, kvs_.size());
    for (const Kv& kv : kvs_) {
      put_string(out, kv.key);
      put<uint32_t>(out, static_cast<uint32_t>(kv.type));
      out.insert(out.end(), kv.payload.begin(), kv.payload.end());
    }
    uint64_t offset = 0;
    for (const Tensor& t : tensors_) {
      put_string(out, t.name);
      put<uint32_t>(out, static_cast<uint32_t>(t.ne.size()));
      for (int64_t ne : t.ne) put<int64_t>(out, ne);
      put<uint32_t>(out, t.ggml_type);
      put<uint64_t>(out, offset);
      offset = align(offset + t.data.size(), alignment);
    }
    out.resize(align(out.size(), alignment), 0);
    for (const Tensor& t : tensors_) {
      out.insert(out.end(), t.data.begin(), t.data.end());
      if (&t != &tensors_.back()) out.resize(align(out.size(), alignment), 0);
    }
    return out;
  }

  static std::string write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  template <typename T> static void put(std::vector<uint8_t>& out, T v) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
  }
  static void put_string(std::vector<uint8_t>& out, const std::string& s) {
    put<uint64_t>(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
  }

 private:
  struct Kv {
    std::string key;
    GgufType type;
    std::vector<uint8_t> payload;
  };
  static uint64_t align(uint64_t v, int64_t a) { return (v + a - 1) / a * a; }

  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
};

}  // namespace strata::test
