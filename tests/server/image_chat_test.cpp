// /v1/chat/completions with image_url parts on the qwen3_5_vision fixture (a real engine on the
// CPU, and as Cuda/ImageChat on a GPU, where the HTTP threads encode on the tower's own stream):
// a data: URL of the fixture's PNG answers what the engine gives for the same prompt with the
// image encoded directly, file:// URLs only under --allowed-local-media-path, and every
// malformed or over-limit image a clear 400 with the server still answering afterwards.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "engine/engine_test_support.h"
#include "model/vision_fixture_support.h"
#include "strata/engine/engine.h"
#include "strata/image/image_processor.h"
#include "strata/model/model_loader.h"
#include "strata/model/vision/vision_tower.h"
#include "strata/server/engine_service.h"
#include "strata/server/http_server.h"
#include "strata/server/json_fields.h"
#include "strata/server/vision_prompt.h"
#include "strata/text/load_tokenizer.h"
#include "test_support.h"

namespace strata::server {
namespace {

std::string base64(const std::vector<uint8_t>& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t n = (bytes[i] << 16) | ((i + 1 < bytes.size() ? bytes[i + 1] : 0) << 8) |
                       (i + 2 < bytes.size() ? bytes[i + 2] : 0);
    for (size_t k = 0; k < 4; ++k) out += k <= (bytes.size() - i) ? kAlphabet[(n >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The parameter is the backend: "cpu" or "cuda" (skipped without a GPU).
class ImageChat : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const bool gpu = GetParam() == "cuda";
    backend_ = gpu ? make_cuda_backend(0) : make_cpu_backend(2);
    if (!backend_) GTEST_SKIP() << "no CUDA GPU visible: CUDA image chat tests skipped";
    loaded_ = load_model({.model_path = fixture_.dir}, *backend_);
    runner_ = std::make_unique<ModelRunner>(*loaded_.model, *backend_,
                                            gpu ? RunnerOptions{.num_kv_blocks = 64} : RunnerOptions{});
    // bf16 on a GPU: a prefix hit computes the rest in other shapes, so the routes compared below
    // could differ by a near-tie; without caching the same prompt runs the same kernels.
    engine_ = std::make_unique<Engine>(*runner_, *tokenizer_, std::vector<int32_t>{2},
                                       EngineOptions{.enable_prefix_caching = !gpu});
    service_ = std::make_unique<EngineService>(*engine_);
    options_.port = 0;
    options_.num_http_threads = 2;
    options_.images = {.max_images_per_prompt = 2, .max_image_pixels = 100 * 100,
                       .allowed_local_media_path = fixture_.dir};
    vision_ = {.tower = loaded_.model->vision_tower(), .processor = read_image_processor_config(fixture_.dir),
               .image_token_id = test::kImageTokenId, .limits = options_.images};
    model_ = {.service = service_.get(), .tokenizer = tokenizer_.get(), .served_name = "m", .accepted_names = {"m"},
              .vocab_size = loaded_.config.vocab_size, .vision = &vision_};
    server_ = std::make_unique<HttpServer>(model_, options_);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->serve(); });
  }
  void TearDown() override {
    if (!server_) return;  // skipped
    server_->stop();
    thread_.join();
  }
  std::pair<int, Json> chat(const Json& content) {
    const Json body{{"model", "m"}, {"max_tokens", 4}, {"temperature", 0},
                    {"messages", {{{"role", "user"}, {"content", content}}}}};
    httplib::Client client("127.0.0.1", port_);
    auto res = client.Post("/v1/chat/completions", body.dump(), "application/json");
    EXPECT_TRUE(res);
    return {res ? res->status : 0, res ? Json::parse(res->body, nullptr, false) : Json()};
  }
  // A POST's reply as JSON; a status other than 200 fails the test.
  Json post_ok(const std::string& path, const Json& body) {
    httplib::Client client("127.0.0.1", port_);
    auto res = client.Post(path, body.dump(), "application/json");
    EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no reply");
    return res ? Json::parse(res->body, nullptr, false) : Json();
  }
  // The chat reply to "Look: " and image 0: what the other routes must answer.
  Json look_at_image_0() {
    const auto [status, reply] = chat(Json::array({{{"type", "text"}, {"text", "Look: "}}, image_part(png_data_url(0))}));
    EXPECT_EQ(status, 200);
    return reply;
  }
  static Json image_part(const std::string& url) { return {{"type", "image_url"}, {"image_url", {{"url", url}}}}; }
  std::string png_data_url(int j) const {
    return "data:image/png;base64," + base64(read_bytes(fixture_.dir + "/image_" + std::to_string(j) + ".png"));
  }

  test::VisionFixture fixture_ = test::load_vision_fixture();
  std::unique_ptr<Backend> backend_;
  LoadedModel loaded_;
  std::unique_ptr<text::Tokenizer> tokenizer_ = text::load_tokenizer(fixture_.dir);
  std::unique_ptr<ModelRunner> runner_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineService> service_;
  ServerOptions options_;
  VisionInput vision_;
  ServedModel model_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_P(ImageChat, DataUrlAnswersAsTheEngineDoesWithTheImage) {
  const auto [status, reply] = chat({{{"type", "text"}, {"text", "Look: "}}, image_part(png_data_url(0))});
  ASSERT_EQ(status, 200) << reply.dump();
  // The same prompt through the engine directly: the template's text, 6 placeholders, the image.
  const std::string prompt = "<|im_start|>user\nLook: <|vision_start|><|image_pad|><|vision_end|><|im_end|>\n"
                             "<|im_start|>assistant\n";
  const VisionPrompt direct = encode_with_images(vision_, *tokenizer_, prompt, {png_data_url(0)}, "messages");
  EXPECT_EQ(std::count(direct.ids.begin(), direct.ids.end(), test::kImageTokenId), 6);
  GenerationRequest request{.prompt_ids = direct.ids, .max_tokens = 4, .images = direct.images};
  request.sampling.temperature = 0;
  std::vector<int32_t> want;
  const std::shared_ptr<RequestStream> stream = engine_->submit(request);
  for (bool finished = false; !finished;) {
    const std::optional<RequestUpdate> update = stream->pop(std::chrono::milliseconds(100));
    if (!update) continue;
    for (const ChoiceDelta& d : update->deltas) want.insert(want.end(), d.token_ids.begin(), d.token_ids.end());
    finished = update->finished;
  }
  ASSERT_EQ(want.size(), 4u);
  EXPECT_EQ(reply["choices"][0]["message"]["content"].get<std::string>(), tokenizer_->decode(want, true));
  EXPECT_EQ(reply["usage"]["prompt_tokens"].get<size_t>(), direct.ids.size());
}

TEST_P(ImageChat, FileUrlsOnlyUnderTheAllowedFolder) {
  const auto [ok_status, ok_reply] = chat(Json::array({image_part("file://" + fixture_.dir + "/image_0.png")}));
  EXPECT_EQ(ok_status, 200) << ok_reply.dump();
  const auto [status, reply] = chat(Json::array({image_part("file://" + fixture_.dir + "/../qwen3_5/config.json")}));
  EXPECT_EQ(status, 400) << reply.dump();
  EXPECT_NE(reply["error"]["message"].get<std::string>().find("allowed media folder"), std::string::npos);
}

TEST_P(ImageChat, BadImagesAreClear400s) {
  const std::vector<std::pair<Json, std::string>> cases = {
      {Json::array({image_part("https://example.com/cat.png")}), "fetches no remote images"},
      {Json::array({image_part("data:image/png;base64,@@@")}), "not valid base64"},
      {Json::array({image_part("data:image/png;base64," + base64({1, 2, 3, 4, 5}))}), "JPEG, PNG or WebP"},
      {Json::array({image_part(png_data_url(1))}), "--max-image-pixels"},  // 131 x 83 over 100 x 100
      {Json::array({image_part(png_data_url(0)), image_part(png_data_url(0)), image_part(png_data_url(0))}),
       "--limit-mm-per-prompt"},
      {Json::array({{{"type", "image_url"}}}), "image part reads"},
  };
  for (const auto& [content, needle] : cases) {
    const auto [status, reply] = chat(content);
    EXPECT_EQ(status, 400) << needle;
    EXPECT_NE(reply.dump().find(needle), std::string::npos) << reply.dump();
  }
  const auto [last_status, last_reply] = chat(Json::array({image_part(png_data_url(0))}));
  EXPECT_EQ(last_status, 200) << last_reply.dump();  // still serving
}

// /tokenize counts what the chat request would run: each image's placeholders, not one.
TEST_P(ImageChat, TokenizeGivesTheChatPromptsIds) {
  const Json content = Json::array({{{"type", "text"}, {"text", "Look: "}}, image_part(png_data_url(1))});
  const Json body{{"model", "m"}, {"messages", {{{"role", "user"}, {"content", content}}}}};
  httplib::Client client("127.0.0.1", port_);
  auto res = client.Post("/tokenize", body.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 400);  // image 1 is over this server's pixel limit
  options_.images.max_image_pixels = vision_.limits.max_image_pixels = 1 << 20;
  res = client.Post("/tokenize", body.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const auto ids = Json::parse(res->body)["tokens"].get<std::vector<int32_t>>();
  EXPECT_EQ(std::count(ids.begin(), ids.end(), test::kImageTokenId), 12);  // an 8 x 6 patch grid merged by 2
  const std::string prompt = "<|im_start|>user\nLook: <|vision_start|><|image_pad|><|vision_end|><|im_end|>\n"
                             "<|im_start|>assistant\n";
  EXPECT_EQ(ids, encode_with_images(vision_, *tokenizer_, prompt, {png_data_url(1)}, "messages").ids);
}

// Anthropic's image blocks (base64 sources) take the chat path's images: the same answer.
TEST_P(ImageChat, AnthropicImageBlocksAnswerAsChat) {
  const std::string png = png_data_url(0).substr(std::string("data:image/png;base64,").size());
  const Json block{{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", png}}}};
  const Json messages = {{{"role", "user"}, {"content", Json::array({{{"type", "text"}, {"text", "Look: "}}, block})}}};
  const Json reply = post_ok("/v1/messages", {{"model", "m"}, {"max_tokens", 4}, {"temperature", 0},
                                              {"messages", messages}});
  const Json want = look_at_image_0();
  EXPECT_EQ(reply["content"][0]["text"], want["choices"][0]["message"]["content"]);
  const Json count = post_ok("/v1/messages/count_tokens", {{"model", "m"}, {"messages", messages}});
  EXPECT_EQ(count["input_tokens"], want["usage"]["prompt_tokens"]);
}

// The Responses API's input_image parts take the chat path's images too.
TEST_P(ImageChat, ResponsesInputImagesAnswerAsChat) {
  const Json content = Json::array({{{"type", "input_text"}, {"text", "Look: "}},
                                    {{"type", "input_image"}, {"image_url", png_data_url(0)}}});
  const Json reply = post_ok("/v1/responses", {{"model", "m"}, {"max_output_tokens", 4}, {"temperature", 0},
                                               {"input", {{{"role", "user"}, {"content", content}}}}});
  EXPECT_EQ(reply["output"][0]["content"][0]["text"], look_at_image_0()["choices"][0]["message"]["content"]);
}

TEST_P(ImageChat, ModelsSayTheModelTakesImages) {
  httplib::Client client("127.0.0.1", port_);
  auto res = client.Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(Json::parse(res->body)["data"][0]["input_modalities"], Json::array({"text", "image"}));
}

INSTANTIATE_TEST_SUITE_P(OnCpu, ImageChat, ::testing::Values("cpu"));
INSTANTIATE_TEST_SUITE_P(Cuda, ImageChat, ::testing::Values("cuda"));

}  // namespace
}  // namespace strata::server
