#include "strata/engine/rank_worker.h"

#include "strata/parallel/step_message.h"

namespace strata {

void serve_first_rank(ModelRunner& runner, Communicator& group) {
  for (;;) {
    RankMessage message = receive_from_first_rank(group);
    switch (message.kind) {
      case RankMessage::Kind::kStop: return;
      case RankMessage::Kind::kCopyKvBlock: runner.copy_kv_block(message.src_block, message.dst_block); break;
      case RankMessage::Kind::kStep: {
        StepBatch step(std::move(message.rows), message.block_size, message.min_blocks_per_row);
        runner.execute_on_device(step);  // its logits are rank 0's to read
        break;
      }
    }
  }
}

}  // namespace strata
