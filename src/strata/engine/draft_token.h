// The draft a proposer appends from its logits row: drawn from the distribution the request's
// own sampling would use (penalties counting the drafts before it), so that rejection sampling
// keeps the target's distribution; greedy requests take the argmax.
#pragma once

#include <span>

#include "strata/engine/sequence.h"

namespace strata {

// logits: [vocab] of the position after seq's drafts so far. Appends to seq.draft_tokens and,
// for sampled requests, the draft's distribution to seq.draft_probs.
void append_draft_token(Sequence& seq, std::span<const float> logits);

}  // namespace strata
