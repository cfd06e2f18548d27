// JsonSchemaGrammar: a byte-at-a-time recogniser of JSON that follows a schema, for
// response_format json_schema. The schema is compiled once (CompiledSchema); the recogniser
// is a small copyable state over it, like JsonGrammar, so JsonTokenMask can walk the
// vocabulary with it. Objects are written with every listed property, in schema order (what
// OpenAI's strict mode asks: all properties required, no others).
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/engine/json_lexing.h"

namespace strata {

struct CompiledSchema {
  enum class Kind : uint8_t { kObject, kArray, kString, kNumber, kInteger, kChoice, kAnyOf };
  struct Node {
    Kind kind = Kind::kString;
    std::vector<std::pair<std::string, int32_t>> properties;  // object: ("\"key\"", node)
    int32_t items = -1;                                       // array: the items' node
    std::vector<std::string> choices;                         // enum, const, boolean, null: JSON texts
    std::vector<int32_t> alternatives;                        // anyOf / type lists: told apart by first byte
    std::bitset<256> first_bytes;                             // the bytes a value of this node starts with
  };
  std::vector<Node> nodes;  // nodes[0] is the root

  // Throws strata::Error naming the unsupported keyword or the malformed part. Ordered JSON:
  // properties keep the schema's order.
  static std::shared_ptr<const CompiledSchema> compile(const nlohmann::ordered_json& schema);
};

class JsonSchemaGrammar {
 public:
  // `schema` must outlive the grammar and its copies (the sequence holds it).
  explicit JsonSchemaGrammar(const CompiledSchema* schema) : schema_(schema) {}

  bool feed(unsigned char c);
  bool feed(std::string_view bytes);
  bool done() const { return done_; }

 private:
  enum class Leaf : uint8_t { kNone, kString, kNumber, kChoice, kKey };
  struct Frame {
    int32_t node = 0;
    uint8_t phase = 0;
    uint16_t index = 0;  // object: the current property; array: items so far
  };
  template <typename R> friend bool json_lexing::feed_all(R&, std::string_view);
  bool step(unsigned char c);
  bool start_value(int32_t node, unsigned char c);
  bool value_done();  // the value of the top frame's slot (or of the root) ended
  bool frame_step(unsigned char c);
  bool leaf_step(unsigned char c);

  const CompiledSchema* schema_;
  std::array<Frame, 24> stack_{};
  uint8_t depth_ = 0;
  Leaf leaf_ = Leaf::kNone;
  json_lexing::Number number_ = json_lexing::Number::kSign;
  json_lexing::StringBody string_;
  bool integer_ = false, started_ = false, done_ = false;
  int32_t leaf_node_ = -1;
  uint32_t text_pos_ = 0;
  uint64_t candidates_ = 0;  // kChoice: the choices still matching
};

}  // namespace strata
