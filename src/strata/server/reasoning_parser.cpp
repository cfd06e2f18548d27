#include "strata/server/reasoning_parser.h"

#include "strata/server/stream_tags.h"

namespace strata::server {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kHarmonyMessage = "<|message|>";
constexpr std::string_view kHarmonyChannel = "<|channel|>";
constexpr std::string_view kHarmonyStart = "<|start|>";

constexpr std::string_view kContentTags[] = {kThinkOpen};
constexpr std::string_view kThinkingTags[] = {kThinkOpen, kThinkClose};
constexpr std::string_view kHeaderTags[] = {kHarmonyMessage};
constexpr std::string_view kBodyTags[] = {"<|end|>", "<|return|>", "<|call|>"};

std::string_view trim_end(std::string_view s) {
  const size_t end = s.find_last_not_of(" \t\r\n");
  return end == std::string_view::npos ? std::string_view() : s.substr(0, end + 1);
}

// The channel a harmony header names ("<|channel|>analysis", maybe with " to=..." after).
std::string_view harmony_channel(std::string_view header) {
  const size_t at = header.rfind(kHarmonyChannel);
  if (at == std::string_view::npos) return {};
  const std::string_view rest = header.substr(at + kHarmonyChannel.size());
  return rest.substr(0, rest.find_first_of(" <"));
}

}  // namespace

std::optional<ReasoningFormat> parse_reasoning_format(std::string_view name) {
  if (name == "qwen3") return ReasoningFormat::kQwen3;
  if (name == "deepseek_r1") return ReasoningFormat::kDeepSeekR1;
  if (name == "openai_gptoss" || name == "gpt-oss" || name == "gptoss" || name == "gpt_oss")
    return ReasoningFormat::kHarmony;
  return std::nullopt;
}

ReasoningParser::ReasoningParser(ReasoningFormat format, std::string_view prompt) {
  const std::string_view tail = trim_end(prompt);
  switch (format) {
    case ReasoningFormat::kNone:
      state_ = State::kAnswer;
      break;
    case ReasoningFormat::kQwen3:
    case ReasoningFormat::kDeepSeekR1:
      if (tail.ends_with(kThinkOpen)) state_ = State::kThinking;
      else if (tail.ends_with(kThinkClose)) state_ = State::kAnswer;
      else state_ = format == ReasoningFormat::kQwen3 ? State::kContent : State::kThinking;
      break;
    case ReasoningFormat::kHarmony:
      state_ = State::kHeader;
      if (tail.ends_with(kHarmonyMessage)) {  // the prompt opened a message: its header is there
        const size_t start = tail.rfind(kHarmonyStart);
        header_ = tail.substr(start == std::string_view::npos ? 0 : start, tail.size() - kHarmonyMessage.size());
        enter_body(pending_);
      }
      break;
  }
}

void ReasoningParser::enter_body(std::string& content) {
  if (header_.find("to=") != std::string::npos) {  // a recipient: a call, e.g. to=functions.get_weather
    state_ = State::kToolCall;
    content.append(header_);
    content.append(kHarmonyMessage);
  } else {
    state_ = harmony_channel(header_) == "analysis" ? State::kAnalysis : State::kFinal;
  }
  header_.clear();
}

void ReasoningParser::emit(std::string_view text, ReasoningDelta& out) {
  switch (state_) {
    case State::kThinking:
    case State::kAnalysis:
      out.reasoning.append(text);
      break;
    case State::kHeader:
      header_.append(text);
      break;
    default:
      out.content.append(text);
  }
}

void ReasoningParser::drain(ReasoningDelta& out) {
  for (;;) {
    std::span<const std::string_view> tags;
    if (state_ == State::kContent) tags = kContentTags;
    else if (state_ == State::kThinking) tags = kThinkingTags;
    else if (state_ == State::kHeader) tags = kHeaderTags;
    else if (state_ != State::kAnswer) tags = kBodyTags;  // kAnalysis, kFinal, kToolCall
    const TagMatch match = find_first_tag(pending_, tags);
    if (match.pos == std::string_view::npos) {
      const size_t keep = partial_tag_length(pending_, tags);
      emit(std::string_view(pending_).substr(0, pending_.size() - keep), out);
      pending_.erase(0, pending_.size() - keep);
      return;
    }
    emit(std::string_view(pending_).substr(0, match.pos), out);
    pending_.erase(0, match.pos + match.tag.size());
    if (match.tag == kThinkOpen) state_ = State::kThinking;  // a repeated <think> inside is dropped
    else if (match.tag == kThinkClose) state_ = State::kAnswer;
    else if (match.tag == kHarmonyMessage) enter_body(out.content);
    else {  // a harmony message ended
      if (state_ == State::kToolCall) out.content.append(match.tag);
      state_ = State::kHeader;
    }
  }
}

ReasoningDelta ReasoningParser::push(std::string_view text) {
  ReasoningDelta out;
  pending_.append(text);
  drain(out);
  return out;
}

ReasoningDelta ReasoningParser::finish() {
  ReasoningDelta out;
  emit(pending_, out);
  pending_.clear();
  // A header never followed by a message: plain text from a model not writing harmony, or
  // the markup of a message cut short (dropped).
  if (state_ == State::kHeader && header_.find("<|") == std::string::npos) out.content.append(header_);
  header_.clear();
  return out;
}

ReasoningDelta split_reasoning(ReasoningFormat format, std::string_view prompt, std::string_view text) {
  ReasoningParser parser(format, prompt);
  ReasoningDelta out = parser.push(text);
  ReasoningDelta rest = parser.finish();
  out.reasoning += rest.reasoning;
  out.content += rest.content;
  return out;
}

}  // namespace strata::server
