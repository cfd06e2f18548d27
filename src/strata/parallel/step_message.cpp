#include "strata/parallel/step_message.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "strata/core/error.h"
#include "strata/model/multimodal_prompt.h"

namespace strata {
namespace {

class Writer {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &value, sizeof(T));
  }
  template <typename T>
  void put_vector(const std::vector<T>& values) {
    put<uint32_t>(static_cast<uint32_t>(values.size()));
    for (const T& v : values) put(v);
  }
  void put_string(const std::string& text) {
    put<uint32_t>(static_cast<uint32_t>(text.size()));
    put_bytes(text.data(), text.size());
  }
  void put_bytes(const void* data, size_t n) {
    const size_t at = bytes.size();
    bytes.resize(at + n);
    std::memcpy(bytes.data() + at, data, n);
  }
  std::vector<uint8_t> bytes;
};

class Reader {
 public:
  explicit Reader(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    STRATA_CHECK_MSG(at_ + sizeof(T) <= bytes_.size(), "a rank message ends early ({} bytes)", bytes_.size());
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  template <typename T>
  std::vector<T> get_vector() {
    std::vector<T> values(get<uint32_t>());
    for (T& v : values) v = get<T>();
    return values;
  }
  std::string get_string() {
    std::string text(get<uint32_t>(), '\0');
    get_bytes(text.data(), text.size());
    return text;
  }
  void get_bytes(void* data, size_t n) {
    STRATA_CHECK_MSG(at_ + n <= bytes_.size(), "a rank message ends early ({} bytes)", bytes_.size());
    std::memcpy(data, bytes_.data() + at_, n);
    at_ += n;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const std::vector<uint8_t>& bytes_;
  size_t at_ = 0;
};

// A row's images: every grid (the positions after an image depend on all of them) and the
// embeddings of those whose image tokens this step computes; rank 0 alone runs the vision tower.
void put_images(Writer& w, const StepRow& row) {
  const std::vector<PromptImage>& images = row.multimodal->images();
  const int32_t begin = row.num_computed_tokens, end = begin + row.q_len();
  w.put<uint32_t>(static_cast<uint32_t>(images.size()));
  for (const PromptImage& image : images) {
    w.put(image.first_token);
    w.put(image.grid_t);
    w.put(image.grid_h);
    w.put(image.grid_w);
    const bool in_step = image.first_token < end && image.first_token + image.num_tokens() > begin;
    w.put<uint8_t>(in_step);
    if (!in_step) continue;
    STRATA_CHECK(image.embeds.dtype() == DType::kF32 && image.embeds.dim(0) == image.num_tokens());
    w.put<int64_t>(image.embeds.dim(1));
    w.put_bytes(image.embeds.data(), static_cast<size_t>(image.embeds.nbytes()));
  }
}

std::shared_ptr<const MultimodalPrompt> get_images(Reader& r) {
  std::vector<PromptImage> images(r.get<uint32_t>());
  for (PromptImage& image : images) {
    image.first_token = r.get<int32_t>();
    image.grid_t = r.get<int32_t>();
    image.grid_h = r.get<int32_t>();
    image.grid_w = r.get<int32_t>();
    if (r.get<uint8_t>() == 0) continue;  // not in this step: its embeddings are never read
    const int64_t hidden = r.get<int64_t>();
    image.embeds = Tensor::host(DType::kF32, {image.num_tokens(), hidden});
    r.get_bytes(image.embeds.data(), static_cast<size_t>(image.embeds.nbytes()));
  }
  return std::make_shared<const MultimodalPrompt>(std::move(images));
}

void put_row(Writer& w, const StepRow& row) {
  if (row.token_type_ids || row.pending_sample >= 0)
    fail("tensor parallelism runs rows whose tokens are known on the host; this step has {}",
         row.token_type_ids ? "token types" : "a token sampled on the device");
  w.put(row.seq_id);
  w.put_vector(row.token_ids);
  w.put(row.num_computed_tokens);
  w.put_vector(row.block_table);
  w.put(row.ssm_slot);
  w.put<uint32_t>(static_cast<uint32_t>(row.ssm_snapshots.size()));
  for (const SsmSnapshotRequest& s : row.ssm_snapshots) {
    w.put(s.after_tokens);
    w.put(s.slot);
  }
  w.put<uint8_t>(row.keep_intermediates);
  w.put(row.logits);
  w.put<uint8_t>(row.padding);
  w.put(row.lora_slot);
  w.put<uint8_t>(row.multimodal != nullptr);
  if (row.multimodal) put_images(w, row);
}

StepRow get_row(Reader& r) {
  StepRow row;
  row.seq_id = r.get<int64_t>();
  row.token_ids = r.get_vector<int32_t>();
  row.num_computed_tokens = r.get<int32_t>();
  row.block_table = r.get_vector<int32_t>();
  row.ssm_slot = r.get<int32_t>();
  row.ssm_snapshots.resize(r.get<uint32_t>());
  for (SsmSnapshotRequest& s : row.ssm_snapshots) {
    s.after_tokens = r.get<int32_t>();
    s.slot = r.get<int32_t>();
  }
  row.keep_intermediates = r.get<uint8_t>() != 0;
  row.logits = r.get<LogitsMode>();
  row.padding = r.get<uint8_t>() != 0;
  row.lora_slot = r.get<int32_t>();
  if (r.get<uint8_t>() != 0) row.multimodal = get_images(r);
  return row;
}

}  // namespace

std::vector<uint8_t> encode_rank_message(const RankMessage& message) {
  Writer w;
  w.put(message.kind);
  switch (message.kind) {
    case RankMessage::Kind::kStep:
      w.put(message.block_size);
      w.put(message.min_blocks_per_row);
      w.put<uint8_t>(message.micro_batch);
      w.put<uint32_t>(static_cast<uint32_t>(message.rows.size()));
      for (const StepRow& row : message.rows) put_row(w, row);
      break;
    case RankMessage::Kind::kCopyKvBlock:
      w.put(message.src_block);
      w.put(message.dst_block);
      break;
    case RankMessage::Kind::kSwapSpace:
      w.put(message.swap_space_bytes);
      w.put(message.num_host_blocks);
      w.put(message.num_host_slots);
      break;
    case RankMessage::Kind::kSwapOut:
    case RankMessage::Kind::kSwapIn:
      w.put_vector(message.device_blocks);
      w.put_vector(message.host_blocks);
      w.put(message.device_slot);
      w.put(message.host_slot);
      break;
    case RankMessage::Kind::kTakeSsmSlot:
    case RankMessage::Kind::kFreeSsmSlot:
    case RankMessage::Kind::kCopySsmSlot:
      w.put(message.ssm_slot);
      w.put(message.ssm_src_slot);
      break;
    case RankMessage::Kind::kRollBackSsmSlot:
      w.put(message.ssm_slot);
      w.put(message.num_verified);
      w.put(message.num_accepted);
      break;
    case RankMessage::Kind::kSnapshotRows: w.put(message.snapshot_rows); break;
    case RankMessage::Kind::kSnapshotOut:
    case RankMessage::Kind::kSnapshotIn:
      w.put(message.device_slot);
      w.put(message.host_slot);
      break;
    case RankMessage::Kind::kLoadLora:
      w.put(message.lora_slot);
      w.put_string(message.lora_name);
      w.put_string(message.lora_path);
      break;
    case RankMessage::Kind::kStop:
    case RankMessage::Kind::kFinishMicroBatch: break;
  }
  return std::move(w.bytes);
}

RankMessage decode_rank_message(const std::vector<uint8_t>& bytes) {
  Reader r(bytes);
  RankMessage message;
  message.kind = r.get<RankMessage::Kind>();
  switch (message.kind) {
    case RankMessage::Kind::kStep: {
      message.block_size = r.get<int64_t>();
      message.min_blocks_per_row = r.get<int64_t>();
      message.micro_batch = r.get<uint8_t>() != 0;
      message.rows.resize(r.get<uint32_t>());
      for (StepRow& row : message.rows) row = get_row(r);
      break;
    }
    case RankMessage::Kind::kCopyKvBlock:
      message.src_block = r.get<int32_t>();
      message.dst_block = r.get<int32_t>();
      break;
    case RankMessage::Kind::kSwapSpace:
      message.swap_space_bytes = r.get<int64_t>();
      message.num_host_blocks = r.get<int32_t>();
      message.num_host_slots = r.get<int32_t>();
      break;
    case RankMessage::Kind::kSwapOut:
    case RankMessage::Kind::kSwapIn:
      message.device_blocks = r.get_vector<int32_t>();
      message.host_blocks = r.get_vector<int32_t>();
      message.device_slot = r.get<int32_t>();
      message.host_slot = r.get<int32_t>();
      break;
    case RankMessage::Kind::kTakeSsmSlot:
    case RankMessage::Kind::kFreeSsmSlot:
    case RankMessage::Kind::kCopySsmSlot:
      message.ssm_slot = r.get<int32_t>();
      message.ssm_src_slot = r.get<int32_t>();
      break;
    case RankMessage::Kind::kRollBackSsmSlot:
      message.ssm_slot = r.get<int32_t>();
      message.num_verified = r.get<int32_t>();
      message.num_accepted = r.get<int32_t>();
      break;
    case RankMessage::Kind::kSnapshotRows: message.snapshot_rows = r.get<int32_t>(); break;
    case RankMessage::Kind::kSnapshotOut:
    case RankMessage::Kind::kSnapshotIn:
      message.device_slot = r.get<int32_t>();
      message.host_slot = r.get<int32_t>();
      break;
    case RankMessage::Kind::kLoadLora:
      message.lora_slot = r.get<int32_t>();
      message.lora_name = r.get_string();
      message.lora_path = r.get_string();
      break;
    case RankMessage::Kind::kStop:
    case RankMessage::Kind::kFinishMicroBatch: break;
    default: STRATA_CHECK_MSG(false, "unknown rank message kind {}", static_cast<int>(message.kind));
  }
  STRATA_CHECK_MSG(r.done(), "a rank message has {} bytes past its end", bytes.size());
  return message;
}

void send_to_ranks(Communicator& group, const RankMessage& message) {
  std::vector<uint8_t> bytes = encode_rank_message(message);
  group.broadcast_bytes(bytes, 0);
}

RankMessage receive_from_first_rank(Communicator& group) {
  std::vector<uint8_t> bytes;
  group.broadcast_bytes(bytes, 0);
  return decode_rank_message(bytes);
}

namespace {

int64_t value_of_rank(Communicator& group, int64_t value, int root) {
  std::vector<uint8_t> bytes(sizeof value);
  std::memcpy(bytes.data(), &value, sizeof value);
  group.broadcast_bytes(bytes, root);
  STRATA_CHECK(bytes.size() == sizeof value);
  int64_t theirs = 0;
  std::memcpy(&theirs, bytes.data(), sizeof theirs);
  return theirs;
}

}  // namespace

int64_t min_over_ranks(Communicator& group, int64_t value) {
  int64_t smallest = value;
  for (int root = 0; root < group.world_size(); ++root) smallest = std::min(smallest, value_of_rank(group, value, root));
  return smallest;
}

int64_t first_rank_value(Communicator& group, int64_t value) { return value_of_rank(group, value, 0); }

std::string first_error_over_ranks(Communicator& group, const std::string& error) {
  std::string first;
  for (int root = 0; root < group.world_size(); ++root) {
    std::vector<uint8_t> bytes(error.begin(), error.end());
    group.broadcast_bytes(bytes, root);
    if (first.empty()) first.assign(bytes.begin(), bytes.end());
  }
  return first;
}

}  // namespace strata
