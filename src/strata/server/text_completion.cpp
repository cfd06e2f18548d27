#include "strata/server/text_completion.h"

#include <fmt/format.h>

#include "strata/server/api_error.h"
#include "strata/server/choice_output.h"
#include "strata/server/completion_request.h"
#include "strata/server/logprobs_json.h"
#include "strata/server/openai_objects.h"
#include "strata/server/prompt_logprobs_json.h"
#include "strata/server/random_id.h"

namespace strata::server {
namespace {

struct PreparedPrompt {
  std::vector<int32_t> ids;
  std::string text;  // for echo
  std::vector<PromptLogprob> logprobs;  // positions 1.., when asked for
};

PreparedPrompt prepare(const ServedModel& model, const PromptInput& input) {
  PreparedPrompt p;
  if (const auto* text = std::get_if<std::string>(&input)) {
    const text::Tokenizer& tokenizer = require_tokenizer(model, "prompt");
    p.text = *text;
    p.ids = tokenizer.encode(*text, /*add_special_tokens=*/true);
    for (int32_t id : p.ids)
      if (id >= model.vocab_size)
        throw bad_request(fmt::format("the prompt encodes to token id {}, outside the model's vocabulary of {}", id,
                                      model.vocab_size),
                          "prompt");
  } else {
    p.ids = std::get<std::vector<int32_t>>(input);
    p.text = model.tokenizer->decode(p.ids, /*skip_special_tokens=*/false);
  }
  return p;
}

Json token_ids_json(const std::vector<int32_t>& ids) { return Json(ids); }

class CompletionEventStream final : public EventSource {
 public:
  CompletionEventStream(const ServedModel& model, CompletionRequest request, std::vector<PreparedPrompt> prompts,
                        std::unique_ptr<GenerationRun> run, Envelope env)
      : model_(model), request_(std::move(request)), prompts_(std::move(prompts)), run_(std::move(run)),
        env_(std::move(env)), text_lengths_(static_cast<size_t>(run_->num_choices()), 0) {}

  bool next(std::string& out) override {
    if (!started_) {
      started_ = true;
      if (request_.echo)
        for (int32_t i = 0; i < run_->num_choices(); ++i) out += echo_chunk(i);
      return true;
    }
    const bool more = run_->poll(std::chrono::milliseconds(50), [&](int32_t i, ChoiceDelta& d) { on_delta(i, d, out); });
    if (more) return true;
    out += stream_end(*run_, env_, "text_completion", request_.include_usage);
    return false;
  }

 private:
  const PreparedPrompt& prompt_of(int32_t choice) const {
    return prompts_[static_cast<size_t>(choice / run_->choices_per_prompt())];
  }

  std::string chunk(Json choice) const {
    Json j = envelope_json(env_, "text_completion");
    j["choices"] = Json::array({std::move(choice)});
    if (request_.include_usage) j["usage"] = nullptr;
    return sse_event(j);
  }

  std::string echo_chunk(int32_t i) {
    text_lengths_[static_cast<size_t>(i)] = static_cast<int64_t>(prompt_of(i).text.size());
    Json c{{"index", i}, {"text", prompt_of(i).text}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
    if (request_.return_token_ids) c["prompt_token_ids"] = token_ids_json(prompt_of(i).ids);
    return chunk(std::move(c));
  }

  void on_delta(int32_t i, ChoiceDelta& d, std::string& out) {
    if (i < 0 || i >= run_->num_choices()) return;
    if (d.text.empty() && d.logprobs.empty() && d.finish_reason == FinishReason::kNone) return;
    int64_t& offset = text_lengths_[static_cast<size_t>(i)];
    Json c{{"index", i}, {"text", d.text}};
    c["logprobs"] = request_.fields.request.sampling.logprobs >= 0
                        ? completion_logprobs_json(model_, d.logprobs, offset) : Json(nullptr);
    c["finish_reason"] = finish_reason_json(d.finish_reason);
    if (d.finish_reason != FinishReason::kNone)
      c["stop_reason"] = d.stop_reason ? Json(*d.stop_reason) : Json(nullptr);
    if (request_.return_token_ids) c["token_ids"] = token_ids_json(d.token_ids);
    offset += static_cast<int64_t>(d.text.size());
    out += chunk(std::move(c));
  }

  const ServedModel& model_;
  CompletionRequest request_;
  std::vector<PreparedPrompt> prompts_;
  std::unique_ptr<GenerationRun> run_;
  Envelope env_;
  std::vector<int64_t> text_lengths_;
  bool started_ = false;
};

Json choice_json(const ServedModel& model, const ChoiceOutput& c, size_t index, const PreparedPrompt& prompt,
                 const CompletionRequest& request) {
  const std::string prefix = request.echo ? prompt.text : std::string();
  const SamplingParams& sampling = request.fields.request.sampling;
  Json choice{{"index", index}, {"text", prefix + c.text}};
  choice["logprobs"] = sampling.logprobs >= 0
                           ? completion_logprobs_json(model, c.logprobs, static_cast<int64_t>(prefix.size()))
                           : Json(nullptr);
  if (request.echo && sampling.logprobs >= 0)
    choice["logprobs"] = echo_logprobs_json(
        model, {.prompt_ids = prompt.ids, .entries = prompt.logprobs, .num_top = sampling.logprobs},
        std::move(choice["logprobs"]));
  if (request.prompt_logprobs >= 0)
    choice["prompt_logprobs"] = vllm_prompt_logprobs_json(model, prompt.logprobs, request.prompt_logprobs);
  choice["finish_reason"] = finish_reason_json(c.finish_reason);
  choice["stop_reason"] = c.stop_reason ? Json(*c.stop_reason) : Json(nullptr);
  if (request.return_token_ids) {
    choice["prompt_token_ids"] = token_ids_json(prompt.ids);
    choice["token_ids"] = token_ids_json(c.token_ids);
  }
  return choice;
}

}  // namespace

HttpReply text_completion(const ServedModel& model, const Json& body, const ClientWatch& client) {
  const std::optional<std::string> name = read_string(body, "model");
  const int32_t lora_slot = check_model_name(model, name ? &*name : nullptr);
  CompletionRequest request = read_completion_request(body, model.vocab_size);
  std::string answered_by = model.served_name;
  std::vector<PreparedPrompt> prompts;
  std::vector<GenerationRequest> requests;
  for (const PromptInput& input : request.prompts) {
    prompts.push_back(prepare(model, input));
    requests.push_back(fit_to_context(request.fields, prompts.back().ids,
                                      {.max_model_len = model.service->max_model_len(), .default_max_tokens = 16}));
    answered_by = apply_lora_choice(model, lora_slot, requests.back());
  }
  auto run = std::make_unique<GenerationRun>(*model.service, std::move(requests));
  Envelope env{.id = "cmpl-" + random_alnum(24), .created = unix_now(), .model = answered_by};
  if (request.stream)
    return {.events = std::make_shared<CompletionEventStream>(model, std::move(request), std::move(prompts),
                                                              std::move(run), env)};
  const std::vector<ChoiceOutput> choices = collect_choices(*run, client);
  for (size_t p = 0; p < prompts.size(); ++p) prompts[p].logprobs = run->prompt_logprobs(p);
  Json j = envelope_json(env, "text_completion");
  j["choices"] = Json::array();
  for (size_t i = 0; i < choices.size(); ++i)
    j["choices"].push_back(choice_json(model, choices[i], i, prompts[i / static_cast<size_t>(run->choices_per_prompt())], request));
  j["usage"] = usage_json(run->usage());
  return {.body = dump_json(j)};
}

}  // namespace strata::server
