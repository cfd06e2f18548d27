#include "strata/engine/json_schema_grammar.h"

#include "strata/engine/json_lexing.h"

namespace strata {
namespace {

using namespace json_lexing;
using Kind = CompiledSchema::Kind;

// The last property a key may name after `lo`: properties are written in order, so none
// past the first required one.
size_t last_candidate(const CompiledSchema::Node& node, size_t lo) {
  for (size_t p = lo; p < node.properties.size(); ++p)
    if (node.properties[p].required) return p;
  return node.properties.size() - 1;
}

bool required_from(const CompiledSchema::Node& node, size_t lo) {
  for (size_t p = lo; p < node.properties.size(); ++p)
    if (node.properties[p].required) return true;
  return false;
}

}  // namespace

bool JsonSchemaGrammar::feed(unsigned char c) {
  const char one = static_cast<char>(c);
  return feed_all(*this, std::string_view(&one, 1));
}

bool JsonSchemaGrammar::feed(std::string_view bytes) { return feed_all(*this, bytes); }

bool JsonSchemaGrammar::step(unsigned char c) {
  if (done_) return is_space(c);
  if (leaf_ != Leaf::kNone) return leaf_step(c);
  if (depth_ > 0) return frame_step(c);
  if (is_space(c)) return true;  // before the root value
  return start_value(schema_->root, c);
}

bool JsonSchemaGrammar::value_done() {
  if (depth_ == 0) done_ = true;  // else the frame's phase already says what comes next
  return true;
}

bool JsonSchemaGrammar::start_value(int32_t node_index, unsigned char c) {
  const CompiledSchema::Node& node = schema_->nodes[node_index];
  switch (node.kind) {
    case Kind::kObject:
    case Kind::kArray:
      if (c != (node.kind == Kind::kObject ? '{' : '[') || depth_ == stack_.size()) return false;
      stack_[depth_++] = Frame{.node = node_index, .phase = 1, .index = 0};
      return true;
    case Kind::kString:
      if (c != '"') return false;
      leaf_ = Leaf::kString;
      string_ = {};
      return true;
    case Kind::kNumber:
    case Kind::kInteger:
      if (c != '-' && !is_digit(c)) return false;
      integer_ = node.kind == Kind::kInteger;
      number_ = number_start(c);
      leaf_ = Leaf::kNumber;
      return true;
    case Kind::kAnyOf:
      for (int32_t alternative : node.alternatives)
        if (schema_->nodes[alternative].first_bytes.test(c)) return start_value(alternative, c);
      return false;
    case Kind::kChoice:
      candidates_ = 0;
      for (size_t k = 0; k < node.choices.size(); ++k)
        if (static_cast<unsigned char>(node.choices[k][0]) == c) candidates_ |= uint64_t{1} << k;
      if (candidates_ == 0) return false;
      leaf_ = Leaf::kChoice;
      leaf_node_ = node_index;
      text_pos_ = 1;
      return true;
  }
  return false;
}

bool JsonSchemaGrammar::close_frame() {
  --depth_;
  return value_done();
}

// Array phases: 1 after '[', 2 after an item, 3 after ','.
bool JsonSchemaGrammar::frame_step(unsigned char c) {
  if (is_space(c)) return true;
  Frame& f = stack_[depth_ - 1];
  const CompiledSchema::Node& node = schema_->nodes[f.node];
  if (node.kind == Kind::kObject) return object_step(f, node, c);
  if (f.phase == 1 && c == ']') return close_frame();
  if (f.phase == 2) {
    if (c == ',') { f.phase = 3; return true; }
    return c == ']' && close_frame();
  }
  f.phase = 2;
  ++f.index;
  return start_value(node.items, c);
}

// Object phases: 1 after '{', 5 after ',' (a key must follow), 2 after a key, 3 after ':',
// 4 after a value. f.index: in 1 and 5 the first property still allowed; from 2 on the
// property being written. A map (node.additional) takes any key, any number of times.
bool JsonSchemaGrammar::object_step(Frame& f, const CompiledSchema::Node& node, unsigned char c) {
  const bool map = node.additional >= 0;
  switch (f.phase) {
    case 1:
    case 5:
      if (c == '}' && f.phase == 1 && (map || !required_from(node, f.index))) return close_frame();
      return c == '"' && start_key(f, node);
    case 2: if (c != ':') return false; f.phase = 3; return true;
    case 3: f.phase = 4; return start_value(map ? node.additional : node.properties[f.index].node, c);
    default:
      if (c == '}' && (map || !required_from(node, f.index + 1u))) return close_frame();
      if (c != ',' || (!map && f.index + 1u >= node.properties.size())) return false;
      if (!map) ++f.index;
      f.phase = 5;
      return true;
  }
}

// After a key's opening quote.
bool JsonSchemaGrammar::start_key(Frame& f, const CompiledSchema::Node& node) {
  if (node.additional >= 0) {
    leaf_ = Leaf::kFreeKey;
    string_ = {};
    return true;
  }
  if (f.index >= node.properties.size()) return false;
  leaf_ = Leaf::kKey;
  leaf_node_ = f.index;
  text_pos_ = 1;
  return true;
}

// Inside a listed key: leaf_node_ is the first candidate property whose key starts with the
// bytes read so far (keys end in a quote, so none is a prefix of another).
bool JsonSchemaGrammar::key_step(unsigned char c) {
  Frame& f = stack_[depth_ - 1];
  const CompiledSchema::Node& node = schema_->nodes[f.node];
  const std::string& matched = node.properties[static_cast<size_t>(leaf_node_)].key;
  const size_t last = last_candidate(node, f.index);
  for (size_t p = static_cast<size_t>(leaf_node_); p <= last; ++p) {
    const std::string& key = node.properties[p].key;
    if (key.size() <= text_pos_ || static_cast<unsigned char>(key[text_pos_]) != c ||
        key.compare(0, text_pos_, matched, 0, text_pos_) != 0)
      continue;
    leaf_node_ = static_cast<int32_t>(p);
    if (++text_pos_ == key.size()) {
      leaf_ = Leaf::kNone;
      f.index = static_cast<uint16_t>(p);
      f.phase = 2;
    }
    return true;
  }
  return false;
}

bool JsonSchemaGrammar::leaf_step(unsigned char c) {
  switch (leaf_) {
    case Leaf::kKey: return key_step(c);
    case Leaf::kFreeKey:
    case Leaf::kString:
      switch (string_.step(c)) {
        case StringBody::Step::kTaken: return true;
        case StringBody::Step::kRefused: return false;
        case StringBody::Step::kClosed: break;
      }
      if (leaf_ == Leaf::kFreeKey) {
        leaf_ = Leaf::kNone;
        stack_[depth_ - 1].phase = 2;
        return true;
      }
      leaf_ = Leaf::kNone;
      return value_done();
    case Leaf::kChoice: {
      const std::vector<std::string>& choices = schema_->nodes[leaf_node_].choices;
      uint64_t next = 0;
      bool complete = false;
      for (size_t k = 0; k < choices.size(); ++k)
        if ((candidates_ >> k & 1) && text_pos_ < choices[k].size() &&
            static_cast<unsigned char>(choices[k][text_pos_]) == c) {
          next |= uint64_t{1} << k;
          complete = complete || text_pos_ + 1 == choices[k].size();
        }
      if (next == 0) return false;
      candidates_ = next;
      ++text_pos_;
      if (complete) { leaf_ = Leaf::kNone; return value_done(); }
      return true;
    }
    case Leaf::kNumber:
      switch (number_step(number_, c, integer_)) {
        case NumberStep::kTaken: return true;
        case NumberStep::kRefused: return false;
        case NumberStep::kEnded: break;
      }
      leaf_ = Leaf::kNone;
      value_done();
      return step(c);  // the byte after the number, read where the number ended
    case Leaf::kNone: break;
  }
  return false;
}

}  // namespace strata
