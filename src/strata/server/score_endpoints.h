// vLLM's scoring routes on a pooling model. A classifier with one label (a cross-encoder)
// scores each (text_1, text_2) pair as one sequence through the tokenizer's pair template:
// sigmoid of its logit. An embedding model scores a pair by the cosine of their embeddings.
//   POST /v1/score     text_1 (string or list) against text_2 (string or list): 1:1, 1:N or N:N
//   POST /v1/rerank    Jina / Cohere shape: query, documents, top_n, return_documents
//   POST /v1/classify  a classifier's probabilities per input, with the top label
#pragma once

#include "strata/server/http_reply.h"
#include "strata/server/json_fields.h"
#include "strata/server/served_model.h"

namespace strata::server {

HttpReply score(const ServedModel& model, const Json& body, const ClientWatch& client);
HttpReply rerank(const ServedModel& model, const Json& body, const ClientWatch& client);
HttpReply classify(const ServedModel& model, const Json& body, const ClientWatch& client);

}  // namespace strata::server
