// JsonSchemaGrammar: a byte-at-a-time recogniser of JSON that follows a schema, for
// response_format json_schema. The schema is compiled once (CompiledSchema); the recogniser
// is a small copyable state over it, like JsonGrammar, so JsonTokenMask can walk the
// vocabulary with it. Object properties come in schema order (as strict-mode generators
// write them): every `required` one, the others optional; no other keys unless the object
// is a map (additionalProperties: true or a schema, and no properties). Strings keep their
// length bounds and pattern or format (a regex the unescaped text matches whole; \u escapes
// are refused there), arrays their item counts, numbers their bounds (json_number.h).
// Whitespace between tokens is bounded (2 spaces, or one line break and an indentation of
// 4 spaces a level up to 32) so a small model cannot pad forever.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/engine/grammar.h"
#include "strata/engine/grammar_state.h"
#include "strata/engine/json_lexing.h"
#include "strata/engine/json_number.h"

namespace strata {

struct CompiledSchema {
  enum class Kind : uint8_t { kObject, kArray, kString, kNumber, kInteger, kChoice, kAnyOf };
  struct Property {
    std::string key;  // as JSON text, quotes included: "\"name\""
    int32_t node = -1;
    bool required = false;
  };
  struct Node {
    Kind kind = Kind::kString;
    std::vector<Property> properties;  // object: in schema order
    int32_t additional = -1;           // object: values under any other key (a map); -1: none
    int32_t items = -1;                // array: the items' node
    std::vector<std::string> choices;  // enum, const, boolean, null: JSON texts
    std::vector<int32_t> alternatives; // anyOf / type lists: told apart by first byte
    std::bitset<256> first_bytes;      // the bytes a value of this node starts with
    uint32_t min_length = 0, max_length = kUnbounded;  // string: in characters
    std::shared_ptr<const CompiledGrammar> pattern;    // string: pattern or format, matched whole
    uint32_t min_items = 0, max_items = kUnbounded;    // array
    NumberBounds bounds;                                // number, integer
    bool length_bounded() const { return min_length > 0 || max_length != kUnbounded; }
  };
  static constexpr uint32_t kUnbounded = UINT32_MAX;
  std::vector<Node> nodes;  // nodes may refer to each other in cycles
  int32_t root = 0;

  static constexpr size_t kMaxNodes = 4096;
  static constexpr size_t kMaxProperties = 1024;  // per object

  // Throws strata::Error naming the unsupported keyword or the malformed part. Ordered JSON:
  // properties keep the schema's order.
  static std::shared_ptr<const CompiledSchema> compile(const nlohmann::ordered_json& schema);
};

class JsonSchemaGrammar {
 public:
  static constexpr int kMaxDepth = 32;  // objects and arrays open at once

  // `schema` must outlive the grammar and its copies (the sequence holds it).
  explicit JsonSchemaGrammar(const CompiledSchema* schema) : schema_(schema) {}

  bool feed(unsigned char c);
  bool feed(std::string_view bytes);
  bool done() const { return done_; }
  // Equal keys: equal states (a TokenMaskCache key).
  std::string key() const;

 private:
  enum class Leaf : uint8_t { kNone, kString, kNumber, kChoice, kKey, kFreeKey };
  struct Frame {
    int32_t node = 0;
    uint8_t phase = 0;
    uint16_t index = 0;  // object: the current property (or the first one still allowed); array: items so far
  };
  template <typename R> friend bool json_lexing::feed_all(R&, std::string_view);
  bool step(unsigned char c);
  bool start_value(int32_t node, unsigned char c);
  bool value_done();  // the value of the top frame's slot (or of the root) ended
  bool frame_step(unsigned char c);
  bool object_step(Frame& f, const CompiledSchema::Node& node, unsigned char c);
  bool start_key(Frame& f, const CompiledSchema::Node& node);
  bool key_step(unsigned char c);
  bool leaf_step(unsigned char c);
  bool close_frame();
  bool space(unsigned char c);
  bool array_step(Frame& f, const CompiledSchema::Node& node, unsigned char c);
  bool string_step(unsigned char c);
  bool pattern_step(unsigned char c);

  const CompiledSchema* schema_;
  std::array<Frame, kMaxDepth> stack_{};
  uint8_t depth_ = 0;
  Leaf leaf_ = Leaf::kNone;
  BoundedNumber number_;
  json_lexing::StringBody string_;
  bool done_ = false;
  int32_t leaf_node_ = -1;  // kChoice, kString, kNumber: its node; kKey: the first property the key still matches
  uint32_t num_chars_ = 0;
  uint8_t run_spaces_ = 0, run_breaks_ = 0;  // the whitespace run between two tokens of JSON  // kString with length bounds: characters so far
  GrammarState pattern_;    // kString with a pattern: the unescaped text so far
  uint32_t text_pos_ = 0;
  uint64_t candidates_ = 0;  // kChoice: the choices still matching
};

}  // namespace strata
