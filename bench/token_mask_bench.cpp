// Token-mask cost per decode step at batch 32 on one core: 32 constrained sequences (a JSON
// schema, a regex, a GBNF grammar), each replaying a valid document token by token from a
// different offset; a step computes all 32 masks (OutputConstraint::allowed, through its
// per-state cache) and feeds each sequence its next token. A finished document starts a new
// request (a fresh constraint, cold cache). Prints the mean, p50 and p99 step time and the
// cost of masks computed cold (a trie walk) against cached ones.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "strata/engine/gbnf_compiler.h"
#include "strata/engine/json_token_mask.h"
#include "strata/engine/output_constraint.h"
#include "strata/engine/regex_compiler.h"
#include "strata/text/tokenizer.h"

namespace {

using namespace strata;
using Clock = std::chrono::steady_clock;

const char* kSchema = R"({"type": "object", "properties": {
  "name": {"type": "string", "maxLength": 40}, "age": {"type": "integer", "minimum": 0, "maximum": 150},
  "email": {"type": "string", "format": "email"}, "born": {"type": "string", "format": "date"},
  "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8}, "score": {"type": "number"}},
  "required": ["name", "age", "email", "born", "tags", "score"]})";
const char* kRegex = R"((Mr|Ms|Dr)\. [A-Z][a-z]{1,12} [A-Z][a-z]{1,15}, born \d{4}-\d{2}-\d{2}, phone \+\d{1,3} \d{3}-\d{4}, notes: [a-zA-Z ,.]{0,80})";
const char* kJsonGbnf = R"(
root   ::= object
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( string ":" ws value ( "," ws string ":" ws value )* )? "}" ws
array  ::= "[" ws ( value ( "," ws value )* )? "]" ws
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\"" ws
number ::= "-"? ( "0" | [1-9] [0-9]{0,15} ) ( "." [0-9]{1,16} )? ws
ws     ::= [ \t\n]{0,20}
)";

std::vector<std::string> schema_documents() {
  std::vector<std::string> out;
  const char* names[] = {"Alice Smith", "Bob", "Chen Wei", "Dmitri Ivanov"};
  for (int i = 0; i < 8; ++i)
    out.push_back(fmt::format(R"({{"name": "{}", "age": {}, "email": "user{}@example.com", "born": "19{}-0{}-1{}", )"
                              R"("tags": ["red", "blue{}"], "score": {}.{}}})",
                              names[i % 4], 20 + i * 7, i, 50 + i, 1 + i, i, i, i * 3, 25 + i));
  return out;
}

std::vector<std::string> regex_documents() {
  std::vector<std::string> out;
  for (int i = 0; i < 8; ++i)
    out.push_back(fmt::format("Dr. Anna Karenina{}, born 19{}-0{}-1{}, phone +{} 555-01{}{}, notes: met at the "
                              "station, quiet, reads a lot",
                              std::string(static_cast<size_t>(i % 3), 'x'), 60 + i, 1 + i, i, 1 + i, i, i));
  return out;
}

std::vector<std::string> grammar_documents() {
  std::vector<std::string> out;
  for (int i = 0; i < 8; ++i)
    out.push_back(fmt::format(R"({{"id": {}, "title": "Report number {}", "values": [1.5, -{}, 0], )"
                              R"("meta": {{"ok": true, "owner": null, "path": "a\\b\\n"}}}})",
                              i, i, i * 11));
  return out;
}

struct Stats {
  std::vector<double> step_us;
  double cold_us = 0, warm_us = 0;
  int64_t num_cold = 0, num_warm = 0;
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

// One constrained sequence replaying a document.
struct Replay {
  std::unique_ptr<OutputConstraint> constraint;
  std::vector<int32_t> tokens;
  size_t next = 0;
};

Stats run(const GenerationRequest& request, const std::vector<std::vector<int32_t>>& documents,
          const JsonTokenMask& mask, int batch, int num_steps) {
  std::vector<Replay> seqs(static_cast<size_t>(batch));
  for (int i = 0; i < batch; ++i) {
    Replay& r = seqs[static_cast<size_t>(i)];
    r.constraint = OutputConstraint::for_request(request);
    r.tokens = documents[static_cast<size_t>(i) % documents.size()];
    for (r.next = 0; r.next < static_cast<size_t>(i * 3) % r.tokens.size(); ++r.next)  // staggered starts
      r.constraint->feed(mask.token_text(r.tokens[r.next]));
  }
  Stats stats;
  for (int step = 0; step < num_steps; ++step) {
    double step_us = 0;
    for (Replay& r : seqs) {
      const auto t0 = Clock::now();
      const std::vector<uint32_t> bits = r.constraint->allowed(mask);
      const auto t1 = Clock::now();
      const int32_t token = r.tokens[r.next++];
      if (((bits[token / 32] >> (token % 32)) & 1u) == 0 || !r.constraint->feed(mask.token_text(token))) {
        fmt::print(stderr, "the document's token {} was masked out; the bench's documents do not fit\n", token);
        std::exit(1);
      }
      if (r.next == r.tokens.size()) {  // a new request on the same document
        r.constraint = OutputConstraint::for_request(request);
        r.next = 0;
      }
      step_us += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      const double mask_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
      (mask_us > 200 ? stats.cold_us : stats.warm_us) += mask_us;  // a cached mask is a copy: microseconds
      ++(mask_us > 200 ? stats.num_cold : stats.num_warm);
    }
    stats.step_us.push_back(step_us);
  }
  return stats;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("token mask cost per step");
  std::string tokenizer_path;
  int batch = 32, num_steps = 400;
  app.add_option("--tokenizer", tokenizer_path, "tokenizer.json (or its folder)")->required();
  app.add_option("--batch", batch, "sequences per step");
  app.add_option("--steps", num_steps, "steps to time");
  CLI11_PARSE(app, argc, argv);
  const auto tokenizer = text::Tokenizer::from_file(tokenizer_path);
  const auto t0 = Clock::now();
  const JsonTokenMask mask(*tokenizer);
  fmt::print("vocabulary {} tokens; trie built in {:.0f} ms\n", tokenizer->vocab_size(),
             std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  struct Case {
    const char* name;
    GenerationRequest request;
    std::vector<std::string> documents;
  };
  Case cases[3] = {{"json_schema", {}, schema_documents()}, {"regex", {}, regex_documents()},
                   {"grammar (JSON GBNF)", {}, grammar_documents()}};
  cases[0].request.json_schema = CompiledSchema::compile(nlohmann::ordered_json::parse(kSchema));
  cases[1].request.grammar = compile_regex(kRegex);
  cases[2].request.grammar = compile_gbnf(kJsonGbnf);
  for (Case& c : cases) {
    std::vector<std::vector<int32_t>> documents;
    for (const std::string& d : c.documents) documents.push_back(tokenizer->encode(d, false));
    const Stats s = run(c.request, documents, mask, batch, num_steps);
    double mean = 0;
    for (double v : s.step_us) mean += v / static_cast<double>(s.step_us.size());
    fmt::print("{:<20} batch {}: step mean {:.3f} ms, p50 {:.3f} ms, p99 {:.3f} ms; masks cold {} ({:.2f} ms each), "
               "cached {} ({:.1f} us each)\n",
               c.name, batch, mean / 1e3, percentile(s.step_us, 0.5) / 1e3, percentile(s.step_us, 0.99) / 1e3,
               s.num_cold, s.num_cold ? s.cold_us / static_cast<double>(s.num_cold) / 1e3 : 0.0, s.num_warm,
               s.num_warm ? s.warm_us / static_cast<double>(s.num_warm) : 0.0);
  }
  return 0;
}
