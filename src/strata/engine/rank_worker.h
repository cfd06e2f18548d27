// Ranks 1..n-1 of a tensor- or pipeline-parallel group: they hold no scheduler and no sequences;
// they run what rank 0's runner sends them (steps, KV-block copies, swaps to host memory) on their
// part of the model (their heads, or their stage's layers), until rank 0 says stop. Over pipeline
// stages a thread reads rank 0's messages as they come (ControlInbox), and stage 0's other ranks
// start and finish micro-batches as rank 0 does.
#pragma once

#include "strata/engine/model_runner.h"
#include "strata/parallel/communicator.h"

namespace strata {

class LoraSet;

// control: the group's message channel (ParallelGroup::control()). Returns when rank 0
// sends stop; throws an Error when rank 0 is gone. lora: the runner's adapters, when rank 0
// loads adapters into slots by path (each rank then loads its part of the same folder into the
// same slot); null: a rank that cannot load one fails the group when rank 0 asks it to.
void serve_first_rank(ModelRunner& runner, Communicator& control, LoraSet* lora = nullptr);

}  // namespace strata
