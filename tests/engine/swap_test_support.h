// The swap exactness check the CPU and CUDA tests share: one sequence stepped alone by hand,
// swapped out mid-prefill and mid-decode while another sequence overwrites its blocks and
// slot, then swapped back in. Its rows have a never-preempted run's shapes, so every logit
// must be bit-equal to that run's (batches of other sizes may differ by an ulp).
#pragma once

#include "strata/backend/backend.h"
#include "strata/model/model.h"

namespace strata::test {

// gtest checks: two runners of `model` on `backend`, one never preempted.
void expect_swap_resumes_bit_for_bit(const Model& model, Backend& backend);

}  // namespace strata::test
