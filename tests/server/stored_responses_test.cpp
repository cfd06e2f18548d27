// GET, DELETE and input_items of /v1/responses/{id} against a scripted engine: the stored
// object equals the create answer (whole and streamed), input items page by query, a deleted
// or unstored response is a 404 (and a 400 as previous_response_id), and bad queries, paths
// and methods get their 4xx.
#include <gtest/gtest.h>

#include "server/scripted_server_support.h"

namespace strata::server {
namespace {

using test::Reply;
using test::ScriptedServer;

Json create(ScriptedServer& server, const std::string& body) {
  const Reply reply = server.post("/v1/responses", body);
  EXPECT_EQ(reply.status, 200) << reply.body;
  return Json::parse(reply.body);
}

Json error_of(const Reply& reply) { return Json::parse(reply.body)["error"]; }

TEST(StoredResponsesTest, RetrieveAnswersTheCreateObject) {
  ScriptedServer server({});
  server.service().set_script({"Hi", " there."});
  const Json created = create(server, R"({"input": "Hello", "max_output_tokens": 3, "metadata": {"k": "v"}})");
  const Reply got = server.send("GET", "/v1/responses/" + created["id"].get<std::string>());
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(Json::parse(got.body), created);
  const std::vector<test::Event> events = server.stream("/v1/responses", R"({"input": "Hi", "stream": true})");
  const Json& streamed = events.back().data["response"];
  const Reply streamed_got = server.send("GET", "/v1/responses/" + streamed["id"].get<std::string>());
  EXPECT_EQ(Json::parse(streamed_got.body), streamed);
}

TEST(StoredResponsesTest, InputItemsPageByQuery) {
  ScriptedServer server({});
  server.service().set_script({"Hi", " there."});
  const Json created = create(server, R"({"input": [
      {"role": "user", "content": "one", "id": "msg_1"}, {"role": "assistant", "content": "two", "id": "msg_2"},
      {"role": "user", "content": "three", "id": "msg_3"}]})");
  const std::string base = "/v1/responses/" + created["id"].get<std::string>() + "/input_items";
  const auto ids = [&](const std::string& query) {
    const Reply reply = server.send("GET", base + query);
    EXPECT_EQ(reply.status, 200) << reply.body;
    const Json list = Json::parse(reply.body);
    std::string out;
    for (const Json& item : list["data"]) out += item["id"].get<std::string>() + " ";
    return out + (list["has_more"] == true ? "more" : "end");
  };
  EXPECT_EQ(ids(""), "msg_3 msg_2 msg_1 end");
  EXPECT_EQ(ids("?order=asc&limit=2"), "msg_1 msg_2 more");
  EXPECT_EQ(ids("?order=asc&limit=2&after=msg_2"), "msg_3 end");
  EXPECT_EQ(ids("?limit=1&after=msg_3"), "msg_2 more");
  const Json first = Json::parse(server.send("GET", base + "?order=asc&limit=1").body)["data"][0];
  EXPECT_EQ(first, Json::parse(R"({"id": "msg_1", "type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": "one"}], "status": "completed"})"));
  for (const auto& [query, param] : std::vector<std::pair<std::string, std::string>>{
           {"?limit=0", "limit"}, {"?limit=101", "limit"}, {"?limit=x", "limit"}, {"?order=up", "order"},
           {"?after=msg_9", "after"}, {"?include[]=message.input_image.image_url", "include"}, {"?bogus=1", "bogus"}}) {
    const Reply reply = server.send("GET", base + query);
    EXPECT_EQ(reply.status, 400) << query;
    EXPECT_EQ(error_of(reply)["param"], param) << reply.body;
  }
}

TEST(StoredResponsesTest, DeletedAndUnstoredResponsesAreGone) {
  ScriptedServer server({});
  server.service().set_script({"Hi", " there."});
  const std::string id = create(server, R"({"input": "Hello"})")["id"];
  const Reply deleted = server.send("DELETE", "/v1/responses/" + id);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(Json::parse(deleted.body), Json::parse(R"({"id": ")" + id + R"(", "object": "response", "deleted": true})"));
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/v1/responses/" + id}, {"DELETE", "/v1/responses/" + id},
           {"GET", "/v1/responses/" + id + "/input_items"}}) {
    const Reply reply = server.send(method, path);
    EXPECT_EQ(reply.status, 404) << method << " " << path;
    EXPECT_EQ(error_of(reply)["type"], "invalid_request_error");
    EXPECT_NE(error_of(reply)["message"].get<std::string>().find(id), std::string::npos) << reply.body;
  }
  const Reply follow_up = server.post("/v1/responses", R"({"input": "Hi", "previous_response_id": ")" + id + "\"}");
  EXPECT_EQ(follow_up.status, 400);
  EXPECT_EQ(error_of(follow_up)["code"], "previous_response_not_found");
  const std::string unstored = create(server, R"({"input": "Hello", "store": false})")["id"];
  EXPECT_EQ(server.send("GET", "/v1/responses/" + unstored).status, 404);
}

TEST(StoredResponsesTest, QueriesPathsAndMethodsRefused) {
  ScriptedServer server({});
  server.service().set_script({"Hi", " there."});
  const std::string id = create(server, R"({"input": "Hello"})")["id"];
  const Reply streamed = server.send("GET", "/v1/responses/" + id + "?stream=true");
  EXPECT_EQ(streamed.status, 400);
  EXPECT_EQ(error_of(streamed)["param"], "stream");
  EXPECT_EQ(server.send("GET", "/v1/responses/" + id + "?stream=false").status, 200);
  EXPECT_EQ(server.send("GET", "/v1/responses/" + id + "/input_items/x").status, 404);
  EXPECT_EQ(server.send("GET", "/v1/responses/" + id + "/other").status, 404);
  EXPECT_EQ(server.send("DELETE", "/v1/responses/" + id + "/input_items").status, 404);
  const Reply cancel = server.post("/v1/responses/" + id + "/cancel", "");
  EXPECT_EQ(cancel.status, 400);
  EXPECT_NE(error_of(cancel)["message"].get<std::string>().find("background=true"), std::string::npos);
  EXPECT_EQ(server.post("/v1/responses/resp_unknown/cancel", "").status, 404);
  const Reply list = server.send("GET", "/v1/responses");
  EXPECT_EQ(list.status, 405);
  EXPECT_EQ(list.allow, "POST");
  const Reply delete_model = server.send("DELETE", "/v1/models/m");
  EXPECT_EQ(delete_model.status, 405);
  EXPECT_EQ(delete_model.allow, "GET");
  EXPECT_EQ(server.send("GET", "/v1/responses/" + id).status, 200);  // still there
}

}  // namespace
}  // namespace strata::server
